#pragma once
// A plain-text table for a terminal: columns padded to their widest cell, a header row and
// a rule; every cell goes through terminal_text (one line, control characters escaped).
#include <string>
#include <vector>

namespace td::report {

std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

}  // namespace td::report
