#include "core/diagnose/diff_selection.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace td {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

// "cuda,torch" and repeated flags alike; every name checked against the known categories.
Result<std::vector<std::string>> categories_of(const std::string& flag,
                                               const std::vector<std::string>& given) {
    std::vector<std::string> out;
    for (const auto& g : given)
        for (const auto& name : split(g, ',')) {
            if (contains(diff_categories(), name)) {
                out.push_back(name);
                continue;
            }
            std::string msg = flag + " " + quote_value(name) + " is not a category of diff";
            if (auto near = closest_match(name, diff_categories()))
                msg += "; did you mean " + *near + "?";
            return Error{ErrorKind::Usage,
                         msg + " (categories: " + join(diff_categories(), ", ") + ")"};
        }
    return out;
}

}  // namespace

Result<DiffSelection> diff_selection(bool all, std::optional<std::size_t> top,
                                     std::vector<std::string> only, std::vector<std::string> hide) {
    if (all && top) return Error{ErrorKind::Usage, "--all and --top cannot be used together"};
    if (top && *top == 0) return Error{ErrorKind::Usage, "--top needs a number above 0"};
    auto o = categories_of("--only", only);
    if (!o) return o.error();
    auto h = categories_of("--hide", hide);
    if (!h) return h.error();
    DiffSelection s{o.value(), h.value(),
                    all ? std::nullopt : std::optional(top.value_or(k_default_top))};
    if (!all && s.only.empty() && s.hide.empty()) s.hide = {"cosmetic"};
    return s;
}

std::vector<std::pair<std::string, std::size_t>> count_by_category(
    const std::vector<FingerprintDifference>& differences) {
    std::vector<std::pair<std::string, std::size_t>> out;
    for (const auto& category : diff_categories()) {
        auto n = static_cast<std::size_t>(
            std::count_if(differences.begin(), differences.end(),
                          [&](const FingerprintDifference& d) { return d.category == category; }));
        if (n) out.emplace_back(category, n);
    }
    return out;
}

DiffView select_differences(const std::vector<FingerprintDifference>& ranked,
                            const DiffSelection& selection) {
    DiffView view;
    view.total = ranked.size();
    if (!ranked.empty()) view.first = ranked.front();
    std::vector<FingerprintDifference> rest;
    for (const auto& d : ranked) {
        bool kept = (selection.only.empty() || contains(selection.only, d.category)) &&
                    !contains(selection.hide, d.category);
        if (kept && (!selection.top || view.shown.size() < *selection.top))
            view.shown.push_back(d);
        else
            rest.push_back(d);
    }
    view.not_shown = count_by_category(rest);
    return view;
}

}  // namespace td
