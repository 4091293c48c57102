#pragma once
// The one way torchdock prints a JSON document (reports, fingerprints, lock files, lists):
// indented by 2, ending in a newline, and always valid UTF-8: bytes that are not UTF-8 in a
// string (an image name, a probe's output) become U+FFFD instead of an exception.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace td {

std::string json_text(const nlohmann::json& document);

// Parses JSON from outside (a fingerprint, an index, a probe's result line) with a nesting
// limit, so that walking the result later (diffs, flattening) is bounded too. Returns
// nullopt with `error` set (the parser's message, or the depth) on failure; never throws.
std::optional<nlohmann::json> parse_json_bounded(std::string_view text, std::string& error,
                                                 int max_depth = 64);

}  // namespace td
