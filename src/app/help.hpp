#pragma once
// Help that CLI11 does not give: `torchdock help [COMMAND|environment|exit-codes]`,
// did-you-mean for an unknown command, the environment variables torchdock reads (the one
// list; a test checks it against the code and the README), and report flags written the
// old way (`--json FILE`).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace td::app {

struct EnvironmentVariable {
    const char* name;
    const char* meaning;
};
const std::vector<EnvironmentVariable>& environment_variables();

// The footer of `torchdock --help`: exit codes and where the rest is.
std::string main_help_footer();

// Looks at argv before CLI11 does. Returns an exit code when it answered (help) or refused
// (an unknown command, `--json out.json`), else nothing and CLI11 parses.
std::optional<int> answer_before_parse(CLI::App& cli, const std::vector<std::string>& args);

}  // namespace td::app
