// torchdock: pinned PyTorch-CUDA Dockerfiles, built and validated.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "engine/pypi_client.hpp"

int main(int argc, char** argv) {
    using namespace td::app;
    CLI::App cli{"torchdock: render, build and validate pinned PyTorch-CUDA images"};
    cli.require_subcommand(1);
    cli.set_version_flag("--version", "torchdock 0.1.0");

    CommonOptions common;
    auto add_common = [&](CLI::App* sub) {
        sub->add_option("--manifests", common.manifests_dir, "manifest directory")
            ->capture_default_str();
        sub->add_option("--data", common.data_dir,
                        "knowledge base directory (default: $TORCHDOCK_DATA or the built-in path)");
    };

    RenderOptions render;
    auto* render_cmd = cli.add_subcommand("render", "render the Dockerfiles of the whole matrix");
    add_common(render_cmd);
    render_cmd->add_option("--out", render.out_dir, "output directory")->capture_default_str();
    render_cmd->add_option("--only", render.only, "render only variants matching this glob");
    render_cmd->add_flag("--check", render.check,
                         "exit 1 and list what differs if the tree is stale");
    render_cmd->add_option("--stdout", render.stdout_variant, "print one variant's Dockerfile");

    ListOptions list;
    auto* list_cmd = cli.add_subcommand("list", "show the expanded matrix");
    add_common(list_cmd);
    list_cmd->add_flag("--json", list.json, "print JSON");

    auto add_settings = [](CLI::App* sub, SettingsOptions& m) {
        sub->add_option(
            "--mirror", m.mirrors,
            "registry mirror REGISTRY=MIRROR, e.g. docker.io=127.0.0.1:5000 (repeatable)");
        sub->add_option(
            "--config", m.config,
            "settings file (default: $TORCHDOCK_CONFIG, else ./torchdock.json if present)");
        sub->add_option("--pypi-index", m.pypi_index,
                        "a PyPI mirror's simple index URL (setting indexes.pypi; default: pip's "
                        "and uv's own)");
        sub->add_option("--torch-index", m.torch_index,
                        "the PyTorch wheel index root URL, or a mirror of it; a variant's index "
                        "is ROOT/cuXYZ (setting indexes.pytorch)");
        sub->add_option("--index-netrc", m.index_netrc,
                        "netrc file with the indexes' credentials, passed to builds as a secret "
                        "(setting indexes.netrc)");
    };

    BuildOptions build;
    auto* build_cmd =
        cli.add_subcommand("build", "build rendered variants into images with BuildKit");
    build_cmd->add_option("variants", build.patterns, "variant names or globs (default: all)");
    build_cmd->add_option("--dockerfiles", build.dockerfiles_dir, "rendered tree to build from")
        ->capture_default_str();
    build_cmd->add_option("-j,--jobs", build.jobs, "builds at a time (1 to 64)")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    build_cmd->add_flag("--no-cache", build.no_cache, "do not use the build cache");
    build_cmd->add_option("--push", build.push, "push each built image to this registry host");
    build_cmd->add_flag("--json", build.json, "print the summary as JSON");
    build_cmd
        ->add_option("--work-dir", build.work_dir, "where build logs and staged Dockerfiles go")
        ->capture_default_str();
    build_cmd
        ->add_option("--timeout", build.timeout_minutes, "minutes one build may take (1 to 10080)")
        ->check(CLI::Range(1, 10080))
        ->capture_default_str();
    build_cmd->add_option("--ca-cert", build.ca_cert,
                          "CA bundle for pip, passed as a build secret (default: $PIP_CERT, "
                          "$REQUESTS_CA_BUNDLE, $SSL_CERT_FILE, else the system bundle)");
    build_cmd->add_option("--build-arg", build.build_args,
                          "build argument K=V passed to every build (repeatable)");
    add_settings(build_cmd, build.settings);

    LockOptions lock;
    auto* lock_cmd =
        cli.add_subcommand("lock",
                           "pin base images by digest and each variant's Python set by hash in "
                           "manifests/<name>.lock.json");
    add_common(lock_cmd);
    lock_cmd->add_option("families", lock.families, "manifest family names (default: all)");
    lock_cmd->add_flag("--check", lock.check,
                       "exit 1 when a locked tag moved or vanished; write nothing");
    lock_cmd->add_option("--timeout", lock.timeout_s, "seconds the whole lock may take (> 0)")
        ->capture_default_str();
    add_settings(lock_cmd, lock.settings);

    ValidateOptions validate;
    auto* validate_cmd =
        cli.add_subcommand("validate", "run the probes inside images and check what they promise");
    add_common(validate_cmd);
    validate_cmd->add_option("images", validate.images, "image references")->required();
    validate_cmd->add_option("--gpus", validate.gpus, "auto | all | none | N")
        ->capture_default_str();
    validate_cmd->add_flag("--require-gpu", validate.require_gpu,
                           "a missing GPU is an error (exit 3)");
    validate_cmd->add_option("--json", validate.json, "write the results as JSON to this file");
    validate_cmd->add_option("--junit", validate.junit, "write JUnit XML to this file");
    validate_cmd->add_option("--markdown", validate.markdown,
                             "write a Markdown summary to this file");
    validate_cmd->add_option("--expect", validate.expect,
                             "key=value expectation (overrides labels), repeatable");
    validate_cmd->add_option("--probes", validate.probes_dir,
                             "probe directory (default: $TORCHDOCK_PROBES or beside the binary)");
    validate_cmd->add_option("-j,--jobs", validate.jobs, "images validated at a time (1 to 64)")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    validate_cmd
        ->add_option("--probe-timeout", validate.probe_timeout_s,
                     "seconds one probe may run (1 to 86400)")
        ->check(CLI::Range(1, 86400))
        ->capture_default_str();
    validate_cmd->add_option("--python", validate.python,
                             "the interpreter in the image whose torch to inspect (default: the "
                             "image's own: VIRTUAL_ENV, CONDA_PREFIX, then python3/python on its "
                             "PATH)");

    validate_cmd->add_option("--waive", validate.waive,
                             "ID=reason: report that check as waived, not failed (repeatable; "
                             "torchdock checks ID says what it is)");
    validate_cmd->add_option("--config", validate.config,
                             "settings file whose \"waivers\" apply (default: $TORCHDOCK_CONFIG, "
                             "else ./torchdock.json if present)");

    DoctorOptions doctor;
    auto* doctor_cmd = cli.add_subcommand(
        "doctor", "fingerprint a host or an image and list what is wrong with it");
    add_common(doctor_cmd);
    doctor_cmd->add_flag("--host", doctor.host, "this machine");
    doctor_cmd->add_option("--image", doctor.image, "an image, through a throwaway container");
    doctor_cmd->add_option("--json", doctor.json,
                           "write the fingerprint (with findings) to this file");
    doctor_cmd->add_option("--probes", doctor.probes_dir,
                           "probe directory (default: $TORCHDOCK_PROBES or beside the binary)");
    doctor_cmd->add_option("--python", doctor.python,
                           "the python whose torch to inspect (default: the environment's own: "
                           "VIRTUAL_ENV, CONDA_PREFIX, then python3/python on PATH)");

    DiffOptions diff;
    auto* diff_cmd = cli.add_subcommand(
        "diff", "compare two fingerprints, the differences most likely to break a GPU job first");
    diff_cmd->add_option("a", diff.a, "fingerprint A (torchdock doctor --json)")->required();
    diff_cmd->add_option("b", diff.b, "fingerprint B")->required();
    diff_cmd->add_flag("--json", diff.json, "print JSON");

    PreflightOptions pre;
    auto* pre_cmd =
        cli.add_subcommand("preflight", "will this image run on a given driver and GPUs?");
    add_common(pre_cmd);
    pre_cmd->add_option("image", pre.image, "image reference")->required();
    pre_cmd->add_option("--driver", pre.driver, "NVIDIA driver version, e.g. 535.104.05");
    pre_cmd->add_option("--gpu", pre.gpus, "GPU model(s), e.g. H100 or A100,H100 (repeatable)");
    pre_cmd->add_flag("--host", pre.host, "take the driver and GPUs from this host");
    pre_cmd->add_option("--probes", pre.probes_dir,
                        "probe directory (for --host and the image's kernel audit)");
    pre_cmd->add_option("--python", pre.python,
                        "the image's python whose torch to audit (default: the image's own)");
    pre_cmd->add_flag("--no-kernel-audit", pre.no_kernel_audit,
                      "judge the image's labels only; run no probe in it");
    pre_cmd->add_option("--expect", pre.expect,
                        "key=value expectation (overrides labels), repeatable");
    pre_cmd->add_flag("--json", pre.json, "print JSON");

    ExplainOptions explain;
    auto* explain_cmd =
        cli.add_subcommand("explain", "name the root cause of an error log and the fix");
    add_common(explain_cmd);
    explain_cmd->add_option("log", explain.log, "log file, or - for standard input")
        ->capture_default_str();
    explain_cmd->add_option("--fingerprint", explain.fingerprint,
                            "a fingerprint (doctor --json) to confirm or rule out causes");
    explain_cmd->add_flag("--json", explain.json, "print JSON");

    ChecksOptions checks;
    auto* checks_cmd = cli.add_subcommand(
        "checks", "list every check, finding and error signature ID, or print one's page");
    checks_cmd->add_option("id", checks.id, "an ID, e.g. TD130, DR113, EX170");
    checks_cmd->add_flag("--json", checks.json, "print JSON");
    checks_cmd->add_flag("--markdown", checks.markdown, "print Markdown (docs/checks.md)");
    checks_cmd->add_option("--data", common.data_dir, "knowledge base directory");

    KbRefreshOptions kb_refresh;
    auto* kb_cmd = cli.add_subcommand("kb", "the knowledge base (data/*.json)");
    kb_cmd->require_subcommand(1);
    auto* kb_refresh_cmd = kb_cmd->add_subcommand(
        "refresh",
        "update data/torch.json from the package index (PyPI); the only command "
        "that needs the network");
    kb_refresh_cmd->add_option("--data", common.data_dir,
                               "knowledge base directory (default: $TORCHDOCK_DATA or the "
                               "built-in path)");
    kb_refresh_cmd->add_flag("--check", kb_refresh.check,
                             "write nothing; exit 1 when the data disagrees with the index");
    kb_refresh_cmd->add_option("--release", kb_refresh.releases,
                               "torch release to read, e.g. 2.11.0 (repeatable; default: every "
                               "release from the oldest in the data on)");
    kb_refresh_cmd->add_option(
        "--index-url", kb_refresh.index_url,
        "PEP 691 simple index to read (default: pip's built-in default index, PyPI, "
        "as the host's pip names it)");
    kb_refresh_cmd->add_option("--index-name", kb_refresh.index_label,
                               "how sources name that index (default: PyPI for pip's default "
                               "index)");
    kb_refresh_cmd->add_option("-j,--jobs", kb_refresh.jobs, "requests in flight at once")
        ->capture_default_str()
        ->check(CLI::Range(1, 32));
    kb_refresh_cmd->add_flag("--arch-lists", kb_refresh.arch_lists,
                             "also read each release's CUDA arch list from the fatbins of "
                             "torch/lib/libtorch_cuda.so in its default wheel (range reads of "
                             "300 to 700 MB per release)");
    kb_refresh_cmd
        ->add_option("--lock-wait", kb_refresh.lock_wait_s,
                     "seconds to wait for another kb refresh writing the same data directory "
                     "(its lock file .torchdock-kb.lock) before giving up")
        ->capture_default_str()
        ->check(CLI::Range(0, 3600));

    try {
        cli.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = cli.exit(e);
        return code == 0 ? k_exit_ok : k_exit_config;
    }
    try {
        if (*render_cmd) return run_render(common, render);
        if (*list_cmd) return run_list(common, list);
        if (*build_cmd) return run_build(build);
        if (*lock_cmd) return run_lock(common, lock);
        if (*validate_cmd) return run_validate(common, validate);
        if (*doctor_cmd) return run_doctor(common, doctor);
        if (*diff_cmd) return run_diff(diff);
        if (*pre_cmd) return run_preflight(common, pre);
        if (*explain_cmd) return run_explain(common, explain);
        if (*kb_refresh_cmd) return run_kb_refresh(common, kb_refresh);
        if (*checks_cmd) return run_checks(common, checks);
    } catch (const std::exception& e) {
        std::cerr << "torchdock: internal error: " << e.what() << "\n";
        return k_exit_config;
    }
    return k_exit_config;
}
