#pragma once
// What a package index says about one torch release, derived from its Linux x86_64 wheel
// names and the core metadata of its wheels (and of the cuda-toolkit meta-package it
// pins): Python versions, glibc floor, the default build's CUDA pins, and the
// torchvision/torchaudio releases that pair with it. Every fact carries the wheel it
// comes from. Pure: the engine fetches what the steps below ask for.
#include <optional>
#include <string>
#include <vector>

#include "core/pypi/metadata.hpp"
#include "core/pypi/simple_index.hpp"

namespace td::pypi {

// "PyPI torch 2.11.0 wheel torch-2.11.0-cp313-...whl (sha256 <64 hex>)". `index_label`
// names the index by what it is ("PyPI"), never by its host.
std::string cite_wheel(const std::string& index_label, const std::string& project,
                       const IndexFile& file);

struct Fact {
    std::string path;                 // "python.min", "variants.cu130.cudnn", "torchvision", ...
    std::vector<std::string> values;  // one value, or a list (free_threaded, arch_list)
    bool is_list = false;
    std::string source;
    // One value, or "" (none): a JSON string or null in the data file.
    const std::string& value() const;
};

struct ReleaseFacts {
    std::string version;
    std::vector<Fact> facts;
    // What the index said that is not a fact (a library requirement that is not an exact
    // "==VERSION" pin), for the user to read; index text, so shown escaped.
    std::vector<std::string> notes;
    const Fact* find(const std::string& path) const;
};

// Whether a wheel's METADATA describes that wheel: its Name (PEP 503-normalised) and
// Version (PEP 440-equal) must match the file name's. "" when they do; otherwise the
// message that refuses the wheel (index text in it quoted and escaped).
std::string metadata_mismatch(const CoreMetadata& md, const IndexFile& wheel);

// Step 1: from the wheel list alone. Error when the release has no Linux x86_64 wheel.
struct ReleaseWheels {
    std::string version;
    std::vector<const IndexFile*> wheels;       // Linux, of `machine`, newest build tag
    const IndexFile* metadata_wheel = nullptr;  // the wheel whose METADATA is read
    std::string metadata_python;                // its CPython version ("3.13")
    std::string machine = "x86_64";             // the wheels' machine
};
// `machine`: "x86_64" (the knowledge base's main facts) or "aarch64" (its "platforms").
Result<ReleaseWheels> release_wheels(const ProjectIndex& torch, const std::string& version,
                                     const std::string& machine = "x86_64");

// The facts of another platform's build ("linux/arm64"), from that platform's wheels: its
// glibc, default_variant and variants.* facts of `platform_facts` moved under
// "platforms.<platform>." in `out` (its Python range is not kept).
void add_platform_facts(const std::string& platform, const ReleaseFacts& platform_facts,
                        ReleaseFacts& out);

// Python range, free-threaded builds and glibc floor, cited by wheel.
void wheel_name_facts(const std::string& index_label, const ReleaseWheels& rw, ReleaseFacts& out);

// Step 2: the cuda-toolkit requirement of torch's metadata, if it pins one ("13.0.2").
struct ToolkitPin {
    std::string version;
    std::vector<std::string> extras;
    std::string text;
};
std::optional<ToolkitPin> toolkit_pin(const CoreMetadata& torch_md, const MarkerEnvironment& env);

// Step 3: the default build's pins from torch's metadata and, when it pins one, the
// cuda-toolkit metadata (`toolkit`, cited as `toolkit_cite`). Adds "default_variant" and
// "variants.<name>.{cuda,cuda_runtime,cublas,cudnn,nccl}"; a CPU-only wheel gives "cpu".
void pin_facts(const std::string& torch_cite, const CoreMetadata& torch_md,
               const MarkerEnvironment& env, const CoreMetadata* toolkit,
               const std::string& toolkit_cite, ReleaseFacts& out);

// Step 4: pairing a companion (torchvision, torchaudio). The engine reads companion
// releases newest first and feeds each one's torch requirement here until `done()`.
class CompanionPicker {
  public:
    explicit CompanionPicker(const std::string& torch_version);
    // `requirement` is null when the companion's metadata names no torch requirement
    // (it then proves nothing and is skipped).
    void offer(const std::string& companion_version, const Requirement* requirement,
               const std::string& cite);
    // An exact pin (==torch) was found, or a companion pinned to an older torch showed
    // that older companions belong to older torch releases.
    bool done() const { return m_done; }
    // The exact pin if any, else the newest companion whose requirement admits torch.
    std::optional<Fact> result(const std::string& fact_path) const;

  private:
    std::optional<Pep440Version> m_torch;
    bool m_done = false;
    std::optional<Fact> m_exact, m_admits;
};

}  // namespace td::pypi
