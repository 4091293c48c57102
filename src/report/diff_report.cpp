#include "report/diff_report.hpp"

#include <nlohmann/json.hpp>

#include "core/json/json_text.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"

namespace td::report {
namespace {

// A long path keeps its end (the file name, the field): "kernels[/app/.ve...libcublas.so.12].ptx".
std::string clip_middle(const std::string& s, std::size_t n) {
    return s.size() <= n ? s : s.substr(0, n / 3) + "..." + s.substr(s.size() - (n - n / 3 - 3));
}

std::string side(const std::string& subject, const std::string& file) {
    return subject.empty() ? terminal_text(file)
                           : terminal_text(subject, 80) + " (" + terminal_text(file) + ")";
}

// The headline of a difference: its reason up to the first colon ("the CUDA runtime differs").
std::string headline(const FingerprintDifference& d) { return d.why.substr(0, d.why.find(':')); }

std::string counts_text(const std::vector<std::pair<std::string, std::size_t>>& counts) {
    std::vector<std::string> parts;
    for (const auto& [category, n] : counts) parts.push_back(std::to_string(n) + " " + category);
    return join(parts, ", ");
}

}  // namespace

std::string diff_text(const DiffView& view, const DiffSides& sides) {
    if (view.total == 0) return "no differences\n";
    std::string out = std::to_string(view.total) + " difference" + (view.total == 1 ? "" : "s");
    if (view.first) {
        const auto& first = *view.first;
        out += "; the most likely to break a GPU job: " + headline(first) + " (" +
               terminal_text(first.path, 60) + ": " + terminal_text(first.a, 40) + " vs " +
               terminal_text(first.b, 40) + ")";
    }
    if (view.shown.empty()) out += "; none in the selected categories";
    out += "\nA: " + side(sides.a_subject, sides.a_file) +
           "\nB: " + side(sides.b_subject, sides.b_file) + "\n";
    if (!view.shown.empty()) {
        std::vector<std::vector<std::string>> rows;
        for (std::size_t i = 0; i < view.shown.size(); ++i) {
            const auto& d = view.shown[i];
            rows.push_back({std::to_string(i + 1), d.category, clip_middle(d.path, 60),
                            clip(d.a, 40), clip(d.b, 40), d.why});
        }
        out += "\n" + format_table({"RANK", "CATEGORY", "WHAT", "A", "B", "WHY IT MATTERS"}, rows);
    }
    std::size_t rest = view.total - view.shown.size();
    if (rest)
        out += "\nand " + std::to_string(rest) + " more not shown: " + counts_text(view.not_shown) +
               " (--all or --top N to show them, --only CATEGORY for one kind)\n";
    return out;
}

std::string diff_json(const std::vector<FingerprintDifference>& ranked, const DiffSides& sides) {
    nlohmann::json differences = nlohmann::json::array();
    for (const auto& d : ranked)
        differences.push_back({{"path", d.path},
                               {"a", d.a},
                               {"b", d.b},
                               {"category", d.category},
                               {"weight", d.weight},
                               {"why", d.why}});
    nlohmann::json by_category = nlohmann::json::object();
    for (const auto& [category, n] : count_by_category(ranked)) by_category[category] = n;
    return json_text({{"schema", 1},
                      {"a", sides.a_file},
                      {"b", sides.b_file},
                      {"summary", {{"total", ranked.size()}, {"by_category", by_category}}},
                      {"differences", differences}});
}

}  // namespace td::report
