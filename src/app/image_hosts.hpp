#pragma once
// Which host runs an image argument: a bare name is the engine's image (EngineHost); a
// transport (docker://, oci:, oci-archive:, docker-archive:, squashfs:, core/build/
// image_source) is read and unpacked by engine/image_store and runs in the sandbox
// (engine/sandbox), with no engine at all.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/sandbox.hpp"

namespace td::app {

// Whether any of `images` is an engine image (the engine is then needed).
bool needs_engine(const std::vector<std::string>& images);
bool is_engine_image(const std::string& image);

// The sandbox of a transport image, its layers unpacked (or found in the store); a progress
// line says which and what it cost. `detail` gets the line for reports.
Result<std::unique_ptr<engine::SandboxHost>> open_sandbox(const std::string& image,
                                                          std::string& detail);

// One image argument opened where it runs: an engine image in the engine (pinged, leftovers
// of killed runs removed, inspected), a transport in a sandbox of its own.
struct OpenedImage {
    std::optional<engine::DockerApi> api;  // engine images only
    std::unique_ptr<engine::ImageHost> host;
    engine::ImageInfo info;
    std::string detail;  // the sandbox's: where it came from, what unpacking cost
    // The engine's architecture ("x86_64"), or this machine's for the sandbox.
    std::string machine;
    // The ID the probes run on (the reference when the engine gives none).
    std::string id;
    // After Ctrl-C: the engine's probe containers removed (or the sandbox's said stopped).
    int stop_interrupted(const std::string& run_label) const;
};
// Config error "no such image: X (build or pull it first)" for an engine image it lacks.
Result<OpenedImage> open_image(const std::string& image);

// The size the image store is kept under: --max-size, else $TORCHDOCK_SANDBOX_CACHE_MAX, else
// 50 GiB.
Result<std::uint64_t> sandbox_cache_cap(const std::optional<std::string>& flag);

// "x86_64", "aarch64": this machine's, which runs the sandbox's processes.
std::string host_machine();

}  // namespace td::app
