#pragma once
// Waivers, as linters silence a rule. Only the invoking user and the repository they render
// may waive (ARCHITECTURE.md "Who may say what"): `validate --waive ID=reason`, the settings
// file's "waivers", the manifest's "waivers" when the user validates with that manifest
// (`validate --manifests DIR`). The image under test never waives: its io.torchdock.waive.ID
// labels (what render writes from a manifest's waivers) are the vendor's claim, shown and not
// applied. A failure of the user's own --expect is never waived. A waived check keeps its
// outcome visible (CheckResult::outcome), is counted apart, and does not fail the run; it is
// never a pass. Pure.
#include <map>
#include <string>
#include <vector>

#include "core/validate/checks.hpp"

namespace td {

struct Waiver {
    std::string id;      // "TD130"
    std::string reason;  // why the team accepts it: required, one line of printable text
    std::string source;  // k_waiver_from_flag, "settings FILE", "manifest FILE"
};

inline constexpr const char* k_waiver_from_flag = "--waive";
// The source of a waiver from the invoking user's own settings file: this, a space, the file.
inline constexpr const char* k_waiver_from_user_settings = "your settings";

// Whether the invoking user gave the waiver themselves (--waive, or settings of their own:
// `user_settings`), as opposed to a repository's settings or manifest: SARIF marks only the
// user's own as accepted suppressions.
bool waiver_given_by_user(const Waiver& w);

// The image label prefix a manifest waiver is rendered to: io.torchdock.waive.TD130=reason.
inline constexpr const char* k_waive_label_prefix = "io.torchdock.waive.";

// Why `id` cannot be waived with `reason`: "" when it can. Names the ID; an unknown ID gets a
// did-you-mean; a check whose failure makes the evidence untrusted says so; an empty reason
// or one that is not printable one-line text (at most 200 bytes) is refused.
std::string waiver_problem(const std::string& id, const std::string& reason);

// "ID=reason" (the --waive flag): the waiver, or "" and `error` set.
Waiver parse_waiver(const std::string& text, const std::string& source, std::string& error);

// The waivers an image's labels claim (io.torchdock.waive.ID=reason), one note each: the
// vendor's claim, not applied. Nothing an image carries can waive its own failures.
std::vector<std::string> image_waiver_claims(const std::map<std::string, std::string>& labels);

// Applies waivers, earlier ones winning for the same ID (flags, then settings, then the
// manifest). A fail or warn becomes `waived` with `outcome` keeping it; an error (could not be
// judged) stays an error: a waiver covers a judged outcome, not missing evidence; a failure
// that compared the user's own --expect (CheckResult::user_expectations) stays a failure.
// Returns one note per waiver that changed nothing (the check passed, was skipped, could not
// be judged, failed an --expect, or did not run), naming the ID, its source and why.
std::vector<std::string> apply_waivers(std::vector<CheckResult>& results,
                                       const std::vector<Waiver>& waivers);

}  // namespace td
