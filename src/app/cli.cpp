#include "app/cli.hpp"

#include "app/cli_options.hpp"

namespace td::app {

std::unique_ptr<Cli> make_cli(std::function<std::string()> version) {
    auto owned = std::make_unique<Cli>();
    Cli& c = *owned;
    c.app.require_subcommand(1);
    c.app.formatter(std::make_shared<HelpFormatter>());
    c.app.set_version_flag("--version", std::move(version),
                           "print the version, the commit and the knowledge base's date");

    // -q, -v and --color are accepted before or after the command.
    c.app.fallthrough();
    c.app.add_flag("-q,--quiet", c.quiet_count, "errors and results only: no progress lines");
    c.app.add_flag("-v,--verbose", c.verbose_count, "more detail: each probe, each step");
    c.app
        .add_option("--color", c.color, "colour: auto (a terminal without NO_COLOR), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();

    auto& common = c.common;
    auto add_common = [&](CLI::App* sub) {
        sub->add_option("--manifests", common.manifests_dir, "manifest directory")
            ->capture_default_str();
        sub->add_option("--data", common.data_dir,
                        "knowledge base directory (default: $TORCHDOCK_DATA, else "
                        "../share/torchdock/data from the binary's directory)");
    };

    auto& render = c.render;
    c.render_cmd = c.app.add_subcommand("render", "render the Dockerfiles of the whole matrix");
    add_common(c.render_cmd);
    c.render_cmd->add_option("--out", render.out_dir, "output directory")->capture_default_str();
    c.render_cmd->add_option("--only", render.only, "render only variants matching this glob");
    c.render_cmd->add_flag("--check", render.check,
                           "exit 1 and list what differs if the tree is stale");
    c.render_cmd->add_option("--stdout", render.stdout_variant, "print one variant's Dockerfile");
    add_report_flag(c.render_cmd, "--sarif", render.sarif,
                    "the manifest problems and warnings as SARIF 2.1.0 (also when the manifests "
                    "are refused)");
    add_report_flag(c.render_cmd, "--json", render.json,
                    "what was rendered, or with --check what is stale, as JSON");

    auto& init = c.init;
    c.init_cmd = c.app.add_subcommand(
        "init", "write a new manifest from a few choices; it is checked like any manifest first");
    add_common(c.init_cmd);
    c.init_cmd->add_option("name", init.name, "family name (the file is MANIFESTS/NAME.json)")
        ->required();
    c.init_cmd->add_option("--torch", init.torch, "torch release(s), e.g. 2.7.1")->required();
    c.init_cmd->add_option("--cuda", init.cuda, "wheel variant(s), e.g. cu128 or cpu")->required();
    c.init_cmd->add_option("--os", init.os, "OS(es), e.g. ubuntu22.04 or debian12");
    c.init_cmd->add_option("--gpus", init.gpus, "target GPUs, e.g. A100,H100");
    c.init_cmd->add_option("--base", init.base,
                           "nvidia-cuda, nvidia-cuda-cudnn, pytorch, os-pip, ... (default: "
                           "nvidia-cuda on Ubuntu, else os-pip)");
    c.init_cmd->add_option("--flavor", init.flavor, "runtime and/or devel (default runtime)");
    c.init_cmd->add_option("--python", init.python, "Python X.Y (default: the OS's)");
    c.init_cmd->add_option("--wheel-index", init.wheel_index,
                           "pytorch (needs the indexes.pytorch setting to build) or pypi");
    c.init_cmd->add_option("--image", init.image, "image repository (default torchdock/NAME)");

    auto& list = c.list;
    c.list_cmd = c.app.add_subcommand("list", "show the expanded matrix");
    add_common(c.list_cmd);
    c.list_cmd->add_flag("--wide", list.wide, "every column (image, base, NCCL; over 200 wide)");
    add_report_flag(c.list_cmd, "--json", list.json, "the matrix as JSON");

    auto add_settings = [](CLI::App* sub, SettingsOptions& m) {
        sub->add_option(
            "--mirror", m.mirrors,
            "registry mirror REGISTRY=MIRROR, e.g. docker.io=127.0.0.1:5000 (repeatable)");
        sub->add_option(
            "--config", m.config,
            "settings file, trusted as your own (default: $TORCHDOCK_CONFIG, else torchdock.json "
            "here or above up to the repository root or $HOME, else "
            "~/.config/torchdock/torchdock.json)");
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

    auto& build = c.build;
    c.build_cmd =
        c.app.add_subcommand("build", "build rendered variants into images with BuildKit");
    add_common(c.build_cmd);
    c.build_cmd->add_option("variants", build.patterns, "variant names or globs (default: all)");
    c.build_cmd->add_option("--dockerfiles", build.dockerfiles_dir, "rendered tree to build from")
        ->capture_default_str();
    c.build_cmd->add_option("-j,--jobs", build.jobs, "builds at a time (1 to 64)")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    c.build_cmd->add_flag("--no-cache", build.no_cache, "do not use the build cache");
    c.build_cmd->add_option("--push", build.push, "push each built image to this registry host");
    c.build_cmd->add_option("--platform", build.platform,
                            "build for this platform (linux/amd64 or linux/arm64, one the "
                            "manifest's \"platforms\" lists): emulated with qemu when it is not "
                            "the engine's own");
    add_report_flag(c.build_cmd, "--json", build.json, "the summary as JSON");
    c.build_cmd
        ->add_option("--work-dir", build.work_dir, "where build logs and staged Dockerfiles go")
        ->capture_default_str();
    add_duration_option(c.build_cmd, "--timeout", build.timeout_s, "one build may take",
                        7 * 24 * 3600);
    c.build_cmd->add_option("--ca-cert", build.ca_cert,
                            "CA bundle for pip, passed as a build secret (default: $PIP_CERT, "
                            "$REQUESTS_CA_BUNDLE, $SSL_CERT_FILE, else the system bundle)");
    c.build_cmd->add_option("--build-arg", build.build_args,
                            "build argument K=V passed to every build (repeatable)");
    c.build_cmd->add_flag("--skip-render-check", build.skip_render_check,
                          "build the tree as it is, without comparing it with what render "
                          "writes from the manifests; such builds get no index netrc");
    add_settings(c.build_cmd, build.settings);

    auto& lock = c.lock;
    c.lock_cmd =
        c.app.add_subcommand("lock",
                             "pin base images by digest and each variant's Python set by hash in "
                             "manifests/<name>.lock.json");
    add_common(c.lock_cmd);
    c.lock_cmd->add_option("families", lock.families, "manifest family names (default: all)");
    c.lock_cmd->add_flag("--check", lock.check,
                         "exit 1 when a locked tag moved or vanished; write nothing");
    add_duration_option(c.lock_cmd, "--timeout", lock.timeout_s, "the whole lock may take",
                        366LL * 24 * 3600);
    add_report_flag(c.lock_cmd, "--json", lock.json,
                    "every base image and Python set with its result, as JSON");
    add_settings(c.lock_cmd, lock.settings);

    auto& validate = c.validate;
    c.validate_cmd = c.app.add_subcommand(
        "validate", "run the probes inside images and check what they promise");
    add_common(c.validate_cmd);
    c.validate_cmd->add_option("images", validate.images, "image references")->required();
    c.validate_cmd->add_option("--gpus", validate.gpus, "auto | all | none | N")
        ->capture_default_str();
    c.validate_cmd->add_flag("--require-gpu", validate.require_gpu,
                             "a missing GPU is an error (exit 3)");
    c.validate_cmd->add_flag("--files-only", validate.files_only,
                             "read the image's files only, run none of its code (the tier an "
                             "image of another architecture than the engine's always gets)");
    add_report_flag(c.validate_cmd, "--json", validate.json, "the results as JSON");
    add_report_flag(c.validate_cmd, "--junit", validate.junit, "the results as JUnit XML");
    add_report_flag(c.validate_cmd, "--markdown", validate.markdown, "a Markdown summary");
    add_report_flag(c.validate_cmd, "--sarif", validate.sarif,
                    "the failed and warning checks as SARIF 2.1.0");
    c.validate_cmd->add_option("--waive", validate.waive,
                               "ID=reason: report that check as waived, not failed (repeatable; "
                               "torchdock checks ID says what it is)");
    c.validate_cmd->add_option("--config", validate.config,
                               "settings file whose \"waivers\" apply (default: as for build)");
    c.validate_cmd->add_option("--expect", validate.expect,
                               "key=value expectation (overrides labels), repeatable");
    c.validate_cmd->add_option("--probes", validate.probes_dir,
                               "probe directory (default: $TORCHDOCK_PROBES, else "
                               "../libexec/torchdock/probes from the binary's directory)");
    c.validate_cmd->add_option("-j,--jobs", validate.jobs, "images validated at a time (1 to 64)")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    add_duration_option(c.validate_cmd, "--probe-timeout", validate.probe_timeout_s,
                        "one probe may run", 24 * 3600);
    c.validate_cmd->add_option("--python", validate.python,
                               "the interpreter in the image whose torch to inspect (default: the "
                               "image's own: VIRTUAL_ENV, CONDA_PREFIX, then python3/python on its "
                               "PATH)");

    auto& doctor = c.doctor;
    c.doctor_cmd = c.app.add_subcommand(
        "doctor", "fingerprint a host or an image and list what is wrong with it");
    add_common(c.doctor_cmd);
    c.doctor_cmd->add_flag("--host", doctor.host, "this machine");
    c.doctor_cmd->add_option("--image", doctor.image, "an image, through a throwaway container");
    add_report_flag(c.doctor_cmd, "--json", doctor.json, "the fingerprint with its findings");
    c.doctor_cmd->add_option("--probes", doctor.probes_dir,
                             "probe directory (default: $TORCHDOCK_PROBES, else "
                             "../libexec/torchdock/probes from the binary's directory)");
    c.doctor_cmd->add_option("--python", doctor.python,
                             "the python whose torch to inspect (default: the environment's own: "
                             "VIRTUAL_ENV, CONDA_PREFIX, then python3/python on PATH)");

    auto& nc = c.node_check;
    c.node_check_cmd = c.app.add_subcommand(
        "node-check",
        "the quick tier of this node with an image (a Slurm health check or prolog): exit 0 "
        "healthy, 1 drain, 3 not checked");
    add_common(c.node_check_cmd);
    c.node_check_cmd->add_option("image", nc.image, "the image jobs run here")->required();
    add_report_flag(c.node_check_cmd, "--json", nc.json,
                    "the verdict, fingerprint, checks and preflight as JSON (what fleet gathers)");
    c.node_check_cmd->add_option("--node", nc.node,
                                 "this node's name in the report (default: SLURMD_NODENAME, else "
                                 "the host name)");
    add_duration_option(c.node_check_cmd, "--deadline", nc.deadline_s,
                        "the whole check may take (Slurm kills a HealthCheckProgram after 60 s)",
                        3600);
    c.node_check_cmd->add_flag("--drain", nc.drain,
                               "on a drain verdict, drain this node with scontrol and the reason");
    c.node_check_cmd->add_option("--waive", nc.waive,
                                 "ID=reason: that check's failure does not drain (repeatable; "
                                 "named on the verdict line and in the report)");
    c.node_check_cmd->add_option("--probes", nc.probes_dir,
                                 "probe directory (default: as for validate)");
    c.node_check_cmd->add_option("--python", nc.python,
                                 "the image's python whose torch to check (default: the image's "
                                 "own)");

    auto& fleet = c.fleet;
    c.fleet_cmd = c.app.add_subcommand(
        "fleet",
        "node-check on every node of a Slurm partition or node list through srun, and the "
        "nodes that differ from the majority");
    add_common(c.fleet_cmd);
    c.fleet_cmd->add_option("image", fleet.image, "the image jobs run")->required();
    c.fleet_cmd->add_option("--nodes", fleet.nodes, "a Slurm hostlist, e.g. node[1-8],gpu12");
    c.fleet_cmd->add_option("--partition", fleet.partition,
                            "every node of this partition (with --nodes: those nodes, in it)");
    add_duration_option(c.fleet_cmd, "--timeout", fleet.timeout_s,
                        "srun may take as a whole (nodes without a report by then time out)",
                        24 * 3600);
    add_duration_option(c.fleet_cmd, "--deadline", fleet.deadline_s,
                        "each node's node-check may take", 3600);
    c.fleet_cmd->add_option("--waive", fleet.waive,
                            "ID=reason: passed to every node's node-check (repeatable; each node "
                            "names the waivers it applied)");
    add_report_flag(c.fleet_cmd, "--json", fleet.json, "every node's report and the comparison");
    add_report_flag(c.fleet_cmd, "--markdown", fleet.markdown, "a Markdown summary");
    add_report_flag(c.fleet_cmd, "--junit", fleet.junit, "one test case per node, as JUnit XML");

    auto& ar = c.allreduce;
    auto rank_flags = [&ar](CLI::App* sub) {
        sub->add_option("image", ar.image, "the image the ranks run")->required();
        sub->add_option("--backend", ar.backend,
                        "auto (NCCL where CUDA works, else gloo), gloo, nccl")
            ->check(CLI::IsMember({"auto", "gloo", "nccl"}))
            ->capture_default_str();
        sub->add_option("--sizes", ar.sizes, "message sizes in bytes, comma-separated")
            ->capture_default_str();
        sub->add_option("--iters", ar.iters, "timed all-reduces per size (1 to 1000)")
            ->check(CLI::Range(1, 1000))
            ->capture_default_str();
        add_duration_option(sub, "--timeout", ar.timeout_s,
                            "the rendezvous and each collective may take", 3600);
        sub->add_option("--python", ar.python, "the image's python (default: the image's own)");
        sub->add_option("--probes", ar.probes_dir, "probe directory (default: as for validate)");
    };
    c.allreduce_cmd = c.app.add_subcommand(
        "allreduce",
        "a multi-node all-reduce inside the image over a Slurm partition or node list: exact sums, "
        "time and bandwidth per size, the transport NCCL used");
    add_common(c.allreduce_cmd);
    rank_flags(c.allreduce_cmd);
    c.allreduce_cmd->add_option("--nodes", ar.nodes, "a Slurm hostlist, e.g. node[1-8]");
    c.allreduce_cmd->add_option("--partition", ar.partition,
                                "every node of this partition (with --nodes: those nodes, in it)");
    c.allreduce_cmd
        ->add_option("--tasks-per-node", ar.tasks_per_node,
                     "ranks per node (one per GPU on GPU nodes; 1 to 64)")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    c.allreduce_cmd->add_option("--baseline", ar.baseline,
                                "an allreduce --json from healthy nodes: bus bandwidth is judged "
                                "against it (without one it is reported, not judged)");
    c.allreduce_cmd
        ->add_option("--tolerance", ar.tolerance,
                     "the fraction under the baseline that still passes")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    add_report_flag(c.allreduce_cmd, "--json", ar.json, "the result, every rank and its sizes");
    add_report_flag(c.allreduce_cmd, "--junit", ar.junit, "one test case per rank, as JUnit XML");
    add_report_flag(c.allreduce_cmd, "--nccl-tests-json", ar.nccl_tests_json,
                    "the sizes as nccl-tests' -J JSON (for tools that read those files)");

    c.allreduce_rank_cmd = c.app.add_subcommand(
        "allreduce-rank",
        "one rank of allreduce, as srun starts it: rank, world size and rendezvous from Slurm's "
        "environment; the image runs the probe on the host network; its report on stdout");
    add_common(c.allreduce_rank_cmd);
    rank_flags(c.allreduce_rank_cmd);

    auto& diff = c.diff;
    c.diff_cmd = c.app.add_subcommand(
        "diff", "compare two fingerprints, the differences most likely to break a GPU job first");
    c.diff_cmd->add_option("a", diff.a, "fingerprint A (torchdock doctor --json)")->required();
    c.diff_cmd->add_option("b", diff.b, "fingerprint B")->required();
    add_report_flag(c.diff_cmd, "--json", diff.json,
                    "every difference and the counts by category as JSON, whatever the selection "
                    "flags say");
    c.diff_cmd
        ->add_option("--top", diff.top,
                     "show the N highest ranked differences (default 10, cosmetic hidden)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
    c.diff_cmd->add_flag("--all", diff.all, "show every difference, cosmetic included");
    c.diff_cmd->add_option("--only", diff.only,
                           "show only these categories (repeatable or comma-separated): driver, "
                           "cuda, cudnn, nccl, arch, torch, gpu, libraries, search_path, "
                           "findings, kernels, image, env, os, python, cosmetic");
    c.diff_cmd->add_option("--hide", diff.hide, "leave these categories out (repeatable)");

    auto& pre = c.pre;
    c.pre_cmd =
        c.app.add_subcommand("preflight", "will this image run on a given driver and GPUs?");
    add_common(c.pre_cmd);
    c.pre_cmd->add_option("image", pre.image, "image reference")->required();
    c.pre_cmd->add_option("--driver", pre.driver, "NVIDIA driver version, e.g. 535.104.05");
    c.pre_cmd->add_option("--gpu", pre.gpus, "GPU model(s), e.g. H100 or A100,H100 (repeatable)");
    c.pre_cmd->add_flag("--host", pre.host, "take the driver and GPUs from this host");
    c.pre_cmd->add_option(
        "--probes", pre.probes_dir,
        "probe directory (for --host and the image's kernel audit; default: as for validate)");
    c.pre_cmd->add_option("--python", pre.python,
                          "the image's python whose torch to audit (default: the image's own)");
    c.pre_cmd->add_flag("--no-kernel-audit", pre.no_kernel_audit,
                        "judge the image's labels only; run no probe in it");
    c.pre_cmd->add_option("--expect", pre.expect,
                          "key=value expectation (overrides labels), repeatable");
    add_report_flag(c.pre_cmd, "--json", pre.json, "the verdicts as JSON");

    auto& explain = c.explain;
    c.explain_cmd =
        c.app.add_subcommand("explain", "name the root cause of an error log and the fix");
    add_common(c.explain_cmd);
    c.explain_cmd->add_option("log", explain.log, "log file, or - for standard input")
        ->capture_default_str();
    c.explain_cmd->add_option("--fingerprint", explain.fingerprint,
                              "a fingerprint (doctor --json) to confirm or rule out causes");
    add_report_flag(c.explain_cmd, "--json", explain.json, "the explanations as JSON");

    auto& sbom = c.sbom;
    c.sbom_cmd = c.app.add_subcommand(
        "sbom", "a CycloneDX 1.6 SBOM of a variant (from its lock) or an image (from its files)");
    add_common(c.sbom_cmd);
    c.sbom_cmd
        ->add_option("target", sbom.target,
                     "a rendered variant's name (from the manifests and their locks), "
                     "else an image reference")
        ->required();
    c.sbom_cmd
        ->add_option("-o,--output", sbom.output,
                     "where to write the SBOM (- for stdout; a file is written atomically)")
        ->capture_default_str();
    c.sbom_cmd->add_option("--probes", sbom.probes_dir,
                           "directory of the probe programs (an image only; default: the "
                           "installed ones)");
    c.sbom_cmd->add_option("--python", sbom.python,
                           "the image's python whose packages to list (default: the one the "
                           "image runs)");

    auto& checks = c.checks;
    c.checks_cmd = c.app.add_subcommand(
        "checks", "list every check, finding and error signature ID, or print one's page");
    c.checks_cmd->add_option("id", checks.id, "an ID, e.g. TD130, DR113, EX170");
    add_report_flag(c.checks_cmd, "--json", checks.json, "the reference as JSON");
    add_report_flag(c.checks_cmd, "--markdown", checks.markdown,
                    "the reference as Markdown (docs/checks.md)");
    c.checks_cmd->add_option("--data", common.data_dir, "knowledge base directory");

    c.cache_cmd = c.app.add_subcommand(
        "cache", "the sandbox's image store: images read without an engine, unpacked by layer");
    c.cache_cmd->require_subcommand(1);
    c.cache_list_cmd = c.cache_cmd->add_subcommand(
        "list",
        "every unpacked root: its chain of layers, what its top layer added, when last used");
    add_report_flag(c.cache_list_cmd, "--json", c.cache.json, "the list as JSON");
    c.cache_prune_cmd = c.cache_cmd->add_subcommand(
        "prune", "remove the least recently used roots until the store is under a size");
    c.cache_prune_cmd->add_option("--max-size", c.cache.max_size,
                                  "keep at most this much (e.g. 20G; 0 removes everything; "
                                  "default: $TORCHDOCK_SANDBOX_CACHE_MAX, else 50G)");

    auto& kb_refresh = c.kb_refresh;
    c.kb_cmd = c.app.add_subcommand("kb", "the knowledge base (data/*.json)");
    c.kb_cmd->require_subcommand(1);
    c.kb_refresh_cmd = c.kb_cmd->add_subcommand(
        "refresh",
        "update data/torch.json from the package index (PyPI); the only command "
        "that needs the network");
    c.kb_refresh_cmd->add_option("--data", common.data_dir,
                                 "knowledge base directory (default: $TORCHDOCK_DATA, else "
                                 "../share/torchdock/data from the binary's directory)");
    c.kb_refresh_cmd->add_flag("--check", kb_refresh.check,
                               "write nothing; exit 1 when the data disagrees with the index");
    c.kb_refresh_cmd->add_option("--release", kb_refresh.releases,
                                 "torch release to read, e.g. 2.11.0 (repeatable; default: every "
                                 "release from the oldest in the data on)");
    c.kb_refresh_cmd->add_option(
        "--index-url", kb_refresh.index_url,
        "PEP 691 simple index to read (default: pip's built-in default index, PyPI, "
        "as the host's pip names it)");
    c.kb_refresh_cmd->add_option("--index-name", kb_refresh.index_label,
                                 "how sources name that index (default: PyPI for pip's default "
                                 "index)");
    c.kb_refresh_cmd->add_option("-j,--jobs", kb_refresh.jobs, "requests in flight at once")
        ->capture_default_str()
        ->check(CLI::Range(1, 32));
    c.kb_refresh_cmd->add_flag("--arch-lists", kb_refresh.arch_lists,
                               "also read each release's CUDA arch list from the fatbins of "
                               "torch/lib/libtorch_cuda.so in its default wheel (range reads of "
                               "300 to 700 MB per release)");
    c.kb_refresh_cmd->add_flag("--extensions", kb_refresh.extensions,
                               "update data/extensions.json instead: each tracked release of a "
                               "CUDA extension package, its Requires-Dist on torch and the "
                               "fatbin targets of every shared object in its wheel (range "
                               "reads); --release then names the projects to read");
    add_duration_option(c.kb_refresh_cmd, "--lock-wait", kb_refresh.lock_wait_s,
                        "to wait for another kb refresh writing the same data directory (its "
                        "lock file .torchdock-kb.lock)",
                        3600, 0);

    return owned;
}

}  // namespace td::app
