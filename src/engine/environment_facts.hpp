#pragma once
// Facts about an environment that no probe reports: OS release, glibc, environment
// variables, /dev/shm size, the container runtime we are in (host), or the same read from
// an image through a throwaway container.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "core/diagnose/doctor.hpp"
#include "engine/image_host.hpp"

namespace td::engine {

EnvironmentFacts host_facts();

// This machine's facts with doctor's probes run on it (each within `timeout_s`), judging the
// torch of `python` (default: the environment's own, core/validate/runtime_env).
struct HostReading {
    EnvironmentFacts facts;
    std::map<std::string, ProbeRun> probes;
};
HostReading read_host(const KnowledgeBase& kb, const std::filesystem::path& probes_dir,
                      const std::optional<std::string>& python, int timeout_s);
// Size of /dev/shm a default `docker run` of the image gets; an Error says why it could
// not be read.
Result<long long> shm_bytes_in_image(const ImageHost& api, const std::string& image,
                                     const std::string& run_label);

// Whether this host's kernel runs `elf_machine` ("aarch64") binaries through an emulator:
// binfmt_misc is enabled and has an enabled qemu-<machine> handler (Debian's
// qemu-user-static with binfmt-support registers them). Says nothing of an engine on
// another host.
bool host_emulates(const std::string& elf_machine);

Result<EnvironmentFacts> image_facts(const ImageHost& api, const std::string& image,
                                     const std::string& run_label);

}  // namespace td::engine
