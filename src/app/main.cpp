// torchdock: pinned PyTorch-CUDA Dockerfiles, built and validated.
#include <exception>
#include <iostream>

#include "app/cli.hpp"
#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "app/version.hpp"
#include "engine/pypi_client.hpp"

int main(int argc, char** argv) {
    using namespace td::app;
    auto cli = make_cli(version_text);
    try {
        cli->app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = cli->app.exit(e);
        return code == 0 ? k_exit_ok : k_exit_config;
    }
    Cli& c = *cli;
    try {
        if (*c.render_cmd) return run_render(c.common, c.render);
        if (*c.list_cmd) return run_list(c.common, c.list);
        if (*c.build_cmd) return run_build(c.build);
        if (*c.lock_cmd) return run_lock(c.common, c.lock);
        if (*c.validate_cmd) return run_validate(c.common, c.validate);
        if (*c.doctor_cmd) return run_doctor(c.common, c.doctor);
        if (*c.diff_cmd) return run_diff(c.diff);
        if (*c.pre_cmd) return run_preflight(c.common, c.pre);
        if (*c.explain_cmd) return run_explain(c.common, c.explain);
        if (*c.kb_refresh_cmd) return run_kb_refresh(c.common, c.kb_refresh);
    } catch (const std::exception& e) {
        std::cerr << "torchdock: internal error: " << e.what() << "\n";
        return k_exit_config;
    }
    return k_exit_config;
}
