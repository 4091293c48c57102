#include "engine/install_layout.hpp"

#include <cstdlib>
#include <system_error>

#include "engine/environment_facts.hpp"

#ifndef TORCHDOCK_DATA_FROM_BIN
#error "TORCHDOCK_DATA_FROM_BIN must be defined by the build (cmake/install_layout.cmake)"
#endif
#ifndef TORCHDOCK_PROBES_FROM_BIN
#error "TORCHDOCK_PROBES_FROM_BIN must be defined by the build (cmake/install_layout.cmake)"
#endif

namespace td::engine {
namespace fs = std::filesystem;

fs::path own_binary() {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : exe;
}

namespace {

LocatedDir locate(const std::optional<std::string>& flag, const char* flag_name,
                  const char* env_name, const char* from_bin) {
    if (flag) return {*flag, flag_name};
    if (const char* env = std::getenv(env_name); env && *env)
        return {env, std::string("$") + env_name};
    fs::path exe = own_binary();
    if (exe.empty())
        return {fs::path(from_bin), "relative to the binary (/proc/self/exe unreadable)"};
    fs::path dir = (exe.parent_path() / from_bin).lexically_normal();
    std::error_code ec;
    if (fs::path real = fs::canonical(dir, ec); !ec) dir = real;
    return {dir, "relative to the binary " + exe.string()};
}

}  // namespace

LocatedDir locate_data_dir(const std::optional<std::string>& flag) {
    return locate(flag, "--data", "TORCHDOCK_DATA", TORCHDOCK_DATA_FROM_BIN);
}

LocatedDir locate_probes_dir(const std::optional<std::string>& flag) {
    return locate(flag, "--probes", "TORCHDOCK_PROBES", TORCHDOCK_PROBES_FROM_BIN);
}

Status check_probes_dir(const LocatedDir& dir) {
    std::error_code ec;
    std::string missing;
    if (!fs::is_directory(dir.path, ec)) {
        missing = "it does not exist";
    } else {
        for (const char* probe : {"probe-env", "torch_probe.py"})
            if (!fs::is_regular_file(dir.path / probe, ec))
                missing += std::string(missing.empty() ? "it has no " : ", no ") + probe;
    }
    if (missing.empty()) return ok_status();
    return Error{ErrorKind::Config,
                 "no probes in " + dir.path.string() + " (" + dir.chosen_by + "): " + missing +
                     "; set --probes DIR or $TORCHDOCK_PROBES to a probe directory (installed: "
                     "" TORCHDOCK_PROBES_FROM_BIN
                     " from the binary's directory; built: "
                     "build/<preset>/libexec/torchdock/probes), or reinstall torchdock"};
}

ImageReading image_reading(const fs::path& probes_dir, const std::string& image_arch,
                           const std::string& engine_arch, bool files_only) {
    fs::path image_set = probes_dir;
    bool probes_for_image = false;
    if (auto subdir = probe_set_subdir(image_arch, engine_arch); subdir && !subdir->empty()) {
        image_set = probes_dir / *subdir;
        probes_for_image = static_cast<bool>(
            check_probes_dir({image_set, "the linux/" + oci_arch(image_arch) + " set"}));
    }
    ReadingTier tier = reading_tier(image_arch, engine_arch, files_only,
                                    host_emulates(elf_machine_of(image_arch)), probes_for_image);
    // The files-only tier runs this host's static programs, whatever the image's architecture.
    if (tier.kind != ReadingTier::Emulated) image_set = probes_dir;
    return {image_set, std::move(tier)};
}

}  // namespace td::engine
