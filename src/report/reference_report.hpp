#pragma once
// `torchdock checks`: the reference pages (core/reference) as a listing, one page, Markdown
// (docs/checks.md is this output, byte for byte) and JSON.
#include <string>
#include <vector>

#include "core/reference/reference.hpp"

namespace td::report {

// One line per ID: "TD130  check      shm.size: ...", each at most 100 columns.
std::string reference_list(const std::vector<ReferenceEntry>& entries);
// One entry's page: what, why, evidence, fix, how to waive, where the docs are; wrapped at
// 100 columns.
std::string reference_page(const ReferenceEntry& e);
std::string reference_markdown(const std::vector<ReferenceEntry>& entries);
std::string reference_json(const std::vector<ReferenceEntry>& entries);

}  // namespace td::report
