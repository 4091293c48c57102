// `torchdock validate`: run the probes inside images and judge what they see.
#include <atomic>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/image_hosts.hpp"
#include "app/image_validation.hpp"
#include "app/output.hpp"
#include "app/probe_containers.hpp"
#include "app/settings.hpp"
#include "core/diagnose/explain.hpp"
#include "core/validate/checks.hpp"
#include "core/validate/platform.hpp"
#include "core/validate/probe_plan.hpp"
#include "core/validate/waivers.hpp"
#include "engine/container_run.hpp"
#include "engine/data_files.hpp"
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
        if (auto st = check_image_reference(image); !st) return st;
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
    // Whose settings: the user's own are theirs to accept (SARIF suppressions); a working
    // tree's are the repository's word.
    const std::string source =
        (settings->users_own ? std::string(k_waiver_from_user_settings) : "repository settings") +
        " " + settings->file;
    for (const auto& [id, reason] : settings->waivers) out.push_back({id, reason, source});
    return out;
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

// With --manifests DIR: for each image a variant of DIR renders (its reference is the
// manifest's image and the variant's tag, or that under another registry), the manifest's
// waivers, with the file they come from. The repository the user renders may waive for what
// it renders; an image matched by no variant gets none.
std::optional<std::map<std::string, std::vector<Waiver>>> manifest_waivers(
    const CommonOptions& common, const std::vector<std::string>& images, int& code) {
    auto plan = plan_project(common, code, false, std::nullopt);
    if (!plan) return std::nullopt;
    std::map<std::string, std::vector<Waiver>> out;
    for (const auto& image : images)
        for (const auto& v : plan->variants) {
            const std::string ref = v.manifest->image + ":" + v.tag;
            if (image != ref && !ends_with(image, "/" + ref)) continue;
            for (const auto& [id, reason] : v.manifest->waivers)
                out[image].push_back({id, reason, "manifest " + v.manifest->file});
        }
    return out;
}

int run_validate(const CommonOptions& common, const ValidateOptions& opts) {
    engine::install_interrupt_handlers();
    int gpu_count = -1;
    if (auto st = check_flags(opts, gpu_count); !st) return fail(st.error());
    auto overrides = parse_expect_overrides(opts.expect, validate_expect_keys());
    if (!overrides) return fail(overrides.error());
    auto waivers = gather_waivers(opts);
    if (!waivers) return fail(waivers.error());
    std::map<std::string, std::vector<Waiver>> from_manifests;
    if (opts.with_manifests) {
        int code = 0;
        auto found = manifest_waivers(common, opts.images, code);
        if (!found) return code;
        from_manifests = std::move(found.value());
    }
    auto data = engine::load_data_files(common.data_dir, {.signatures = true});
    if (!data) return fail(data.error());
    const KnowledgeBase& kb = data->kb;
    auto probes_at = engine::locate_probes_dir(opts.probes_dir);
    if (auto st = engine::check_probes_dir(probes_at); !st) return fail(st.error());
    fs::path probes_dir = probes_at.path;
    // The engine only when an image is the engine's: transports run in the sandbox.
    std::optional<engine::EngineHost> engine_host;
    std::string gpu_reason =
        "no engine: the sandbox tier binds no GPU yet (CDI devices are not read)";
    Result<engine::EngineInfo> engine_info = Error{ErrorKind::Environment, "no engine is used"};
    bool gpu_tier = false;
    if (needs_engine(opts.images)) {
        auto api = engine::DockerApi::from_environment();
        if (!api) return fail(api.error());
        if (auto st = api->ping(); !st) return fail(st.error());
        remove_leftovers_of_killed_runs(api.value());
        engine_info = api->info();
        gpu_tier =
            gpu_tier_available(engine_info, api->is_podman(), opts.gpus, gpu_count, gpu_reason);
        engine_host.emplace(std::move(api.value()));
    }
    ValidationRun run{opts,
                      kb,
                      *data->signatures,
                      engine_host ? &*engine_host : nullptr,
                      overrides.value(),
                      probes_dir,
                      engine_info ? engine_info->architecture : std::string(),
                      gpu_tier,
                      gpu_count,
                      gpu_reason,
                      engine::new_run_label()};
    run.waivers = std::move(waivers.value());
    run.manifest_waivers = std::move(from_manifests);
    run.with_manifests = opts.with_manifests;
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
            validate_image(run, v);
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
    if (engine::interrupted())
        return engine_host ? stop_interrupted_run(engine_host->api(), run.run_label)
                           : stop_interrupted_sandbox_run();

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
