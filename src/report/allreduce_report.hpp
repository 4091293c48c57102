#pragma once
// `torchdock allreduce`'s report: the table per message size, JSON (every rank's answer with
// the combined sizes) and JUnit XML (one test case per rank and one for the sums).
#include <string>

#include "core/fleet/allreduce.hpp"

namespace td::report {

std::string allreduce_table(const AllreduceResult& r);
std::string allreduce_json(const AllreduceResult& r, const std::string& image, double seconds);
std::string allreduce_junit(const AllreduceResult& r, const std::string& image);

}  // namespace td::report
