#pragma once
// `torchdock list`: the expanded matrix as a table or as JSON.
#include <string>
#include <vector>

#include "core/render/variant.hpp"

namespace td::report {

std::string variants_table(const std::vector<Variant>& variants);
// The table for a 100-column terminal: variant, Python, torch, CUDA, cuDNN and driver floor;
// torch that `build` gets from the PyTorch wheel index (a setting) is marked "*", an unconfirmed
// driver floor "?", each explained under the table (`variants_table` has every column).
std::string variants_narrow_table(const std::vector<Variant>& variants);

std::string variants_json(const std::vector<Variant>& variants);

}  // namespace td::report
