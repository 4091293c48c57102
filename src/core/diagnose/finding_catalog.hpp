#pragma once
// doctor's finding IDs and their reference pages (`torchdock checks DR113`, docs/checks.md):
// finding_catalog.cpp is the only place a finding ID is defined; doctor takes each finding's
// severity from it. Pure.
#include <string>
#include <vector>

namespace td {

struct FindingInfo {
    std::string id;        // DR101...
    std::string severity;  // error | warning | info
    std::string title;     // the finding's usual title (some name the GPU or library)
    std::string what;      // when doctor reports it
    std::string why;       // why it matters
    std::string reads;     // what doctor reads to decide
    std::string fix;
    std::string not_waivable;  // "" when a waiver may cover it, else why not
};

const std::vector<FindingInfo>& finding_catalog();
const FindingInfo* find_finding(const std::string& id);  // nullptr when unknown
// std::logic_error when `id` is not in the catalog.
const FindingInfo& finding_info(const std::string& id);

}  // namespace td
