#pragma once
// The labels a variant's image carries: the OCI annotations and torchdock's io.torchdock.*
// promises (versions, driver floors, GPU targets, the hash-locked Python set, validate's
// thresholds, waivers) that validate and doctor read back. Pure.
#include <string>
#include <utility>
#include <vector>

#include "core/render/variant.hpp"

namespace td {

// In LABEL order; labels with an empty value are left out.
std::vector<std::pair<std::string, std::string>> image_labels(const Variant& v);

// A variant built for several platforms whose locked sets pin different versions: no
// io.torchdock.python-set label could be true of every platform's image, so none is written.
bool python_set_label_withheld(const Variant& v);

}  // namespace td
