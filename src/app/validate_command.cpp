// `torchdock validate`: run the probes inside images and judge what they see.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "core/validate/checks.hpp"
#include "engine/container_run.hpp"
#include "engine/docker_api.hpp"
#include "engine/environment_facts.hpp"
#include "engine/files.hpp"
#include "engine/interrupt.hpp"
#include "engine/probe_exec.hpp"
#include "engine/project_loader.hpp"
#include "report/validation_report.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace fs = std::filesystem;

namespace {}  // namespace

int run_validate(const CommonOptions& common, const ValidateOptions& opts) {
    engine::install_interrupt_handlers();
    auto overrides = parse_expect_overrides(opts.expect);
    if (!overrides) return fail(overrides.error());
    // auto/all: every GPU (when the engine can give any); none; or a count N.
    int gpu_count = -1;
    if (opts.gpus == "none")
        gpu_count = 0;
    else if (opts.gpus != "auto" && opts.gpus != "all") {
        bool digits = !opts.gpus.empty() && opts.gpus.size() < 4 &&
                      opts.gpus.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) {
            print_error("--gpus " + quote_value(opts.gpus) +
                        " is not auto, all, none or a number of GPUs");
            return k_exit_config;
        }
        gpu_count = std::stoi(opts.gpus);
    }
    auto kb = engine::load_knowledge_base(engine::find_data_dir(common.data_dir));
    if (!kb) return fail(kb.error());
    fs::path probes_dir =
        opts.probes_dir ? fs::path(*opts.probes_dir) : engine::default_probes_dir();
    if (!fs::is_directory(probes_dir)) {
        print_error("probe directory " + probes_dir.string() +
                    " does not exist (build the probes, or set --probes / $TORCHDOCK_PROBES)");
        return k_exit_config;
    }
    auto api = engine::DockerApi::from_environment();
    if (!api) return fail(api.error());
    if (auto st = api->ping(); !st) return fail(st.error());

    bool gpu_tier = false;
    std::string gpu_reason;
    if (gpu_count == 0) {
        gpu_reason = "--gpus " + opts.gpus;
    } else {
        auto runtimes = api->runtimes();
        bool nvidia =
            runtimes && std::find(runtimes->begin(), runtimes->end(), "nvidia") != runtimes->end();
        if (nvidia)
            gpu_tier = true;
        else
            gpu_reason =
                "the engine has no NVIDIA runtime (nvidia-container-toolkit), so no GPU can be "
                "given to a container";
    }
    if (!gpu_tier && opts.require_gpu) {
        print_error("--require-gpu: " + gpu_reason);
        return k_exit_environment;
    }

    const std::string run_label = engine::new_run_label();
    std::vector<report::ImageValidation> results(opts.images.size());
    std::atomic<std::size_t> next{0};
    std::mutex print_mutex;
    auto worker = [&] {
        for (std::size_t i; (i = next++) < opts.images.size();) {
            auto start = std::chrono::steady_clock::now();
            report::ImageValidation& v = results[i];
            v.image = opts.images[i];
            auto info = api->inspect_image(v.image);
            if (!info)
                v.error = info.error().message;
            else if (!info.value()) {
                v.error = "no such image: " + v.image + " (build or pull it first)";
                v.missing_image = true;
            }
            if (v.error.empty() && !engine::interrupted()) {
                ValidationInput in;
                in.image = v.image;
                in.expect = gather_expectations(v.image, info.value()->labels, info.value()->env,
                                                kb.value(), overrides.value());
                v.expectations_source =
                    in.expect.count("source") ? in.expect["source"] : "none found";
                in.gpu_tier = gpu_tier;
                in.gpu_skip_reason = gpu_reason;
                int gpus = gpu_tier ? gpu_count : 0;
                for (auto p : engine::validation_probes(gpu_tier)) {
                    if (engine::interrupted()) break;
                    if (p.gpu_only && !gpu_tier) continue;
                    // The GEMM probe reports the fraction of the GPU's datasheet peak.
                    if (p.name == "gemm")
                        if (auto peak = gemm_peak_flag(in.probes["cuda"], kb.value()))
                            p.args.push_back(*peak);
                    in.probes[p.name] = engine::run_probe_in_image(
                        api.value(), v.image, p, probes_dir, gpus, opts.probe_timeout_s, run_label);
                }
                in.shm_bytes = engine::shm_bytes_in_image(api.value(), v.image, run_label);
                v.checks = evaluate(in, kb.value());
            }
            v.seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::lock_guard lock(print_mutex);
            std::cout << report::validation_table(v) << "\n";
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < std::max(1, std::min<int>(opts.jobs, static_cast<int>(opts.images.size())));
         ++t)
        threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    if (engine::interrupted()) {
        engine::remove_run_containers(api.value(), run_label);
        print_error("interrupted; the probe containers were removed");
        return k_exit_interrupted;
    }
    std::cout << report::validation_summary(results);
    auto write = [](const std::optional<std::string>& path, const std::string& text) -> Status {
        if (!path) return ok_status();
        fs::path p = *path;
        return engine::write_files(p.parent_path().empty() ? "." : p.parent_path(),
                                   {{p.filename().string(), text}});
    };
    for (auto st : {write(opts.json, report::validation_json(results)),
                    write(opts.junit, report::validation_junit(results)),
                    write(opts.markdown, report::validation_markdown(results))})
        if (!st) return fail(st.error());

    bool any_error = false, any_failed = false, nothing_ran = false;
    for (const auto& v : results) {
        any_error = any_error || !v.error.empty();
        any_failed = any_failed || (v.error.empty() && v.failed() > 0);
        nothing_ran = nothing_ran || (v.error.empty() && v.passed() + v.warned() == 0);
    }
    if (nothing_ran) print_error("no check ran for at least one image: that counts as a failure");
    for (const auto& v : results)
        if (v.missing_image && !any_failed) return k_exit_config;
    if (any_error && !any_failed) return k_exit_environment;
    return any_failed || nothing_ran || any_error ? k_exit_check_failed : k_exit_ok;
}

}  // namespace td::app
