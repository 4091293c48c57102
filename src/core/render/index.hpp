#pragma once
// The machine-readable index of rendered variants (dockerfiles/index.json): image name,
// tag, build args and the versions each image promises. Later commands (build,
// validate) read it. Deterministic: variants sorted by name, keys sorted.
#include <string>
#include <vector>

#include "core/render/variant.hpp"

namespace td {

std::string render_index(const std::vector<Variant>& variants);

}  // namespace td
