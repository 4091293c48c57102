#pragma once
// Which release of each manifest extension a variant gets, and whether it can work there,
// decided from the knowledge base's facts (data/extensions.json) before anything is built:
// its METADATA's pin on torch must admit the variant's torch (the refusal names the
// release that fits), and the GPU code of its wheel must run on every target GPU (the
// refusal names the GPU and what each shared object has). Pure.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "core/render/manifest.hpp"

namespace td {

struct VariantExtension {
    std::string name, version;  // normalized name; the release
    // What the lock resolves and pip installs: "xformers==0.0.33.post2", or
    // "flash-attn @ URL#sha256=HEX" for a wheel by URL.
    std::string requirement;
    std::string url, sha256;      // a wheel by URL, or the source archive of one built from source
    bool from_source = false;     // built in the variant's build stage (SourceBuild)
    std::optional<int> max_jobs;  // its MAX_JOBS default, from source
    // The facts it was checked against ("" when the knowledge base has none: then notes say
    // what was not checked).
    std::string facts_source;
    std::vector<std::string> notes;  // for the Dockerfile's comment and `list`
};

// `error(json_path, message)` is called for each refusal; the variant's torch, python and
// target GPUs must be set. Returns what the variant installs, in manifest order.
std::vector<VariantExtension> resolve_extensions(
    const Manifest& m, const std::string& variant_name, const std::string& torch,
    const std::string& python, const std::vector<std::string>& target_gpus, const KnowledgeBase& kb,
    const std::function<void(const std::string&, const std::string&)>& error);

// How a variant builds its extensions from source: a stage FROM its Python set with a CUDA
// toolkit (the base image's own on a devel nvidia/cuda base, else the one pip installs: the
// knowledge base's pip_toolkits for the variant's CUDA, with the CUDA runtime torch pins) and
// the extensions' build requirements, then each wheel built without build isolation for the
// target GPUs; the runtime stage installs the wheels.
struct SourceBuild {
    std::string cuda;  // "13.0"
    // The pip toolkit's directory under site-packages ("nvidia/cu13"); "" for the base
    // image's toolkit in k_base_cuda_home.
    std::string home;
    std::string toolkit_source;  // the facts' source, or which base image
    // What pip installs in the build stage, exact pins: the pip toolkit with the CUDA runtime
    // torch pins, and the extensions' build_requires. The build lock's inputs (none: no lock).
    std::vector<std::string> requirements;
    std::string arch_list;      // TORCH_CUDA_ARCH_LIST: the target GPUs' "8.0;9.0"
    std::string cudart_soname;  // its CUDA's (data/cuda.json): "libcudart.so.13"
};
inline constexpr const char* k_base_cuda_home = "/usr/local/cuda";

struct Variant;  // core/render/variant.hpp

// The source build of a variant (its manifest, CUDA, flavor, target GPUs and name set) with
// extensions built from source; nullopt (with errors reported) when it cannot work there: no
// CUDA, no toolkit (not a devel nvidia/cuda base, and no pip toolkit for its CUDA: the
// knowledge base says why), no target GPUs or one its nvcc does not compile for
// (data/cuda.json), or two extensions pinning one build requirement differently (a base
// that brings its own torch is refused for every extension before), or the CUDA runtime
// torch pins not known for a pip toolkit's headers to match.
std::optional<SourceBuild> plan_source_build(
    const Variant& v, const KnowledgeBase& kb,
    const std::function<void(const std::string&, const std::string&)>& error);

// What one release's GPU code does on a GPU of compute capability `cc` ("9.0"): every
// shared object with code that runs there (SASS or PTX by CUDA's rules), and those without.
struct ExtensionGpuFit {
    std::vector<std::string> runs, lacks;  // object paths
};
ExtensionGpuFit extension_gpu_fit(const ExtensionRelease& rel, const std::string& cc);

}  // namespace td
