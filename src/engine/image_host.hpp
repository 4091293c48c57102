#pragma once
// Where an image's processes run: the container engine (EngineHost: throwaway containers,
// engine/container_run) or the sandbox (engine/sandbox: the image's layers unpacked by
// engine/image_store and run under bubblewrap, no daemon). The probes, probe-env and the
// shell facts go through this one interface, so validate, doctor, preflight, sbom and
// node-check read an image the same way in both tiers.
#include <memory>
#include <optional>
#include <string>

#include "engine/container_run.hpp"
#include "engine/docker_api.hpp"

namespace td::engine {

class ImageHost {
  public:
    virtual ~ImageHost() = default;
    // "engine" or "sandbox", named in every report.
    virtual const char* tier() const = 0;
    virtual Result<std::optional<ImageInfo>> inspect_image(const std::string& ref) const = 0;
    // One command in the image, removed afterwards, confined and bounded in time and output.
    virtual Result<ContainerRunResult> run(const ContainerRunSpec& spec) const = 0;
    // Whether the host can still run anything (the engine answers; a sandbox's root exists).
    virtual Status ping() const = 0;
};

// The engine's containers. An engine on another machine (tcp://, ssh://) cannot see this
// machine's files: a bind of a local directory (the probes) becomes a named volume there,
// filled once with the directory's files (engine/remote_probes) and mounted read-only.
class EngineHost final : public ImageHost {
  public:
    explicit EngineHost(DockerApi api);
    const char* tier() const override { return "engine"; }
    Result<std::optional<ImageInfo>> inspect_image(const std::string& ref) const override {
        return m_api.inspect_image(ref);
    }
    Result<ContainerRunResult> run(const ContainerRunSpec& spec) const override;
    Status ping() const override { return m_api.ping(); }
    const DockerApi& api() const { return m_api; }

  private:
    DockerApi m_api;
    struct Volumes;
    std::shared_ptr<Volumes> m_volumes;  // local directory -> its volume on a remote engine
};

}  // namespace td::engine
