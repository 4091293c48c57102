#pragma once
// `torchdock list`: the expanded matrix as a table or as JSON.
#include <string>
#include <vector>

#include "core/render/variant.hpp"

namespace td::report {

std::string variants_table(const std::vector<Variant>& variants);
std::string variants_json(const std::vector<Variant>& variants);

}  // namespace td::report
