#pragma once
// A plain-text table: columns padded to their widest cell, a header row and a rule.
#include <string>
#include <vector>

namespace td::report {

std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

}  // namespace td::report
