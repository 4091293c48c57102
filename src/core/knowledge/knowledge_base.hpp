#pragma once
// The knowledge base: facts about CUDA, GPUs, torch wheels, base images and OSes, read
// from data/*.json (each fact carries its source there). Pure: parses texts handed in
// by engine/, answers queries, never reads files itself.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/knowledge/extension_facts.hpp"
#include "util/result.hpp"
#include "util/version.hpp"

namespace td {

struct CudaRelease {
    std::string version;       // "12.4.1"
    std::string min_driver;    // Linux toolkit driver floor, "550.54.15" (or a branch "615")
    bool unconfirmed = false;  // the floor was not read from NVIDIA's own table
};

struct CudaMinor {
    std::string version;  // "12.4"
    std::vector<CudaRelease> releases;
    std::string minor_compat_min_driver;
    std::vector<int> sm;        // real architectures nvcc can compile for, cc*10
    std::string cudart_soname;  // "libcudart.so.12" ("libcudart.so.11.0" for CUDA 11)
};

struct GpuModel {
    std::string model;
    std::vector<std::string> aliases;
    std::string cc;  // "8.0"
    bool datacenter = false;
    std::map<std::string, double> peak_tflops;
};

struct TorchVariant {
    std::string name;                  // "cu121" or "cpu"
    std::string cuda;                  // "12.1", empty for cpu
    std::string cuda_runtime, cublas;  // pinned wheel versions, when known
    std::string cudnn, nccl;
    std::vector<std::string> arch_list;  // "8.0", "9.0+PTX"; empty when unknown
    bool unconfirmed = false;            // some of its facts were not confirmed (see the data file)
};

// A release's build for another platform than Linux x86_64, as the index serves it
// (torch.json "platforms"): "linux/arm64" had CPU-only wheels on PyPI before torch 2.11.0.
struct TorchPlatformBuild {
    std::string platform;  // "linux/arm64"
    // The build plain `torch==X.Y.Z` installs there ("cu130", "cpu"); "" when the index has
    // no wheel for the platform.
    std::string variant;
    std::string glibc;
    std::vector<TorchVariant> variants;  // its pins (cuda, cudnn, nccl, ...)
    const TorchVariant* default_build() const;
};

// The platforms torch.json may describe besides Linux x86_64.
bool is_torch_platform(const std::string& platform);

struct TorchRelease {
    std::string version;
    std::string python_min, python_max;
    std::vector<std::string> python_free_threaded;  // "3.13t", ...
    std::string glibc;                              // manylinux floor of its wheels ("2.28")
    std::string torchvision, torchaudio;            // empty when none was released
    // The build PyPI serves as plain `torch==X.Y.Z` ("cu128"), from the wheels' metadata
    // (torch.json "default_variant"); empty when unknown.
    std::string pypi_variant;
    std::vector<TorchVariant> variants;
    std::vector<TorchPlatformBuild> platforms;
    const TorchVariant* variant(const std::string& name) const;
    std::vector<std::string> variant_names() const;
    const TorchPlatformBuild* platform(const std::string& name) const;  // nullptr: not known
};

struct CudaImageRelease {          // nvidia/cuda
    std::string cuda;              // "12.4.1"
    std::string cuda_major_minor;  // "12.4"
    std::vector<std::string> os;
    std::vector<std::string> cudnn_os;  // OSes that have cuDNN tags (defaults to os)
    std::string cudnn_tag;              // "cudnn8", "cudnn9", "cudnn", empty if none
    std::string cudnn;
};

struct PytorchImageTag {  // pytorch/pytorch
    std::string torch, cuda;
    int cudnn_major = 0;
    std::string python;
    std::vector<std::string> flavors;
};

struct NgcRelease {
    std::string release, torch, cuda, cudnn, nccl, python, ubuntu, min_driver;
    bool unconfirmed = false;
};

struct OsInfo {
    std::string id, family, image, python, glibc;
    std::map<std::string, std::string> apt_pins;
    std::optional<std::map<std::string, std::string>> distro_torch;  // torch/torchvision/torchaudio
};

class KnowledgeBase {
  public:
    // `files` maps a data file name ("cuda.json") to its text. Errors name file and JSON path.
    static Result<KnowledgeBase> parse(const std::map<std::string, std::string>& files);
    static const std::vector<std::string>& file_names();

    const TorchRelease* torch(const std::string& version) const;
    const CudaMinor* cuda(const std::string& major_minor) const;
    const GpuModel* gpu(const std::string& name_or_alias) const;
    const OsInfo* os(const std::string& id) const;
    const NgcRelease* ngc(const std::string& release) const;
    const PytorchImageTag* pytorch_image(const std::string& torch, const std::string& cuda) const;
    // The newest nvidia/cuda release of CUDA x.y that has tags for `os` (with cuDNN if asked).
    const CudaImageRelease* cuda_image(const std::string& major_minor, const std::string& os,
                                       bool cudnn) const;
    // The SONAME of libcudart for CUDA `major` ("12" or "12.4"); empty when unknown.
    std::string cudart_soname(const std::string& major) const;
    // Toolkit driver floor of CUDA x.y: that of its newest patch release.
    std::string min_driver(const std::string& major_minor) const;
    // Whether that floor is unconfirmed (what prints it must say so).
    bool min_driver_unconfirmed(const std::string& major_minor) const;
    // The floor of one release ("13.4.1"), falling back to its minor's; the flag says
    // whether it is unconfirmed.
    std::string min_driver_of_release(const std::string& release, bool* unconfirmed) const;

    std::vector<std::string> torch_versions() const;
    // Why `version` is not a known torch release, in one sentence for an error message:
    // the range the data covers, releases of the same series, and how to refresh. A
    // did-you-mean only for a near-typo (text that is not a plain release number).
    std::string unknown_torch_text(const std::string& version) const;
    std::vector<std::string> gpu_names() const;
    std::vector<std::string> os_ids() const;
    std::vector<std::string> ngc_releases() const;
    // First torch release whose wheels support Python `py`, if any.
    std::optional<std::string> first_torch_for_python(const std::string& py) const;
    // First torch release whose default build on `platform` ("linux/arm64", torch.json
    // "platforms") is built for CUDA `cuda_major` ("13"), if any.
    std::optional<std::string> first_torch_with_cuda_on(const std::string& platform,
                                                        const std::string& cuda_major) const;
    // The first and last CUDA minor (in data order) whose toolkit supports compute capability `cc`.
    std::optional<std::string> first_cuda_for(const std::string& cc) const;
    std::optional<std::string> last_cuda_for(const std::string& cc) const;
    // Torch releases that publish wheel variant `variant`.
    std::vector<std::string> torch_with_variant(const std::string& variant) const;

    // CUDA extension packages (data/extensions.json; none when the file was not given).
    const ExtensionFacts& extensions() const { return m_extensions; }

    const std::vector<TorchRelease>& torch_releases() const { return m_torch; }
    const std::vector<CudaImageRelease>& cuda_images() const { return m_cuda_images; }

  private:
    std::vector<CudaMinor> m_cuda;
    std::vector<GpuModel> m_gpus;
    std::map<std::string, std::size_t> m_gpu_by_name;  // lowercased model and aliases
    std::vector<TorchRelease> m_torch;
    std::vector<CudaImageRelease> m_cuda_images;
    std::vector<PytorchImageTag> m_pytorch_images;
    std::vector<NgcRelease> m_ngc;
    std::vector<OsInfo> m_os;
    ExtensionFacts m_extensions;
};

// The grammar the loader applies to the torch.json fact at `path` ("python.min",
// "variants.cu130.cudnn", "torchvision", ...; for a list, one element): "" when `value` is
// accepted, else what is wrong and what is accepted. "" stands for null where the file
// allows it. `kb refresh` checks every value it writes with it.
std::string check_torch_fact(const std::string& path, const std::string& value);

// An arch list entry as torch, nvcc or the knowledge base write it, in the knowledge
// base's form: "sm_90" -> "9.0", "sm_90a" -> "9.0", "compute_90" -> "9.0+PTX", "90" -> "9.0";
// "9.0" and "9.0+PTX" stay. Anything else is returned as given (and covers nothing).
std::string normalize_arch(const std::string& raw);
// "9.0" -> "sm_90"
std::string sm_name(const std::string& cc);

// Whether code built for `arch_list` (entries "8.0" or "9.0+PTX") runs on a GPU of
// compute capability `cc`: a cubin runs on the same major with an equal or higher minor;
// PTX is JIT-compiled for any equal or newer GPU.
bool arch_list_covers(const std::vector<std::string>& arch_list, const std::string& cc);
// Whether a CUDA toolkit that compiles for `sm` (cc*10 values) can produce code for `cc`.
bool sm_list_covers(const std::vector<int>& sm, const std::string& cc);

}  // namespace td
