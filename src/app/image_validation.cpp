#include "app/image_validation.hpp"

#include "app/console.hpp"
#include "app/image_hosts.hpp"
#include "core/build/image_source.hpp"
#include "core/diagnose/explain.hpp"
#include "core/validate/checks.hpp"
#include "core/validate/platform.hpp"
#include "core/validate/probe_plan.hpp"
#include "engine/container_run.hpp"
#include "engine/environment_facts.hpp"
#include "engine/install_layout.hpp"
#include "engine/interrupt.hpp"
#include "engine/probe_exec.hpp"
#include "engine/runtime_env.hpp"
#include "util/strings.hpp"

namespace td::app {

Status check_image_reference(const std::string& image) {
    // A transport (docker://, oci:, ...) is checked by its own grammar.
    if (auto source = parse_image_source(image); !source)
        return source.error();
    else if (!source->in_engine())
        return ok_status();
    bool ok = !image.empty() && image.size() <= 512 && image.find("..") == std::string::npos;
    for (char c : image)
        ok = ok && (std::isalnum(static_cast<unsigned char>(c)) ||
                    std::string_view("._/:@-").find(c) != std::string_view::npos);
    if (ok) return ok_status();
    return Error{ErrorKind::Usage, "image " + quote_value(image) +
                                       " is not an image reference (name[:tag][@digest] or an "
                                       "image ID: letters, digits and ._/:@- only)"};
}

bool gpu_tier_available(const Result<engine::EngineInfo>& engine, bool podman,
                        const std::string& gpus_flag, int gpu_count, std::string& reason) {
    if (gpu_count == 0) {
        reason = "--gpus " + gpus_flag;
        return false;
    }
    if (podman) {
        // Podman's issue 22645: DeviceRequests through its compatible API start a container
        // without the GPU; HostConfig.Runtime is accepted and ignored. Podman gives GPUs
        // through CDI (`podman run --device nvidia.com/gpu=all`).
        reason =
            "Podman's Docker-compatible API ignores the GPU requests torchdock makes "
            "(DeviceRequests, the nvidia runtime); Podman gives GPUs through CDI (`podman run "
            "--device nvidia.com/gpu=all`), which torchdock does not request";
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

void validate_image(ValidationRun& run, report::ImageValidation& v) {
    // A transport image runs in a sandbox of its own, made here; an engine image in the engine.
    std::unique_ptr<engine::SandboxHost> sandbox;
    const engine::ImageHost* host = run.engine;
    std::string engine_arch = run.engine_arch;
    bool gpu_tier = run.gpu_tier;
    std::string gpu_reason = run.gpu_reason;
    if (run.engine && std::string(run.engine->tier()) == "sandbox") {
        v.runner = "sandbox";  // opened by the caller (node-check)
        engine_arch = host_machine();
        gpu_tier = false;
    } else if (!is_engine_image(v.image)) {
        v.runner = "sandbox";
        auto opened = open_sandbox(v.image, v.runner_detail);
        if (!opened) {
            v.error = opened.error().message;
            v.missing_image = opened.error().kind != ErrorKind::Environment &&
                              opened.error().kind != ErrorKind::Timeout;
            return;
        }
        sandbox = std::move(opened.value());
        host = sandbox.get();
        engine_arch = host_machine();
        if (gpu_tier) gpu_reason = "the sandbox tier binds no GPU yet (CDI devices are not read)";
        gpu_tier = false;
    }
    if (!host) {
        v.error = "no engine to run " + v.image + " in";
        return;
    }
    auto info = host->inspect_image(v.image);
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
    for (const auto& [key, value] : run.overrides) in.user_expect_keys.push_back(key);
    v.expectations_source = in.expect.count("source") ? in.expect["source"] : "none found";
    // Every container runs the image ID resolved here: a tag moved meanwhile changes nothing.
    const std::string& id = info.value()->id.empty() ? v.image : info.value()->id;
    // A second validate of this image starts its probes now, beside probe-env, with the specs
    // they had last time; a run counts only where this run's evidence gives the same spec.
    auto early = engine::start_early(
        *host, id, *info.value(),
        std::string("validate") + (run.quick ? " quick" : "") + (gpu_tier ? " gpu" : ""),
        run.opts.python, static_cast<int>(run.opts.probe_timeout_s), run.run_label);
    // The platform from the image's files (probe-env, this host's static program), the config's
    // architecture a claim compared with them; the tier and probe set follow from the files.
    auto platform = engine::read_platform(*host, id, *info.value(), run.probes_dir, engine_arch,
                                          run.opts.files_only, run.run_label);
    in.platform = platform.platform;
    in.platform_problem = platform.claim_problem;
    const ReadingTier& tier = platform.set.tier;
    const bool files_only = tier.kind == ReadingTier::FilesOnly;
    const bool emulated = tier.kind == ReadingTier::Emulated;
    in.files_only_reason = files_only ? tier.reason : "";
    v.platform = in.platform;
    v.platform_claimed = info.value()->platform();
    v.tier = tier.name();
    v.tier_reason = tier.reason;
    in.gpu_tier = gpu_tier && tier.kind == ReadingTier::Full;
    in.gpu_skip_reason = files_only ? "files only"
                         : emulated ? "the image runs under qemu-user, which emulates no GPU"
                                    : gpu_reason;
    std::vector<engine::ProbeSpec> specs;
    for (auto& p : files_only  ? engine::files_only_probes()
                   : run.quick ? engine::quick_validation_probes()
                               : engine::validation_probes(gpu_tier)) {
        for (auto& flag : label_probe_flags(p.name, info.value()->labels))
            p.args.push_back(std::move(flag));
        if (!p.gpu_only || in.gpu_tier) specs.push_back(std::move(p));
    }
    // The image as `docker run IMAGE python` runs it: its entrypoint's environment, the
    // python its PATH resolves to (engine/runtime_env).
    // The files-only tier's probes read an image of any architecture: they are this host's
    // static programs, and the kernel runs them whatever the image's own files are. The
    // emulated tier's are the image's architecture's (probe_set), run by qemu-user like the
    // image's code.
    auto reading = engine::probe_image(
        *host, id, *info.value(), std::move(specs), platform.set.probes_dir, run.opts.python,
        in.gpu_tier ? run.gpus : 0, static_cast<int>(run.opts.probe_timeout_s), run.kb,
        run.run_label, files_only ? std::optional<std::string>(platform.machine) : std::nullopt,
        &platform.env, &early);
    in.probes = std::move(reading.probes);
    in.runtime = std::move(reading.plan);
    in.entrypoint = std::move(reading.entrypoint);
    in.cmd = info.value()->cmd;
    in.image_id = info.value()->id;
    v.image_id = in.image_id;
    if (engine::interrupted()) return;
    // /dev/shm as probe-env read it (no shell needed); a shell only when it could not.
    if (auto read = engine::env_shm_bytes(in.probes))
        in.shm_bytes = *read;
    else if (auto shm = engine::shm_bytes_in_image(*host, id, run.run_label))
        in.shm_bytes = shm.value();
    else
        in.shm_error = shm.error().message;
    v.shm_bytes = in.shm_bytes;
    // Error texts (an import error, torch's cuDNN error) get the cause and fix `explain` gives.
    in.advise = [&run](const std::string& text) -> std::optional<ErrorAdvice> {
        auto e = explain_error_text(text, run.signatures, run.kb);
        if (!e) return std::nullopt;
        return ErrorAdvice{e->id, e->cause, e->fix};
    };
    v.checks = evaluate(in, run.kb);
    // The user's waivers (flags, settings, the manifest they validate with); the image's own
    // io.torchdock.waive.* labels are its vendor's claim, shown and never applied.
    v.waiver_notes = image_waiver_claims(info.value()->labels);
    auto waivers = run.waivers;
    if (auto m = run.manifest_waivers.find(v.image); m != run.manifest_waivers.end())
        waivers.insert(waivers.end(), m->second.begin(), m->second.end());
    else if (run.with_manifests)
        v.waiver_notes.push_back("no variant of --manifests renders " + v.image +
                                 " (as its image and tag): no manifest waiver applies to it");
    for (auto& note : apply_waivers(v.checks, waivers)) v.waiver_notes.push_back(std::move(note));
    v.probes = in.probes;
    // Probes that could not reach the engine are errors already; say why once, and exit 3.
    if (auto alive = host->ping(); !alive) {
        v.error = std::string(host->tier() == std::string("engine") ? "the Docker engine"
                                                                    : "the sandbox") +
                  " went away during validation: " + alive.error().message;
        run.engine_lost = true;
    }
}

}  // namespace td::app
