#pragma once
// The command line: every subcommand, option and help text, defined once. torchdock parses
// with it; torchdock_docgen turns the same tree into the man page and shell completions.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "app/commands.hpp"

namespace td::app {

struct Cli {
    CLI::App app{"torchdock: render, build and validate pinned PyTorch-CUDA images", "torchdock"};
    // Global: -q, -v (counted), --color auto|always|never.
    int quiet_count = 0, verbose_count = 0;
    std::string color = "auto";
    CommonOptions common;
    InitOptions init;
    RenderOptions render;
    ListOptions list;
    BuildOptions build;
    LockOptions lock;
    ValidateOptions validate;
    DoctorOptions doctor;
    NodeCheckOptions node_check;
    FleetOptions fleet;
    AllreduceOptions allreduce;
    DiffOptions diff;
    PreflightOptions pre;
    ExplainOptions explain;
    KbRefreshOptions kb_refresh;
    ChecksOptions checks;
    SbomOptions sbom;
    CacheOptions cache;
    CLI::App *init_cmd{}, *render_cmd{}, *list_cmd{}, *build_cmd{}, *lock_cmd{}, *validate_cmd{},
        *doctor_cmd{}, *diff_cmd{}, *pre_cmd{}, *explain_cmd{}, *checks_cmd{}, *kb_cmd{},
        *kb_refresh_cmd{}, *sbom_cmd{}, *node_check_cmd{}, *fleet_cmd{}, *allreduce_cmd{},
        *allreduce_rank_cmd{}, *cache_cmd{}, *cache_list_cmd{}, *cache_prune_cmd{};
};

// The whole command line; `version` is called for --version only (it may read files).
std::unique_ptr<Cli> make_cli(std::function<std::string()> version);

}  // namespace td::app
