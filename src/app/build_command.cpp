// `torchdock build`: the rendered variants into images, N at a time, with a summary.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <thread>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "app/settings.hpp"
#include "core/build/build_index.hpp"
#include "core/build/build_record.hpp"
#include "core/build/image_ref.hpp"
#include "core/grammar/grammar.hpp"
#include "core/render/platforms.hpp"
#include "core/render/render_plan.hpp"
#include "engine/builder.hpp"
#include "engine/docker_api.hpp"
#include "engine/environment_facts.hpp"
#include "engine/files.hpp"
#include "engine/interrupt.hpp"
#include "engine/project_loader.hpp"
#include "report/build_summary.hpp"
#include "util/duration.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace fs = std::filesystem;

namespace {

struct BuildContext {
    const BuildOptions& opts;
    const engine::DockerApi& api;
    const engine::BuildBackend& backend;
    const Settings& settings;
    std::string ca_cert;
    bool host_network = true;
};

std::string mirrored_dockerfile(const std::string& text, const Mirrors& mirrors) {
    return rewrite_from_lines(text, [&](const std::string& image) {
        auto ref = ImageRef::parse(image);
        return ref ? apply_mirrors(ref.value(), mirrors).str() : image;
    });
}

// Whether the user passed build argument `name` with --build-arg.
bool user_build_arg(const BuildOptions& opts, const std::string& name) {
    for (const auto& a : opts.build_args)
        if (a.starts_with(name + "=")) return true;
    return false;
}

// The build arguments of one variant: the package indexes from the settings (PIP_INDEX_URL
// for a PyPI mirror, TORCH_INDEX_URL for its PyTorch wheel index directory), then the
// user's --build-arg, which win.
std::vector<std::string> build_args_for(const BuildContext& ctx, const IndexEntry& entry) {
    std::vector<std::string> args;
    const IndexSettings& ix = ctx.settings.indexes;
    if (!ix.pypi.empty()) args.push_back("PIP_INDEX_URL=" + ix.pypi);
    if (!entry.torch_index_dir.empty() && !ix.pytorch.empty())
        args.push_back("TORCH_INDEX_URL=" + torch_variant_index(ix.pytorch, entry.torch_index_dir));
    args.insert(args.end(), ctx.opts.build_args.begin(), ctx.opts.build_args.end());
    return args;
}

// After a failed pip step: the indexes pip was given, and the settings that change them.
std::string pip_failure_hint(const BuildContext& ctx, const IndexEntry& entry) {
    const IndexSettings& ix = ctx.settings.indexes;
    std::string pypi = user_build_arg(ctx.opts, "PIP_INDEX_URL") ? "the --build-arg PIP_INDEX_URL"
                       : ix.pypi.empty()                         ? "pip's default index (PyPI)"
                                                                 : ix.pypi;
    std::string out =
        "pip used " + pypi + " for PyPI packages (setting indexes.pypi or --pypi-index changes it)";
    if (!entry.torch_index_dir.empty()) {
        std::string torch = user_build_arg(ctx.opts, "TORCH_INDEX_URL")
                                ? "the --build-arg TORCH_INDEX_URL"
                                : torch_variant_index(ix.pytorch, entry.torch_index_dir);
        out +=
            ", and " + torch + " for torch (setting indexes.pytorch or --torch-index changes it)";
    }
    return out;
}

BuildRecord build_one(BuildContext& ctx, const IndexEntry& entry) {
    BuildRecord rec;
    rec.variant = entry.name;
    rec.reference = entry.reference();
    // Variant directories must be real directories inside the tree, not symlinks out of it.
    auto text = engine::read_file_in_tree(ctx.opts.dockerfiles_dir, entry.dockerfile);
    if (!text) {
        rec.result = BuildRecord::Result::Failed;
        rec.error = text.error().message;
        return rec;
    }
    engine::BuildRequest req;
    // Its hash-locked sets, staged under the names the Dockerfile binds.
    std::vector<std::pair<std::string, std::string>> locks = {
        {entry.python_lock, k_requirements_lock}, {entry.build_lock, k_build_requirements_lock}};
    for (const auto& [platform, file] : entry.python_locks)
        locks.emplace_back(file, requirements_lock_for(platform));
    for (const auto& [file, name] : locks) {
        if (file.empty()) continue;
        auto lock = engine::read_file_in_tree(ctx.opts.dockerfiles_dir, file);
        if (!lock) {
            rec.result = BuildRecord::Result::Failed;
            rec.error = lock.error().message + " (re-run `torchdock render`)";
            return rec;
        }
        req.context_files[name] = lock.value();
    }
    req.variant = entry.name;
    req.dockerfile_text = mirrored_dockerfile(text.value(), ctx.settings.mirrors);
    req.build_args = build_args_for(ctx, entry);
    req.netrc = ctx.settings.indexes.netrc;
    req.reference = rec.reference;
    req.work_root = ctx.opts.work_dir;
    req.no_cache = ctx.opts.no_cache;
    req.platform = ctx.opts.platform.value_or("");
    req.host_network = ctx.host_network;
    req.ca_cert = ctx.ca_cert;
    req.timeout = std::chrono::seconds(ctx.opts.timeout_s);
    req.on_step = [&entry](const std::string& step) {
        progress("build " + entry.name + ": " + terminal_text(step, 110));
    };
    progress("build " + entry.name + ": started (log " +
             (fs::path(ctx.opts.work_dir) / entry.name / "build.log").string() + ")");
    engine::BuildOutcome out = engine::run_build(ctx.backend, req);
    rec.seconds = out.seconds;
    rec.steps = out.steps;
    rec.cached = out.cached;
    rec.log_path = out.log_path;
    rec.image_id = out.image_id;
    if (out.interrupted) {
        rec.result = BuildRecord::Result::Interrupted;
        return rec;
    }
    if (!out.ok) {
        rec.result = BuildRecord::Result::Failed;
        rec.timed_out = out.timed_out;
        rec.failed_step = out.failed_step;
        rec.failure_tail = out.failure_tail;
        rec.error = out.error;
        if (out.failed_step.find("pip install") != std::string::npos)
            rec.hint = pip_failure_hint(ctx, entry);
        return rec;
    }
    rec.result = BuildRecord::Result::Built;
    auto info = ctx.api.inspect_image(rec.reference);
    if (info && info.value()) rec.size_bytes = info.value()->size;
    if (ctx.opts.platform) {
        // The image the engine holds is the platform asked for (arm64's "v8" variant aside);
        // an image that cannot be read is not taken for it.
        const std::string got = info && info.value() ? info.value()->platform() : std::string();
        if (got != *ctx.opts.platform && got != *ctx.opts.platform + "/v8") {
            rec.result = BuildRecord::Result::Failed;
            rec.error = !info ? "the built image's platform could not be read (" +
                                    info.error().message + ")"
                        : !info.value() ? "the built image " + rec.reference +
                                              " is not in the engine, so its platform is unknown"
                        : got.empty() ? "the built image records no platform, not " +
                                            *ctx.opts.platform + " as --platform asked"
                                      : "the built image is " + got + ", not " +
                                            *ctx.opts.platform + " as --platform asked";
            return rec;
        }
    }
    if (ctx.opts.push) {
        // The image's repository path under the push registry (its own registry host replaced).
        auto parsed = ImageRef::parse(entry.reference());
        std::string repo = *ctx.opts.push + "/" + (parsed ? parsed->repository : entry.image);
        auto tagged = ctx.api.tag_image(rec.reference, repo, entry.tag);
        Status pushed = tagged ? ctx.api.push_image(repo, entry.tag) : tagged;
        if (!pushed) {
            rec.result = BuildRecord::Result::Failed;
            rec.error = pushed.error().message;
        } else {
            rec.pushed_to = repo + ":" + entry.tag;
        }
    }
    return rec;
}

}  // namespace

namespace {

// The files `build` hands to the engine for `selected`: the index it read, each Dockerfile
// and each hash-locked set, relative to the rendered tree.
std::vector<std::string> files_built_from(const std::vector<IndexEntry>& selected) {
    std::vector<std::string> files = {"index.json"};
    for (const auto& e : selected) {
        files.push_back(e.dockerfile);
        for (const auto& f : {e.python_lock, e.build_lock})
            if (!f.empty()) files.push_back(f);
        for (const auto& [platform, f] : e.python_locks) files.push_back(f);
    }
    return files;
}

// build builds only what render writes: every file it would hand to the engine is compared
// with what `render` writes from the manifests now (the comparison of `render --check`).
// Prints what differs; returns the exit code, or 0 when the tree is what render writes.
int check_tree_is_rendered(const CommonOptions& common, const BuildOptions& opts,
                           const std::vector<IndexEntry>& selected) {
    const std::string how =
        "run `torchdock render` (or pass --manifests DIR, the manifests the tree was rendered "
        "from), or --skip-render-check to build the tree as it is, without the index netrc";
    std::error_code ec;
    if (!fs::is_directory(common.manifests_dir, ec)) {
        print_error("build compares " + opts.dockerfiles_dir +
                    " with what render writes from the manifests, and " +
                    quote_value(common.manifests_dir) + " is not a directory: " + how +
                    "; nothing was built");
        return k_exit_config;
    }
    // The plan of `render --check`; its warnings were shown when the tree was rendered.
    auto kb = engine::load_knowledge_base(engine::find_data_dir(common.data_dir));
    if (!kb) return fail(kb.error());
    auto sources = engine::load_manifests(common.manifests_dir);
    if (!sources) return fail(sources.error());
    const RenderPlan plan = plan_render(sources.value(), kb.value());
    if (!plan.problems.empty()) {
        for (const auto& d : plan.problems) std::cerr << format_diagnostic(d) << "\n";
        print_error(std::to_string(plan.problem_count) + " problem" +
                    (plan.problem_count == 1 ? "" : "s") + " in the manifests, so " +
                    opts.dockerfiles_dir + " cannot be compared with what render writes: " + how +
                    "; nothing was built");
        return k_exit_config;
    }
    std::vector<std::string> differ;
    for (const auto& file : files_built_from(selected)) {
        const std::string shown = (fs::path(opts.dockerfiles_dir) / file).string();
        auto want = plan.files.find(file);
        if (want == plan.files.end()) {
            differ.push_back(shown + " (the manifests render no such file)");
            continue;
        }
        auto have = engine::read_file_in_tree(opts.dockerfiles_dir, file);
        if (!have)
            differ.push_back(shown + " (" + have.error().message + ")");
        else if (have.value() != want->second)
            differ.push_back(shown);
    }
    if (differ.empty()) return 0;
    print_error(join(differ, ", ") + (differ.size() == 1 ? " differs" : " differ") +
                " from what `torchdock render` writes from " + common.manifests_dir +
                " (edited by hand, or rendered from other manifests): " + how +
                "; nothing was built");
    return k_exit_config;
}

// The flags, before any work: exit 2 on the first problem.
Status check_build_flags(const BuildOptions& opts) {
    if (opts.dockerfiles_dir.empty())
        return Error{ErrorKind::Usage, "--dockerfiles needs a directory"};
    if (opts.work_dir.empty())
        return Error{ErrorKind::Usage, "--work-dir needs a directory (default .torchdock/build)"};
    if (opts.ca_cert && opts.ca_cert->empty())
        return Error{ErrorKind::Usage,
                     "--ca-cert needs a file (leave the flag out to use the host's CA bundle)"};
    if (opts.push)
        if (auto bad = grammar::check_registry_host(*opts.push); !bad.empty())
            return Error{ErrorKind::Usage, "--push " + quote_value(*opts.push) + ": " + bad};
    if (opts.platform)
        if (auto bad = check_build_platform(*opts.platform); !bad.empty())
            return Error{ErrorKind::Usage, "--platform: " + bad};
    for (const auto& a : opts.build_args) {
        auto eq = a.find('=');
        std::string name = a.substr(0, eq);
        std::string bad = eq == std::string::npos ? "expected K=V" : grammar::check_env_name(name);
        if (bad.empty()) bad = grammar::check_plain_text(a.substr(eq + 1), 4096);
        // The index arguments obey the index URL rules; any other URL must at least not
        // carry credentials (a build argument is recorded in the image's history).
        if (bad.empty() && (name == "PIP_INDEX_URL" || name == "TORCH_INDEX_URL"))
            bad = check_index_url(a.substr(eq + 1));
        else if (bad.empty() && a.find("://") != std::string::npos)
            bad = check_url_without_credentials(a.substr(eq + 1));
        if (!bad.empty())
            return Error{ErrorKind::Usage, "--build-arg " + quote_value(a) + ": " + bad};
    }
    return ok_status();
}

}  // namespace

int run_build(const CommonOptions& common, const BuildOptions& opts) {
    engine::install_interrupt_handlers();
    if (auto st = check_build_flags(opts); !st) return fail(st.error());
    fs::path index_path = fs::path(opts.dockerfiles_dir) / "index.json";
    auto index_text = engine::read_text_file(index_path);
    if (!index_text)
        return fail(
            {ErrorKind::Config, index_text.error().message + " (run `torchdock render` first)"});
    auto index = parse_build_index(index_text.value(), index_path.string());
    if (!index) return fail(index.error());

    std::vector<IndexEntry> selected;
    for (const auto& e : index.value()) {
        bool match = opts.patterns.empty();
        for (const auto& p : opts.patterns) match = match || glob_match(p, e.name);
        if (match) selected.push_back(e);
    }
    if (selected.empty()) {
        print_error("no rendered variant matches " + join(opts.patterns, " ") +
                    " (see `torchdock list`)");
        return k_exit_config;
    }
    // --platform builds only variants whose manifest lists that platform.
    std::vector<std::string> not_built;
    for (const auto& e : selected)
        if (opts.platform &&
            std::find(e.platforms.begin(), e.platforms.end(), *opts.platform) == e.platforms.end())
            not_built.push_back(e.name + " (" + join(e.platforms, ", ") + ")");
    if (!not_built.empty()) {
        print_error("--platform " + *opts.platform + ": " + join(not_built, ", ") +
                    (not_built.size() == 1 ? " is" : " are") +
                    " not built for it; add it to the manifest's \"platforms\" and render");
        return k_exit_config;
    }
    if (!opts.skip_render_check)
        if (int code = check_tree_is_rendered(common, opts, selected); code != 0) return code;
    auto settings = load_settings(opts.settings);
    if (!settings) return fail(settings.error());
    if (opts.skip_render_check && !settings->indexes.netrc.empty()) {
        // A secret goes only into Dockerfiles torchdock wrote.
        note("--skip-render-check: the index credentials file " + settings->indexes.netrc +
             " is not handed to these builds, whose Dockerfiles torchdock did not check");
        settings->indexes.netrc.clear();
    }
    // A variant that installs from the PyTorch wheel index needs one: say so before building.
    std::vector<std::string> need_index;
    for (const auto& e : selected)
        if (!e.torch_index_dir.empty() && settings->indexes.pytorch.empty() &&
            !user_build_arg(opts, "TORCH_INDEX_URL"))
            need_index.push_back(e.name);
    if (!need_index.empty()) {
        print_error(join(need_index, ", ") + (need_index.size() == 1 ? " installs" : " install") +
                    " torch from the PyTorch wheel index, and no index is set: set "
                    "indexes.pytorch in torchdock.json or pass --torch-index URL (the index "
                    "root; each variant uses ROOT/cuXYZ), or --build-arg TORCH_INDEX_URL=URL");
        return k_exit_config;
    }
    auto api = engine::DockerApi::from_environment();
    if (!api) return fail(api.error());
    if (auto st = api->ping(); !st) return fail(st.error());
    auto backend = engine::detect_build_backend();
    if (!backend) return fail(backend.error());
    if (opts.platform) {
        auto info = api->info();
        if (!info) return fail(info.error());
        auto verdict = judge_build_platform(*opts.platform, info->architecture,
                                            engine::host_emulates(wheel_machine(*opts.platform)));
        if (!verdict.error.empty()) {
            print_error(verdict.error);
            return k_exit_environment;
        }
        if (!verdict.note.empty()) note(verdict.note);
    }

    // pip in the build trusts what this host trusts: --ca-cert, else the bundle the host's
    // pip/requests/OpenSSL are pointed at, else the system bundle.
    std::string ca_cert;
    if (opts.ca_cert)
        ca_cert = *opts.ca_cert;
    else
        for (const char* candidate : std::initializer_list<const char*>{
                 std::getenv("PIP_CERT"), std::getenv("REQUESTS_CA_BUNDLE"),
                 std::getenv("SSL_CERT_FILE"), "/etc/ssl/certs/ca-certificates.crt"})
            if (candidate && *candidate && fs::is_regular_file(candidate)) {
                ca_cert = candidate;
                break;
            }
    if (!ca_cert.empty()) {
        if (!fs::is_regular_file(ca_cert)) {
            print_error("--ca-cert " + ca_cert + " is not a readable file");
            return k_exit_config;
        }
        ca_cert = fs::absolute(ca_cert).string();
        if (auto e = check_secret_file_path(ca_cert); !e.empty()) {
            print_error(
                "the CA bundle for pip (--ca-cert, PIP_CERT, REQUESTS_CA_BUNDLE or "
                "SSL_CERT_FILE): " +
                e);
            return k_exit_config;
        }
    }
    BuildContext ctx{opts, api.value(), backend.value(), settings.value(), ca_cert};
    // RUN steps get the host's network only where the engine has no bridge to give them one.
    auto bridge = api->has_network("bridge");
    ctx.host_network = !bridge || !bridge.value();
    if (ctx.host_network)
        note("the engine has no bridge network" +
             (bridge ? std::string() : " (" + bridge.error().message + ")") +
             ": RUN steps use the host's network and can reach its loopback services");
    progress("building " + std::to_string(selected.size()) + " variant" +
             (selected.size() == 1 ? "" : "s") + " with " + backend->describe() + ", " +
             std::to_string(opts.jobs) + " at a time, each within " +
             format_duration(opts.timeout_s));
    std::vector<BuildRecord> records(selected.size());
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i; (i = next++) < selected.size();) {
            if (engine::interrupted()) {
                records[i].variant = selected[i].name;
                records[i].reference = selected[i].reference();
                records[i].result = BuildRecord::Result::Interrupted;
                continue;
            }
            try {
                records[i] = build_one(ctx, selected[i]);
            } catch (const std::exception& e) {  // a thread must not take the process down
                records[i].variant = selected[i].name;
                records[i].reference = selected[i].reference();
                records[i].result = BuildRecord::Result::Failed;
                records[i].error = std::string("internal error: ") + e.what();
            }
            progress("build " + records[i].variant + ": " + build_result_name(records[i].result));
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < std::min<int>(opts.jobs, static_cast<int>(selected.size())); ++t)
        threads.emplace_back(worker);
    for (auto& t : threads) t.join();

    // A build that failed because the engine went away is an environment problem.
    bool any_failed = false;
    for (const auto& r : records)
        any_failed = any_failed || r.result == BuildRecord::Result::Failed;
    Status engine_alive = any_failed ? api->ping() : ok_status();
    if (!engine_alive)  // the client's own last words ("no image ID") hide the real cause
        for (auto& r : records)
            if (r.result == BuildRecord::Result::Failed)
                r.error =
                    "the Docker engine went away during this build (the client said: " + r.error +
                    ")";

    if (opts.json) {
        if (auto st = emit_report(opts.json, report::build_json(records)); !st)
            return fail(st.error());
    } else {
        std::cout << paint_verdicts(report::build_table(records));
    }
    std::cerr << report::build_failures(records);
    if (engine::interrupted()) {
        print_error("interrupted: running builds were stopped; nothing was tagged for them");
        return k_exit_interrupted;
    }
    if (!engine_alive) {
        print_error("the Docker engine went away during the build: " +
                    engine_alive.error().message);
        return k_exit_environment;
    }
    bool only_timeouts = any_failed;
    for (const auto& r : records)
        if (r.result == BuildRecord::Result::Failed && !r.timed_out) only_timeouts = false;
    if (only_timeouts) return k_exit_timeout;
    return any_failed ? k_exit_check_failed : k_exit_ok;
}

}  // namespace td::app
