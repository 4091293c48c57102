#pragma once
// Printing for every command: one "torchdock: error: ..." line per error, and the exit
// code that goes with it; and the one convention of the report flags.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace td::app {

void print_error(const std::string& message);
// Prints the error and returns its exit code.
int fail(const Error& e);

// The report flags (--json, --junit, --markdown, --sarif) of every command: the flag alone
// prints the report to stdout (its value is "-"), --flag=FILE writes FILE atomically.
using ReportFlag = std::pair<std::string, const std::optional<std::string>*>;
bool to_stdout(const std::optional<std::string>& dest);
// Checked before any work: at most one report on stdout; files whose directory exists.
Status check_report_flags(const std::vector<ReportFlag>& flags);
// Whether any of them prints to stdout (then tables go to stderr, stdout stays parseable).
bool any_to_stdout(const std::vector<ReportFlag>& flags);
// Prints or writes one report; nothing when the flag was not given.
Status emit_report(const std::optional<std::string>& dest, const std::string& text);

}  // namespace td::app
