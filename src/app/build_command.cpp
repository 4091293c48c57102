// `torchdock build`: the rendered variants into images, N at a time, with a summary.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "app/mirror_settings.hpp"
#include "app/output.hpp"
#include "core/build/build_index.hpp"
#include "core/build/build_record.hpp"
#include "core/build/image_ref.hpp"
#include "core/render/grammar.hpp"
#include "engine/builder.hpp"
#include "engine/docker_api.hpp"
#include "engine/files.hpp"
#include "engine/interrupt.hpp"
#include "report/build_summary.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace fs = std::filesystem;

namespace {

struct BuildContext {
    const BuildOptions& opts;
    const engine::DockerApi& api;
    const engine::BuildBackend& backend;
    const Mirrors& mirrors;
    std::string ca_cert;
    bool tty = false;
    std::mutex print_mutex;
};

std::string mirrored_dockerfile(const std::string& text, const Mirrors& mirrors) {
    return rewrite_from_lines(text, [&](const std::string& image) {
        auto ref = ImageRef::parse(image);
        return ref ? apply_mirrors(ref.value(), mirrors).str() : image;
    });
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
    req.variant = entry.name;
    req.dockerfile_text = mirrored_dockerfile(text.value(), ctx.mirrors);
    req.reference = rec.reference;
    req.work_root = ctx.opts.work_dir;
    req.no_cache = ctx.opts.no_cache;
    req.ca_cert = ctx.ca_cert;
    req.timeout = std::chrono::minutes(ctx.opts.timeout_minutes);
    if (ctx.tty)
        req.on_step = [&ctx, &entry](const std::string& step) {
            std::lock_guard lock(ctx.print_mutex);
            std::cerr << "  " << entry.name << ": " << step.substr(0, 110) << "\n";
        };
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
        return rec;
    }
    rec.result = BuildRecord::Result::Built;
    if (auto info = ctx.api.inspect_image(rec.reference); info && info.value())
        rec.size_bytes = info.value()->size;
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
    return ok_status();
}

}  // namespace

int run_build(const BuildOptions& opts) {
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
    auto mirrors = load_mirrors(opts.mirror);
    if (!mirrors) return fail(mirrors.error());
    auto api = engine::DockerApi::from_environment();
    if (!api) return fail(api.error());
    if (auto st = api->ping(); !st) return fail(st.error());
    auto backend = engine::detect_build_backend();
    if (!backend) return fail(backend.error());

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
    }
    BuildContext ctx{
        opts, api.value(), backend.value(), mirrors.value(), ca_cert, ::isatty(STDERR_FILENO) == 1,
        {}};
    if (ctx.tty)
        std::cerr << "building " << selected.size() << " variant"
                  << (selected.size() == 1 ? "" : "s") << " with " << backend->describe() << ", "
                  << opts.jobs << " at a time\n";
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
            if (ctx.tty) {
                std::lock_guard lock(ctx.print_mutex);
                std::cerr << "  " << records[i].variant << ": "
                          << build_result_name(records[i].result) << "\n";
            }
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

    std::cout << (opts.json ? report::build_json(records) : report::build_table(records));
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
