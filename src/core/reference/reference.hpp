#pragma once
// The reference pages of every ID torchdock reports (`torchdock checks [ID]`, docs/checks.md):
// validate's checks (TDxxx, core/validate/check_catalog), doctor's findings (DRxxx,
// core/diagnose/finding_catalog) and explain's error signatures (EXxxx, from
// data/error_signatures/*.json). Generated from the sources that define the IDs, so a page
// cannot drift from the code. Pure.
#include <string>
#include <vector>

#include "core/diagnose/explain.hpp"

namespace td {

struct ReferenceEntry {
    std::string id;
    std::string kind;      // check | finding | signature
    std::string title;     // the check's name ("shm.size"), a finding's or signature's title
    std::string summary;   // one line for the listing
    std::string details;   // "validate, static tier, evidence from probe-env" ...
    std::string what;      // when it is reported
    std::string why;       // why it matters
    std::string evidence;  // what torchdock reads to decide
    std::string fix;
    std::string waive;                 // how to waive it, or why it cannot be
    std::vector<std::string> sources;  // signatures: where the wording and cause come from
};

// Checks, then findings, then signatures, each in ID order.
std::vector<ReferenceEntry> reference_entries(const ErrorSignatures& signatures);
// The entry of `id` (case-insensitive), or nullptr.
const ReferenceEntry* find_reference(const std::vector<ReferenceEntry>& entries,
                                     const std::string& id);
// "torchdock checks TD130", and the docs anchor "docs/checks.md#td130", as reports link them.
std::string reference_command(const std::string& id);
std::string reference_anchor(const std::string& id);

}  // namespace td
