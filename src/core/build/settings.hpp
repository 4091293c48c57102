#pragma once
// torchdock's own settings file (torchdock.json in the working directory, or
// $TORCHDOCK_CONFIG): {"schema": 1, "mirrors": {"docker.io": "127.0.0.1:5000"}}.
// Flags override it.
#include <string_view>

#include "core/build/image_ref.hpp"
#include "core/json/diagnostics.hpp"

namespace td {

struct Settings {
    Mirrors mirrors;
};

Settings parse_settings(std::string_view text, Diagnostics& diags);

}  // namespace td
