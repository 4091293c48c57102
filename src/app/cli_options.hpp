#pragma once
// The option shapes every command shares, so each means the same everywhere:
//   report flags   --json prints to stdout, --json=FILE writes FILE (app/output.hpp)
//   durations      seconds; a unit may be given: 90, 90s, 30m, 2h
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace td::app {

// Help that shows a report flag as `--json [=FILE]`, not CLI11's `--json{-}`. Set on the
// top-level app before subcommands are added (they inherit it).
class HelpFormatter : public CLI::Formatter {
  public:
    std::string make_option_name(const CLI::Option* opt, bool is_positional) const override;
};

void add_report_flag(CLI::App* sub, const std::string& name, std::optional<std::string>& dest,
                     const std::string& what);

// A duration in seconds from `min_s` to `max_s`; the default shown is the current value.
void add_duration_option(CLI::App* sub, const std::string& name, long long& seconds,
                         const std::string& what, long long max_s, long long min_s = 1);

}  // namespace td::app
