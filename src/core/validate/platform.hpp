#pragma once
// The platform an image is built for, and what torchdock can learn of it without running its
// code (the files-only tier): an arm64 image on an x86 engine, or `validate --files-only`.
// Pure: names in, decisions out.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace td {

// The OCI architecture name ("amd64", "arm64") of an OCI, Go or uname name ("x86_64",
// "aarch64", "arm64"); other names lowercased as given, "" for "".
std::string oci_arch(const std::string& name);

// The ELF machine name probe-libs and probe-record use for an OCI architecture ("x86_64" for
// amd64, "aarch64" for arm64); "" when torchdock does not know the machine.
std::string elf_machine_of(const std::string& arch);

// The machine a wheel's tag is built for ("cp311-cp311-manylinux_2_28_aarch64": "aarch64";
// NVIDIA's "manylinux2014_sbsa": "aarch64"; "x86_64", "i686", "ppc64le", "s390x" as named);
// "" for a pure wheel ("any"); "macos" or "windows" for those; nullopt when the tag has no
// platform part (not three '-'-separated parts).
std::optional<std::string> wheel_tag_machine(const std::string& tag);

// The machine an image's files are built for, as probe-env read them (a static program: no
// code of the image runs): the ELF machine of the python that PATH runs (a `#!` script followed
// to its program), else of the first interpreter found, else of /bin/sh. This, not the image
// config's `architecture` (a claim), decides how the image is read. `machine` is an ELF
// machine name ("x86_64", "aarch64", "riscv"; "" when no ELF was read); `evidence` names the
// file ("/usr/bin/python3.11 is an x86_64 ELF").
struct FilesPlatform {
    std::string machine;
    std::string evidence;
};
FilesPlatform files_platform(const nlohmann::json& env_data);

// The OCI architecture of an ELF machine name ("x86_64" -> "amd64", "riscv" -> "riscv64",
// "s390" -> "s390x"); the name itself when torchdock has no OCI name for it.
std::string oci_arch_of_elf(const std::string& machine);

// The image config's architecture claim against its files: "" when they agree, or when
// either says nothing; else a sentence naming both ("the image config says linux/arm64, but
// its files are x86_64 (/usr/bin/python3 is an x86_64 ELF)").
std::string platform_claim_problem(const std::string& config_arch, const FilesPlatform& files);

// How validate reads an image:
//   full       its code runs natively (the image's platform is the engine's);
//   emulated   its code runs under qemu-user: the image is for another architecture, this host
//              has a binfmt qemu handler for it, and torchdock's probes for that architecture
//              are built (the linux-arm64 set beside the host's); no GPU tier;
//   files-only only its files are read: `forced` (--files-only), or another architecture with
//              no emulation or no probes for it.
// `image_arch` is the architecture the image's files are built for (files_platform), the
// config's claim only where no file says it. An engine that records no architecture, or an
// image whose architecture is unknown, is read in the full tier.
struct ReadingTier {
    enum Kind { Full, Emulated, FilesOnly } kind = Full;
    std::string reason;        // a sentence; "" for full
    std::string name() const;  // "full", "emulated", "files-only"
};
ReadingTier reading_tier(const std::string& image_arch, const std::string& engine_arch, bool forced,
                         bool emulated, bool probes_for_image);

// The subdirectory of the probes directory that holds the probes for an image of `image_arch`
// on an engine of `engine_arch`: "" (the host's own set) when they agree or one is unknown,
// "linux-arm64" for an arm64 image elsewhere, nullopt when torchdock builds no set for it.
std::optional<std::string> probe_set_subdir(const std::string& image_arch,
                                            const std::string& engine_arch);

// The directories CPython's site module would put on sys.path for the interpreter at `path`
// (as PATH reaches it) that really is `realpath`, read from names alone: PYTHONPATH, a venv's
// site-packages (the interpreter's grandparent directory), the prefix's
// lib/pythonX.Y/site-packages and lib64/..., Debian's dist-packages for /usr, the user site
// under HOME. X.Y comes from the interpreter's file name ("python3.11"); when no name says it,
// every minor from 3.8 to 3.14 is listed (a directory that is not there is skipped by the
// probes). `environment`: "NAME=value" of the process.
std::vector<std::string> files_only_site_dirs(const std::string& path, const std::string& realpath,
                                              const std::vector<std::string>& environment);

// What torch/version.py says (it is what torch.__version__ and torch.version.cuda report).
struct TorchVersionFile {
    std::string version;  // "2.11.0+cu130"
    std::string cuda;     // "13.0"; "" for None (a CPU build)
    std::string hip;      // "" for None
    bool read = false;    // a __version__ assignment was found
};
TorchVersionFile parse_torch_version_py(const std::string& text);

}  // namespace td
