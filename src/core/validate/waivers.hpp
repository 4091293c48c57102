#pragma once
// Waivers, as linters silence a rule: `validate --waive ID=reason`, the settings file's
// "waivers", and the manifest's "waivers" (rendered as image labels io.torchdock.waive.ID).
// A waived check keeps its outcome visible (CheckResult::outcome), is counted apart, and
// does not fail the run; it is never a pass. Pure.
#include <map>
#include <string>
#include <vector>

#include "core/validate/checks.hpp"

namespace td {

struct Waiver {
    std::string id;      // "TD130"
    std::string reason;  // why the team accepts it: required, one line of printable text
    std::string source;  // --waive | settings | label
};

// The image label prefix a manifest waiver is rendered to: io.torchdock.waive.TD130=reason.
inline constexpr const char* k_waive_label_prefix = "io.torchdock.waive.";

// Why `id` cannot be waived with `reason`: "" when it can. Names the ID; an unknown ID gets a
// did-you-mean; a check whose failure makes the evidence untrusted says so; an empty reason
// or one that is not printable one-line text (at most 200 bytes) is refused.
std::string waiver_problem(const std::string& id, const std::string& reason);

// "ID=reason" (the --waive flag): the waiver, or "" and `error` set.
Waiver parse_waiver(const std::string& text, const std::string& source, std::string& error);

// The waivers an image's labels carry (io.torchdock.waive.ID=reason). A label that names an
// unknown or non-waivable ID, or has no reason, is not applied: `notes` says so.
std::vector<Waiver> waivers_from_labels(const std::map<std::string, std::string>& labels,
                                        std::vector<std::string>& notes);

// Applies waivers, earlier ones winning for the same ID (flags, then settings, then labels).
// A fail or warn becomes `waived` with `outcome` keeping it; an error (could not be judged)
// stays an error: a waiver covers a judged outcome, not missing evidence. Returns one note
// per waiver that changed nothing (the check passed, was skipped, could not be judged, or
// did not run), naming the ID, its source and why.
std::vector<std::string> apply_waivers(std::vector<CheckResult>& results,
                                       const std::vector<Waiver>& waivers);

}  // namespace td
