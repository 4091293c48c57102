#pragma once
// The sandbox tier: an image's root file system (engine/image_store) run under bubblewrap,
// with no container engine. Each run gets new user, mount, PID, IPC, UTS and (unless the
// probe needs the host's) network namespaces, the root read-only, every capability dropped,
// no new privileges, /proc and a minimal /dev of its own, a private /tmp (1 GiB) and
// /dev/shm (64 MiB: the engine's default), a bounded tmpfs at each VOLUME, the probe
// directory bound read-only, and the image's ENV, USER, WORKDIR and ENTRYPOINT applied as the
// engine applies them (core/build/image_source `docker_environment`, `resolve_image_user`).
// The time limit and output bounds are the process runner's (the same as the engine path's).
// As root, the unpacked files keep the owners their layers record (engine/layer_unpack) and a
// USER other than root runs as itself (bubblewrap started through setpriv), so permissions
// are the kernel's as in a container; unprivileged, every file belongs to the invoking user,
// as under enroot.
// GPUs are not bound: a run asking for one is refused with the reason.
#include <filesystem>
#include <string>

#include "core/build/image_source.hpp"
#include "engine/image_host.hpp"

namespace td::engine {

class SandboxHost final : public ImageHost {
  public:
    // `root`: the unpacked root file system; `info`: the image's configuration as the
    // engine's inspect would give it; `reference`: the image as the user named it.
    SandboxHost(std::filesystem::path root, ImageInfo info, std::string reference);
    const char* tier() const override { return "sandbox"; }
    Result<std::optional<ImageInfo>> inspect_image(const std::string& ref) const override;
    Result<ContainerRunResult> run(const ContainerRunSpec& spec) const override;
    Status ping() const override;

    const std::filesystem::path& root() const { return m_root; }
    const std::string& reference() const { return m_reference; }
    // bwrap's argument list for `spec` (exposed for tests).
    Result<std::vector<std::string>> bwrap_argv(const ContainerRunSpec& spec) const;

  private:
    // USER resolved in the image's /etc/passwd and /etc/group, as the engine resolves it.
    Result<ImageUser> as_image_user() const;
    std::filesystem::path m_root;
    ImageInfo m_info;
    std::string m_reference;
};

// bubblewrap's path, or an Environment error that says how to install it.
Result<std::string> find_bwrap();

}  // namespace td::engine
