#pragma once
// One image validated: its probes run (the tier its platform allows) and their answers judged.
// Shared by `validate` (many images, in parallel) and `node-check` (one image on this node).
#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "core/diagnose/explain.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "core/validate/waivers.hpp"
#include "engine/image_host.hpp"
#include "report/validation_report.hpp"

namespace td::app {

// Whether the engine can give GPUs to containers; `reason` says why not. `gpu_count` 0 is
// "--gpus none". `podman`: the engine is Podman's Docker-compatible API, which takes the GPU
// requests torchdock makes (DeviceRequests, the nvidia runtime) and ignores them.
// An image reference or ID as engines take it (name[:tag][@digest], an ID): letters, digits
// and ._/:@- only, no "..", so nothing else reaches an API path; Usage error naming it.
Status check_image_reference(const std::string& image);

bool gpu_tier_available(const Result<engine::EngineInfo>& engine, bool podman,
                        const std::string& gpus_flag, int gpu_count, std::string& reason);

struct ValidationRun {
    const ValidateOptions& opts;
    const KnowledgeBase& kb;
    const ErrorSignatures& signatures;
    // The engine, for engine images; null when none is needed (every image a transport,
    // which runs in a sandbox validate_image opens); or a sandbox the caller opened already.
    const engine::ImageHost* engine;
    const std::map<std::string, std::string>& overrides;
    std::filesystem::path probes_dir;
    std::string engine_arch;  // GET /info Architecture ("x86_64"); "" when unknown (the sandbox's
                              // is this machine's)
    bool gpu_tier = false;
    int gpus = 0;
    std::string gpu_reason;
    std::string run_label;
    std::atomic<bool> engine_lost{false};
    std::vector<Waiver> waivers{};  // --waive, then the settings file's
    // validate --manifests: the waivers of the manifest that renders each image (by the image
    // reference as given), applied after the user's own.
    std::map<std::string, std::vector<Waiver>> manifest_waivers{};
    bool with_manifests = false;
    bool quick = false;  // node-check: engine::quick_validation_probes
};

// Fills `v` (whose `image` is set): its checks, probes and tier, or `error`.
void validate_image(ValidationRun& run, report::ImageValidation& v);

}  // namespace td::app
