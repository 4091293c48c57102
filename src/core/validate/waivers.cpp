#include "core/validate/waivers.hpp"

#include <set>

#include "core/grammar/grammar.hpp"
#include "util/strings.hpp"

namespace td {

std::string waiver_problem(const std::string& id, const std::string& reason) {
    const CheckInfo* info = find_check(id);
    if (!info) {
        std::vector<std::string> ids;
        for (const auto& c : check_catalog()) ids.push_back(c.id);
        auto near = closest_match(id, ids);
        return quote_value(id) + " is not a check ID" +
               (near ? " (did you mean " + *near + "?)" : "") + "; torchdock checks lists them";
    }
    if (!info->not_waivable.empty())
        return id + " (" + info->name + ") is not waivable: " + info->not_waivable;
    if (reason.find_first_not_of(" \t") == std::string::npos)
        return "the waiver of " + id + " has no reason: say why the team accepts it (ID=reason)";
    if (auto e = grammar::check_plain_text(reason, 200); !e.empty())
        return "the reason of the waiver of " + id + " " + quote_value(reason) + ": " + e;
    return {};
}

Waiver parse_waiver(const std::string& text, const std::string& source, std::string& error) {
    auto eq = text.find('=');
    if (eq == std::string::npos) {
        error = quote_value(text) + " is not ID=reason (e.g. TD130=\"runs with --ipc=host\")";
        return {};
    }
    Waiver w{text.substr(0, eq), text.substr(eq + 1), source};
    error = waiver_problem(w.id, w.reason);
    return error.empty() ? w : Waiver{};
}

bool waiver_given_by_user(const Waiver& w) {
    return w.source == k_waiver_from_flag || starts_with(w.source, k_waiver_from_user_settings);
}

std::vector<std::string> image_waiver_claims(const std::map<std::string, std::string>& labels) {
    std::vector<std::string> notes;
    const std::string prefix = k_waive_label_prefix;
    for (const auto& [key, value] : labels) {
        if (!starts_with(key, prefix)) continue;
        notes.push_back(
            "the image claims a waiver, not applied (the image under test cannot waive "
            "its own checks; waive with --waive, your settings, or the manifest "
            "through validate --manifests): label " +
            quote_value(key) + "=" + quote_value(value));
    }
    return notes;
}

std::vector<std::string> apply_waivers(std::vector<CheckResult>& results,
                                       const std::vector<Waiver>& waivers) {
    std::vector<std::string> notes;
    std::set<std::string> done;
    for (const auto& w : waivers) {
        if (!done.insert(w.id).second) continue;
        std::string unused = "waiver of " + w.id + " (" + w.source + ") not used: ";
        bool found = false;
        for (auto& r : results) {
            if (r.id != w.id) continue;
            found = true;
            if ((r.status == "fail" || r.status == "warn") && !r.user_expectations.empty()) {
                notes.push_back(unused + "the check failed your own --expect " +
                                join(r.user_expectations, ", ") +
                                ", which no waiver hides (drop the --expect, or fix the image)");
            } else if (r.status == "fail" || r.status == "warn") {
                r.outcome = r.status;
                r.status = "waived";
                r.waiver_reason = w.reason;
                r.waiver_source = w.source;
            } else if (r.status == "error") {
                notes.push_back(unused +
                                "the check could not be judged, and a waiver covers a judged "
                                "outcome, not missing evidence");
            } else {
                notes.push_back(unused + "the check " +
                                (r.status == "pass" ? "passed" : "was skipped: " + r.message));
            }
        }
        if (!found) notes.push_back(unused + "the check did not run");
    }
    return notes;
}

}  // namespace td
