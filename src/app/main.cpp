// torchdock: pinned PyTorch-CUDA Dockerfiles, built and validated.
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <iostream>

#include "app/cli.hpp"
#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/help.hpp"
#include "app/version.hpp"
#include "engine/pypi_client.hpp"

namespace {

// Colour and verbosity for everything printed from here on.
void setup_console(const td::app::Cli& c) {
    using namespace td::app;
    const char* no_color = std::getenv("NO_COLOR");
    configure_console(c.quiet_count > 0     ? Verbosity::quiet
                      : c.verbose_count > 0 ? Verbosity::verbose
                                            : Verbosity::normal,
                      c.color, no_color && *no_color, ::isatty(STDOUT_FILENO) == 1,
                      ::isatty(STDERR_FILENO) == 1);
}

}  // namespace

int main(int argc, char** argv) {
    using namespace td::app;
    auto cli = make_cli(version_text);
    Cli& c = *cli;
    c.app.footer(main_help_footer());
    std::vector<std::string> args(argv + 1, argv + argc);
    // Errors found before parsing (an unknown command) are coloured as --color says.
    for (std::size_t i = 0; i < args.size(); ++i)
        if (args[i] == "--color" && i + 1 < args.size())
            c.color = args[i + 1];
        else if (args[i].rfind("--color=", 0) == 0)
            c.color = args[i].substr(8);
    setup_console(c);
    c.color = "auto";
    if (auto answered = answer_before_parse(c.app, args)) return *answered;
    try {
        c.app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = c.app.exit(e);
        return code == 0 ? k_exit_ok : k_exit_config;
    }
    setup_console(c);
    try {
        if (*c.init_cmd) return run_init(c.common, c.init);
        if (*c.render_cmd) return run_render(c.common, c.render);
        if (*c.list_cmd) return run_list(c.common, c.list);
        if (*c.build_cmd) return run_build(c.common, c.build);
        if (*c.lock_cmd) return run_lock(c.common, c.lock);
        if (*c.validate_cmd) {
            c.validate.with_manifests = c.validate_cmd->get_option("--manifests")->count() > 0;
            return run_validate(c.common, c.validate);
        }
        if (*c.doctor_cmd) return run_doctor(c.common, c.doctor);
        if (*c.diff_cmd) return run_diff(c.diff);
        if (*c.node_check_cmd) return run_node_check(c.common, c.node_check);
        if (*c.fleet_cmd) return run_fleet(c.common, c.fleet);
        if (*c.allreduce_cmd) return run_allreduce(c.common, c.allreduce);
        if (*c.allreduce_rank_cmd) return run_allreduce_rank(c.common, c.allreduce);
        if (*c.pre_cmd) return run_preflight(c.common, c.pre);
        if (*c.explain_cmd) return run_explain(c.common, c.explain);
        if (*c.checks_cmd) return run_checks(c.common, c.checks);
        if (*c.sbom_cmd) return run_sbom(c.common, c.sbom);
        if (*c.cache_list_cmd) return run_cache_list(c.cache);
        if (*c.cache_prune_cmd) return run_cache_prune(c.cache);
        if (*c.kb_refresh_cmd) return run_kb_refresh(c.common, c.kb_refresh);
    } catch (const std::exception& e) {
        std::cerr << "torchdock: internal error: " << e.what() << "\n";
        return k_exit_config;
    }
    return k_exit_config;
}
