#pragma once
// What the fuzz targets share: the repository's knowledge base and error signatures, loaded
// once (a target that cannot load them aborts: that is a broken build, not an input).
#include <cstdlib>
#include <string>

#include "core/diagnose/explain.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "engine/project_loader.hpp"

namespace td::fuzz {

inline const KnowledgeBase& kb() {
    static const KnowledgeBase loaded = [] {
        auto r = engine::load_knowledge_base(std::string(TORCHDOCK_SOURCE_DIR) + "/data");
        if (!r) std::abort();
        return r.value();
    }();
    return loaded;
}

inline const ErrorSignatures& signatures() {
    static const ErrorSignatures loaded = [] {
        auto r = engine::load_error_signatures(std::string(TORCHDOCK_SOURCE_DIR) + "/data");
        if (!r) std::abort();
        return r.value();
    }();
    return loaded;
}

}  // namespace td::fuzz
