// torchdock: pinned PyTorch-CUDA Dockerfiles, built and validated.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"

int main(int argc, char** argv) {
    using namespace td::app;
    CLI::App cli{"torchdock: render, build and validate pinned PyTorch-CUDA images"};
    cli.require_subcommand(1);
    cli.set_version_flag("--version", "torchdock 0.1.0");

    CommonOptions common;
    auto add_common = [&](CLI::App* sub) {
        sub->add_option("--manifests", common.manifests_dir, "manifest directory")
            ->capture_default_str();
        sub->add_option("--data", common.data_dir, "knowledge base directory (default: $TORCHDOCK_DATA or the built-in path)");
    };

    RenderOptions render;
    auto* render_cmd = cli.add_subcommand("render", "render the Dockerfiles of the whole matrix");
    add_common(render_cmd);
    render_cmd->add_option("--out", render.out_dir, "output directory")->capture_default_str();
    render_cmd->add_option("--only", render.only, "render only variants matching this glob");
    render_cmd->add_flag("--check", render.check, "exit 1 and list what differs if the tree is stale");
    render_cmd->add_option("--stdout", render.stdout_variant, "print one variant's Dockerfile");

    ListOptions list;
    auto* list_cmd = cli.add_subcommand("list", "show the expanded matrix");
    add_common(list_cmd);
    list_cmd->add_flag("--json", list.json, "print JSON");

    try {
        cli.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = cli.exit(e);
        return code == 0 ? k_exit_ok : k_exit_config;
    }
    try {
        if (*render_cmd) return run_render(common, render);
        if (*list_cmd) return run_list(common, list);
    } catch (const std::exception& e) {
        std::cerr << "torchdock: internal error: " << e.what() << "\n";
        return k_exit_config;
    }
    return k_exit_config;
}
