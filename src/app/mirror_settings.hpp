#pragma once
#include "app/commands.hpp"
#include "core/build/image_ref.hpp"
#include "util/result.hpp"

namespace td::app {

// Mirrors from the settings file (if any) with --mirror flags on top.
Result<Mirrors> load_mirrors(const MirrorOptions& opts);

}  // namespace td::app
