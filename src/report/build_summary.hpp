#pragma once
// `torchdock build`: the summary table and its JSON twin, from one list of records.
#include <string>
#include <vector>

#include "core/build/build_record.hpp"

namespace td::report {

std::string build_table(const std::vector<BuildRecord>& records);
std::string build_json(const std::vector<BuildRecord>& records);
// For each failed variant: the failing step, the last lines of its log, where the log is.
std::string build_failures(const std::vector<BuildRecord>& records);
std::string human_size(long long bytes);

}  // namespace td::report
