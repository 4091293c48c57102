#include "engine/data_files.hpp"

#include "engine/project_loader.hpp"

namespace td::engine {

Result<DataFiles> load_data_files(const std::optional<std::string>& flag, DataNeeds needs) {
    DataFiles out;
    out.dir = find_data_dir(flag);
    auto kb = load_knowledge_base(out.dir);
    if (!kb) return kb.error();
    out.kb = std::move(kb.value());
    if (needs.signatures) {
        auto signatures = load_error_signatures(out.dir);
        if (!signatures) return signatures.error();
        out.signatures = std::move(signatures.value());
    }
    if (needs.forward_compat) {
        auto fc = load_forward_compat(out.dir);
        if (!fc) return fc.error();
        out.forward_compat = std::move(fc.value());
    }
    return out;
}

}  // namespace td::engine
