#pragma once
// Typed, path-tracking access to a parsed JsonValue. Every accessor records a diagnostic
// (file:line:col: $.path: message) instead of throwing, so one pass finds every problem.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json/diagnostics.hpp"
#include "core/json/source_json.hpp"

namespace td {

class JsonReader {
  public:
    JsonReader(Diagnostics& diags, std::map<std::string, SourcePos>& positions)
        : m_diags(diags), m_positions(positions) {}

    void error(const JsonValue& at, const std::string& path, std::string message) {
        m_diags.add(at.pos, path, std::move(message));
    }

    // Checks that `obj` is an object with only `allowed` keys (did-you-mean for others)
    // and every `required` key. Returns false when it is not an object at all (a missing
    // required key is reported but still returns true: callers must look each one up).
    bool check_object(const JsonValue& obj, const std::string& path,
                      const std::vector<std::string>& allowed,
                      const std::vector<std::string>& required = {});

    std::optional<std::string> string(const JsonValue& v, const std::string& path);
    std::optional<bool> boolean(const JsonValue& v, const std::string& path);
    std::optional<long long> integer(const JsonValue& v, const std::string& path, long long min,
                                     long long max);
    std::optional<double> number(const JsonValue& v, const std::string& path, double min,
                                 double max);
    // An array of strings, each checked by `check` (a grammar:: function; "" = ok).
    // Duplicates are errors. Missing or wrong-typed items are reported and skipped.
    std::vector<std::string> string_list(const JsonValue& v, const std::string& path,
                                         const std::function<std::string(std::string_view)>& check,
                                         bool allow_empty = false);
    // An enumerated string: the value must be one of `choices` (did-you-mean otherwise).
    std::optional<std::string> choice(const JsonValue& v, const std::string& path,
                                      const std::vector<std::string>& choices);

    void record(const std::string& path, SourcePos pos) { m_positions[path] = pos; }
    Diagnostics& diags() { return m_diags; }

  private:
    Diagnostics& m_diags;
    std::map<std::string, SourcePos>& m_positions;
};

// Parses a whole input file; syntax errors go to `diags` and give nullopt.
std::optional<JsonValue> parse_document(std::string_view text, Diagnostics& diags);

// Reports a "schema" other than 1 at $.schema; `what` names the kind of file ("lock", or "").
void check_schema_one(JsonReader& r, const JsonValue& root, const std::string& what);

std::string member_path(const std::string& parent, const std::string& key);
std::string item_path(const std::string& parent, std::size_t index);

}  // namespace td
