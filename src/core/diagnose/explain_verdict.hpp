#pragma once
// Inside `explain`: how a fingerprint confirms or rules out an explanation (a signature's
// `checks`). Pure.
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/diagnose/explain.hpp"
#include "core/knowledge/knowledge_base.hpp"

namespace td::explain_detail {

struct Verdict {
    bool decided = false;  // false: the fingerprint says nothing either way
    bool confirmed = false;
    std::string text;
};

Verdict run_check(const SignatureCheck& c, const std::map<std::string, std::string>& facts,
                  const nlohmann::json& fp, const KnowledgeBase& kb);

}  // namespace td::explain_detail
