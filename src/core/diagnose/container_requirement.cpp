#include "core/diagnose/container_requirement.hpp"

#include <vector>

#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

enum class Truth { True, False, Unknown };

// One NAME OP VALUE condition; Unknown for properties not known here or unreadable ones.
Truth condition(const std::string& text, const std::string& driver,
                const std::string& driver_cuda) {
    static const char* const ops[] = {">=", "<=", "!=", ">", "<", "="};
    for (const char* op : ops) {
        auto at = text.find(op);
        if (at == std::string::npos) continue;
        std::string name = text.substr(0, at), value = text.substr(at + std::string(op).size());
        std::string have = name == "cuda" ? driver_cuda : name == "driver" ? driver : "";
        auto h = Version::parse(have), w = Version::parse(value);
        if (!h || !w) return Truth::Unknown;  // arch, brand, or an unreadable value
        int c = compare(*h, *w);
        std::string o = op;
        bool r = o == ">="   ? c >= 0
                 : o == "<=" ? c <= 0
                 : o == "!=" ? c != 0
                 : o == ">"  ? c > 0
                 : o == "<"  ? c < 0
                             : c == 0;
        return r ? Truth::True : Truth::False;
    }
    return Truth::Unknown;
}

}  // namespace

RequirementVerdict evaluate_require_cuda(const std::string& expression, const std::string& driver,
                                         const std::string& driver_cuda) {
    RequirementVerdict v;
    bool any_unknown = false;
    std::vector<std::string> failed;
    for (const auto& group : split(expression, ' ')) {
        if (group.empty()) continue;
        Truth all = Truth::True;
        std::string decider;
        for (const auto& cond : split(group, ',')) {
            if (cond.empty()) continue;
            Truth t = condition(cond, driver, driver_cuda);
            if (t == Truth::False) {
                all = Truth::False;
                decider = cond;
                break;
            }
            if (t == Truth::Unknown) all = Truth::Unknown;
        }
        if (all == Truth::True) {
            v.outcome = RequirementVerdict::Outcome::Met;
            v.detail = "\"" + group + "\" holds";
            return v;
        }
        if (all == Truth::Unknown)
            any_unknown = true;
        else
            failed.push_back(decider);
    }
    v.outcome = any_unknown || failed.empty() ? RequirementVerdict::Outcome::Unknown
                                              : RequirementVerdict::Outcome::NotMet;
    v.detail = failed.empty() ? "it depends on the GPU's brand or arch, which are not known here"
                              : "unsatisfied: " + join(failed, ", ") +
                                    (any_unknown ? "; other alternatives depend on the GPU's "
                                                   "brand or arch"
                                                 : "");
    return v;
}

}  // namespace td
