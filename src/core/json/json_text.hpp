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

// The string at `key` of an object; empty when `j` is no object, or the key is absent or not
// a string (a probe's answer read leniently: a missing field is no evidence).
std::string string_at(const nlohmann::json& j, const char* key);

// Parses JSON from outside (a fingerprint, an index, a probe's result line) with a nesting
// limit, so that walking the result later (diffs, flattening) is bounded too. Returns
// nullopt with `error` set (the parser's message, or the depth) on failure; never throws.
// With `refuse_duplicate_keys`, an object that names a key twice is refused too (as manifests
// and settings files refuse it: nlohmann would keep the last value silently), `error` naming
// the key and its JSON path ("duplicate key \"status\" at $.checks[].status").
std::optional<nlohmann::json> parse_json_bounded(std::string_view text, std::string& error,
                                                 int max_depth = 64,
                                                 bool refuse_duplicate_keys = false);

}  // namespace td
