#pragma once
// The man page and the shell completions of torchdock, written from its CLI11 tree
// (app/cli.hpp), so they list exactly the subcommands and options the binary accepts.
#include <CLI/CLI.hpp>
#include <string>

namespace td::app {

// torchdock(1) in man(7) roff: every subcommand with its options and arguments, plus the
// environment, files (the install layout), and exit statuses.
std::string man_page(const CLI::App& app, const std::string& version);

// A bash completion script: subcommands, each one's options, files for option values and
// arguments.
std::string bash_completion(const CLI::App& app);

// A zsh completion script (#compdef torchdock) with each option's description.
std::string zsh_completion(const CLI::App& app);

}  // namespace td::app
