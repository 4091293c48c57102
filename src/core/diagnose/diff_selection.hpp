#pragma once
// Which of `torchdock diff`'s ranked differences a person sees first, and how many of each
// category are left unshown. Pure.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/fingerprint_diff.hpp"
#include "util/result.hpp"

namespace td {

// Shown by default: the top k_default_top differences outside `cosmetic`.
inline constexpr std::size_t k_default_top = 10;

struct DiffSelection {
    std::vector<std::string> only;   // keep only these categories (empty: every category)
    std::vector<std::string> hide;   // leave these out
    std::optional<std::size_t> top;  // at most this many (nullopt: all that are kept)
};

// The selection the flags ask for: --all shows everything kept; otherwise at most --top N
// (default k_default_top); cosmetic is hidden unless --all, --only or --hide is given.
// A category outside diff_categories() is a usage error naming the known ones.
Result<DiffSelection> diff_selection(bool all, std::optional<std::size_t> top,
                                     std::vector<std::string> only, std::vector<std::string> hide);

struct DiffView {
    // The highest ranked difference of all, whatever the selection (the answer line).
    std::optional<FingerprintDifference> first;
    std::vector<FingerprintDifference> shown;  // in rank order
    // Differences not shown, by category, in diff_categories() order; with `shown`, they add
    // up to every difference.
    std::vector<std::pair<std::string, std::size_t>> not_shown;
    std::size_t total = 0;
};

DiffView select_differences(const std::vector<FingerprintDifference>& ranked,
                            const DiffSelection& selection);

// Every difference by category, in diff_categories() order (categories with none left out).
std::vector<std::pair<std::string, std::size_t>> count_by_category(
    const std::vector<FingerprintDifference>& differences);

}  // namespace td
