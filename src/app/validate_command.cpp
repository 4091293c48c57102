// `torchdock validate`: run the probes inside images and judge what they see.
#include <atomic>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "app/probe_containers.hpp"
#include "app/settings.hpp"
#include "core/diagnose/explain.hpp"
#include "core/validate/checks.hpp"
#include "core/validate/platform.hpp"
#include "core/validate/probe_plan.hpp"
#include "core/validate/waivers.hpp"
#include "engine/container_run.hpp"
#include "engine/docker_api.hpp"
#include "engine/environment_facts.hpp"
#include "engine/files.hpp"
#include "engine/install_layout.hpp"
#include "engine/interrupt.hpp"
#include "engine/probe_exec.hpp"
#include "engine/project_loader.hpp"
#include "engine/runtime_env.hpp"
#include "report/sarif_report.hpp"
#include "report/validation_report.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace fs = std::filesystem;

namespace {

std::vector<ReportFlag> report_flags(const ValidateOptions& opts) {
    return {{"--json", &opts.json},
            {"--junit", &opts.junit},
            {"--markdown", &opts.markdown},
            {"--sarif", &opts.sarif}};
}

// Everything the flags say, checked before any work: exit 2 on the first problem.
Status check_flags(const ValidateOptions& opts, int& gpu_count) {
    for (const auto& image : opts.images)
        if (image.empty() || !is_valid_utf8(image) ||
            image.find_first_of(" \t\r\n") != std::string::npos)
            return Error{ErrorKind::Usage,
                         "image " + quote_value(image) + " is not an image reference"};
    if (auto st = check_report_flags(report_flags(opts)); !st) return st;
    // auto/all: every GPU (when the engine can give any); none; or a count N.
    gpu_count = -1;
    if (opts.gpus == "none") {
        gpu_count = 0;
    } else if (opts.gpus != "auto" && opts.gpus != "all") {
        bool digits = !opts.gpus.empty() && opts.gpus.size() < 4 &&
                      opts.gpus.find_first_not_of("0123456789") == std::string::npos;
        if (!digits)
            return Error{ErrorKind::Usage, "--gpus " + quote_value(opts.gpus) +
                                               " is not auto, all, none or a number of GPUs"};
        gpu_count = std::stoi(opts.gpus);
    }
    return ok_status();
}

// Whether the engine can give GPUs to containers; `reason` says why not.
bool gpu_tier_available(const Result<engine::EngineInfo>& engine, const ValidateOptions& opts,
                        int gpu_count, std::string& reason) {
    if (gpu_count == 0) {
        reason = "--gpus " + opts.gpus;
        return false;
    }
    if (engine && std::find(engine->runtimes.begin(), engine->runtimes.end(), "nvidia") !=
                      engine->runtimes.end())
        return true;
    reason =
        "the engine has no NVIDIA runtime (nvidia-container-toolkit), so no GPU can be given to a "
        "container";
    return false;
}

struct Run {
    const ValidateOptions& opts;
    const KnowledgeBase& kb;
    const ErrorSignatures& signatures;
    const engine::DockerApi& api;
    const std::map<std::string, std::string>& overrides;
    fs::path probes_dir;
    std::string engine_arch;  // GET /info Architecture ("x86_64"); "" when unknown
    bool gpu_tier = false;
    int gpus = 0;
    std::string gpu_reason;
    std::string run_label;
    std::atomic<bool> engine_lost{false};
    std::vector<Waiver> waivers{};  // --waive, then the settings file's (labels per image)
};

// --waive ID=reason, then the settings file's "waivers": refused with exit 2 when an ID is
// unknown or not waivable, or a reason is missing.
Result<std::vector<Waiver>> gather_waivers(const ValidateOptions& opts) {
    std::vector<Waiver> out;
    for (const auto& text : opts.waive) {
        std::string error;
        Waiver w = parse_waiver(text, "--waive", error);
        if (!error.empty()) return Error{ErrorKind::Usage, "--waive: " + error};
        out.push_back(std::move(w));
    }
    SettingsOptions settings_opts;
    settings_opts.config = opts.config;
    auto settings = load_settings(settings_opts, waiver_problem);
    if (!settings) return settings.error();
    for (const auto& [id, reason] : settings->waivers) out.push_back({id, reason, "settings"});
    return out;
}

void validate_one(Run& run, report::ImageValidation& v) {
    auto info = run.api.inspect_image(v.image);
    if (!info) {
        v.error = info.error().message;
        return;
    }
    if (!info.value()) {
        v.error = "no such image: " + v.image + " (build or pull it first)";
        v.missing_image = true;
        return;
    }
    progress("validate " + v.image + ": running the probes in " +
             (info.value()->id.empty() ? v.image : info.value()->id.substr(0, 19)));
    ValidationInput in;
    in.image = v.image;
    in.expect = gather_expectations(v.image, info.value()->labels, info.value()->env, run.kb,
                                    run.overrides);
    v.expectations_source = in.expect.count("source") ? in.expect["source"] : "none found";
    in.platform = info.value()->platform();
    const std::string image_machine = elf_machine_of(info.value()->architecture);
    // The host's probes, or the linux-arm64 set for an arm64 image on an x86 engine (run under
    // qemu-user where this host emulates arm64), and the tier that follows.
    const auto probe_set = engine::image_reading(run.probes_dir, info.value()->architecture,
                                                 run.engine_arch, run.opts.files_only);
    const ReadingTier& tier = probe_set.tier;
    const bool files_only = tier.kind == ReadingTier::FilesOnly;
    const bool emulated = tier.kind == ReadingTier::Emulated;
    in.files_only_reason = files_only ? tier.reason : "";
    v.platform = in.platform;
    v.tier = tier.name();
    v.tier_reason = tier.reason;
    in.gpu_tier = run.gpu_tier && tier.kind == ReadingTier::Full;
    in.gpu_skip_reason = files_only ? "files only"
                         : emulated ? "the image runs under qemu-user, which emulates no GPU"
                                    : run.gpu_reason;
    std::vector<engine::ProbeSpec> specs;
    for (auto& p :
         files_only ? engine::files_only_probes() : engine::validation_probes(run.gpu_tier)) {
        for (auto& flag : label_probe_flags(p.name, info.value()->labels))
            p.args.push_back(std::move(flag));
        if (!p.gpu_only || in.gpu_tier) specs.push_back(std::move(p));
    }
    // The image as `docker run IMAGE python` runs it: its entrypoint's environment, the
    // python its PATH resolves to (engine/runtime_env).
    // Every container runs the image ID resolved here: a tag moved meanwhile changes nothing.
    const std::string& id = info.value()->id.empty() ? v.image : info.value()->id;
    // The files-only tier's probes read an image of any architecture: they are this host's
    // static programs, and the kernel runs them whatever the image's own files are. The
    // emulated tier's are the image's architecture's (probe_set), run by qemu-user like the
    // image's code.
    auto reading = engine::probe_image(
        run.api, id, *info.value(), std::move(specs), probe_set.probes_dir, run.opts.python,
        in.gpu_tier ? run.gpus : 0, static_cast<int>(run.opts.probe_timeout_s), run.kb,
        run.run_label, files_only ? std::optional<std::string>(image_machine) : std::nullopt);
    in.probes = std::move(reading.probes);
    in.runtime = std::move(reading.plan);
    in.entrypoint = std::move(reading.entrypoint);
    in.image_id = info.value()->id;
    v.image_id = in.image_id;
    if (engine::interrupted()) return;
    // /dev/shm as probe-env read it (no shell needed); a shell only when it could not.
    const ProbeRun& env = in.probes["env"];
    if (env.usable() && env.data.contains("shm_bytes") && env.data["shm_bytes"].is_number())
        in.shm_bytes = env.data["shm_bytes"].get<long long>();
    else if (auto shm = engine::shm_bytes_in_image(run.api, id, run.run_label))
        in.shm_bytes = shm.value();
    else
        in.shm_error = shm.error().message;
    // Error texts (an import error, torch's cuDNN error) get the cause and fix `explain` gives.
    in.advise = [&run](const std::string& text) -> std::optional<ErrorAdvice> {
        auto e = explain_error_text(text, run.signatures, run.kb);
        if (!e) return std::nullopt;
        return ErrorAdvice{e->id, e->cause, e->fix};
    };
    v.checks = evaluate(in, run.kb);
    // Flags and settings first, then the image's own io.torchdock.waive.* labels.
    auto waivers = run.waivers;
    for (auto& w : waivers_from_labels(info.value()->labels, v.waiver_notes))
        waivers.push_back(std::move(w));
    for (auto& note : apply_waivers(v.checks, waivers)) v.waiver_notes.push_back(std::move(note));
    v.probes = in.probes;
    // Probes that could not reach the engine are errors already; say why once, and exit 3.
    if (auto alive = run.api.ping(); !alive) {
        v.error = "the Docker engine went away during validation: " + alive.error().message;
        run.engine_lost = true;
    }
}

Status write_reports(const ValidateOptions& opts,
                     const std::vector<report::ImageValidation>& results) {
    for (auto st : {emit_report(opts.json, report::validation_json(results)),
                    emit_report(opts.junit, report::validation_junit(results)),
                    emit_report(opts.markdown, report::validation_markdown(results)),
                    emit_report(opts.sarif, report::validation_sarif(results))})
        if (!st) return st;
    return ok_status();
}

}  // namespace

int run_validate(const CommonOptions& common, const ValidateOptions& opts) {
    engine::install_interrupt_handlers();
    int gpu_count = -1;
    if (auto st = check_flags(opts, gpu_count); !st) return fail(st.error());
    auto overrides = parse_expect_overrides(opts.expect, validate_expect_keys());
    if (!overrides) return fail(overrides.error());
    auto waivers = gather_waivers(opts);
    if (!waivers) return fail(waivers.error());
    auto data_dir = engine::find_data_dir(common.data_dir);
    auto kb = engine::load_knowledge_base(data_dir);
    if (!kb) return fail(kb.error());
    auto signatures = engine::load_error_signatures(data_dir);
    if (!signatures) return fail(signatures.error());
    auto probes_at = engine::locate_probes_dir(opts.probes_dir);
    if (auto st = engine::check_probes_dir(probes_at); !st) return fail(st.error());
    fs::path probes_dir = probes_at.path;
    auto api = engine::DockerApi::from_environment();
    if (!api) return fail(api.error());
    if (auto st = api->ping(); !st) return fail(st.error());
    remove_leftovers_of_killed_runs(api.value());

    std::string gpu_reason;
    auto engine_info = api->info();
    bool gpu_tier = gpu_tier_available(engine_info, opts, gpu_count, gpu_reason);
    Run run{opts,
            kb.value(),
            signatures.value(),
            api.value(),
            overrides.value(),
            probes_dir,
            engine_info ? engine_info->architecture : std::string(),
            gpu_tier,
            gpu_count,
            gpu_reason,
            engine::new_run_label()};
    run.waivers = std::move(waivers.value());
    if (!run.gpu_tier && opts.require_gpu) {
        print_error("--require-gpu: " + run.gpu_reason);
        return k_exit_environment;
    }

    // With a report on stdout, the tables go to stderr so stdout stays parseable.
    std::ostream& human = any_to_stdout(report_flags(opts)) ? std::cerr : std::cout;
    // Verdicts are coloured on stdout only (paint_verdicts follows stdout's colour setting).
    auto shown = [&human](const std::string& table) {
        return &human == &std::cout ? paint_verdicts(table) : table;
    };
    std::vector<report::ImageValidation> results(opts.images.size());
    std::atomic<std::size_t> next{0};
    std::mutex print_mutex;
    auto worker = [&] {
        for (std::size_t i; (i = next++) < opts.images.size();) {
            if (engine::interrupted()) return;
            auto start = std::chrono::steady_clock::now();
            report::ImageValidation& v = results[i];
            v.image = opts.images[i];
            validate_one(run, v);
            v.seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (engine::interrupted()) return;
            progress("validate " + v.image + ": done in " + format_seconds(v.seconds));
            std::lock_guard lock(print_mutex);
            human << shown(report::validation_table(v)) << "\n";
        }
    };
    std::vector<std::thread> threads;
    int workers = std::min<int>(opts.jobs, static_cast<int>(opts.images.size()));
    for (int t = 0; t < workers; ++t) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    if (engine::interrupted()) return stop_interrupted_run(api.value(), run.run_label);

    human << shown(report::validation_summary(results));
    if (auto st = write_reports(opts, results); !st) return fail(st.error());

    bool any_error = false, any_failed = false, nothing_ran = false;
    for (const auto& v : results) {
        any_error = any_error || !v.error.empty();
        any_failed = any_failed || (v.error.empty() && v.failed() > 0);
        nothing_ran = nothing_ran || (v.error.empty() && v.passed() + v.warned() == 0);
    }
    if (nothing_ran) print_error("no check ran for at least one image: that counts as a failure");
    if (run.engine_lost) return k_exit_environment;
    for (const auto& v : results)
        if (v.missing_image && !any_failed) return k_exit_config;
    if (any_error && !any_failed) return k_exit_environment;
    return any_failed || nothing_ran || any_error ? k_exit_check_failed : k_exit_ok;
}

}  // namespace td::app
