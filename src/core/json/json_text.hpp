#pragma once
// The one way torchdock prints a JSON document (reports, fingerprints, lock files, lists):
// indented by 2, ending in a newline, and always valid UTF-8: bytes that are not UTF-8 in a
// string (an image name, a probe's output) become U+FFFD instead of an exception.
#include <nlohmann/json.hpp>
#include <string>

namespace td {

std::string json_text(const nlohmann::json& document);

}  // namespace td
