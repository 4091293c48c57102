#include "report/table.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace td::report {

std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& raw_rows) {
    // Cells come from images, registries and probes: one line each, nothing the terminal
    // would act on.
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : raw_rows) {
        rows.emplace_back();
        for (const auto& cell : r) rows.back().push_back(terminal_text(cell));
    }
    std::vector<std::size_t> width(header.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size() && i < width.size(); ++i)
            width[i] = std::max(width[i], row[i].size());
    };
    measure(header);
    for (const auto& r : rows) measure(r);
    auto line = [&](const std::vector<std::string>& row) {
        std::string out;
        for (std::size_t i = 0; i < width.size(); ++i) {
            std::string cell = i < row.size() ? row[i] : "";
            out += cell;
            if (i + 1 < width.size()) out += std::string(width[i] - cell.size() + 2, ' ');
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        return out + "\n";
    };
    std::string out = line(header);
    std::vector<std::string> rule;
    for (auto w : width) rule.push_back(std::string(w, '-'));
    out += line(rule);
    for (const auto& r : rows) out += line(r);
    return out;
}

}  // namespace td::report
