#pragma once
// What the knowledge base knows of CUDA extension packages (data/extensions.json): for each
// release that `kb refresh --extensions` read from the package index, the Linux x86_64
// wheel it read (file name and sha256), the torch its METADATA pins (Requires-Dist), and the
// GPU code of each shared object in it (the SASS and PTX targets of its fatbin containers).
// Render refuses an extension whose torch pin or GPU code cannot fit a variant from these
// facts, before anything is built. Pure: parses the text handed in.
#include <cstdint>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace td {

struct ExtensionObject {
    std::string path;                  // member of the wheel: "xformers/_C.so"
    std::vector<std::string> targets;  // "sm_80", "sm_90a", "compute_90", as fatbins name them
    std::uint64_t containers = 0;      // fatbin containers read
};

struct ExtensionRelease {
    std::string version;         // "0.0.33.post2"
    std::string wheel, sha256;   // the wheel read, and its sha256 from the index
    std::string requires_torch;  // the specifier of its Requires-Dist on torch ("==2.9.1");
                                 // "" when it does not require torch
    std::vector<ExtensionObject> objects;  // shared objects with GPU code, by path
    std::string source;                    // how the facts were read, citing the wheel
};

struct ExtensionInfo {
    std::string name;   // normalized project name: "xformers"
    std::string index;  // how sources name the index ("PyPI")
    // Releases `kb refresh --extensions` reads; `releases` holds what it found, in this order.
    std::vector<std::string> track;
    std::vector<ExtensionRelease> releases;
    const ExtensionRelease* release(const std::string& version) const;
};

// A CUDA toolkit pip installs from the package index, for extensions built from source: the
// wheels with nvcc, the crt headers, NVVM and CCCL for one CUDA major.minor.
struct PipToolkit {
    std::string cuda;                   // "13.0": the CUDA runtime it compiles for
    std::string home;                   // its directory under site-packages: "nvidia/cu13"
    std::vector<std::string> packages;  // exact pins: "nvidia-cuda-nvcc==13.0.88"
    // The CUDA runtime's package, pinned at the version torch pins: "nvidia-cuda-runtime".
    std::string runtime_package;
    std::string source;
};

// A CUDA major whose toolkit wheels on the index have no nvcc (so nothing builds there).
struct NoPipToolkit {
    std::string cuda_major;  // "12"
    std::string source;      // what was seen in which wheels
};

struct ExtensionFacts {
    std::vector<ExtensionInfo> extensions;
    std::vector<PipToolkit> toolkits;       // "pip_toolkits"
    std::vector<NoPipToolkit> no_toolkits;  // "no_pip_toolkit"
    const PipToolkit* toolkit(const std::string& cuda_major_minor) const;
    const NoPipToolkit* no_toolkit(const std::string& cuda_major) const;
    const ExtensionInfo* find(const std::string& normalized_name) const;
    std::vector<std::string> names() const;
};

// The text of data/extensions.json for `facts`, as `kb refresh --extensions` writes it
// (parse_extension_facts reads it back to the same facts).
std::string extension_facts_text(const ExtensionFacts& facts);

// Errors name the JSON path and the refused value ("$.extensions[0].releases[1].sha256").
Result<ExtensionFacts> parse_extension_facts(const std::string& text);

// Why the loader (parse_extension_facts) would refuse `release` as a release of
// data/extensions.json ("$.release.requires_torch: ... refused: ..."), "" when it would take
// it: the same code reads it back, so `kb refresh --extensions` never writes what the loader
// refuses.
std::string extension_release_problem(const ExtensionRelease& release);

}  // namespace td
