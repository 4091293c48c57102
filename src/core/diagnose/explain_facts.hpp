#pragma once
// Inside `explain`: the facts of an explanation. Values a log gave, derived further from
// the knowledge base (a driver floor for a CUDA version, the torch variants for an arch),
// and lookups into a fingerprint ("fp:a.b" names). Pure.
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnose/explain.hpp"
#include "core/knowledge/knowledge_base.hpp"

namespace td::explain_detail {

// "12.4.131" -> "12.4"; "" when it is not a version with at least two parts.
std::string major_minor(const std::string& s);
// The CUDA major.minor versions the knowledge base knows of.
std::vector<std::string> known_cuda_minors(const KnowledgeBase& kb);
// The newest CUDA x.y whose first release's driver floor `driver` meets ("" if none).
std::string cuda_for_driver(const KnowledgeBase& kb, const std::string& driver);

// Adds the facts `d` derives (outputs named in explain.hpp's Derivation kinds).
void derive(const Derivation& d, std::map<std::string, std::string>& facts,
            const KnowledgeBase& kb);
// Facts every log gets when it has the inputs: torch_cuda from a torch_version "2.4.1+cu121".
void derive_common(std::map<std::string, std::string>& facts);

// The value at dotted `path` in a fingerprint, or nullptr.
const nlohmann::json* fp_path(const nlohmann::json& fp, std::string_view path);
// A string or number as text; "" for anything else or nullptr.
std::string json_scalar(const nlohmann::json* j);
// The first non-empty of `from`: fact names, or "fp:a.b" fingerprint paths (when `fp`).
std::string resolve(const std::vector<std::string>& from,
                    const std::map<std::string, std::string>& facts, const nlohmann::json* fp);

}  // namespace td::explain_detail
