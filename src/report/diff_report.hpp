#pragma once
// `torchdock diff` for people (the answer first, the top differences, counts of the rest)
// and for scripts (JSON with every difference and the counts).
#include <string>
#include <vector>

#include "core/diagnose/diff_selection.hpp"

namespace td::report {

struct DiffSides {
    std::string a_file, b_file;        // as given on the command line
    std::string a_subject, b_subject;  // the fingerprints' "subject" (image or host name)
};

// One summary line (how many differences, the one most likely to break a GPU job of them
// all, whatever the selection), the two
// sides, the shown differences as a ranked table, then one line counting what is not shown
// by category. Every cell from a fingerprint goes through terminal_text.
std::string diff_text(const DiffView& view, const DiffSides& sides);

// {"schema": 1, "a", "b", "summary": {"total", "by_category"}, "differences": [...]}: every
// difference, whatever the selection, each with path, a, b, category, weight, why.
std::string diff_json(const std::vector<FingerprintDifference>& ranked, const DiffSides& sides);

}  // namespace td::report
