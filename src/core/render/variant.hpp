#pragma once
// One resolved cell of a manifest's matrix: everything the renderer and the labels need,
// already checked against the knowledge base.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/render/extensions.hpp"
#include "core/render/manifest.hpp"

namespace td {

struct PythonLock;  // core/render/python_lock.hpp
struct AptLock;     // core/render/apt_lock.hpp

struct Variant {
    std::string name;  // "<family>-<axis values...>", unique across all manifests
    std::string tag;   // image tag: the name without the family prefix
    std::shared_ptr<const Manifest> manifest;

    std::map<std::string, std::string> axes;  // axis -> value for this cell
    std::string base_ref;                     // "nvidia/cuda:12.1.1-runtime-ubuntu22.04"
    std::optional<std::string> base_digest;   // from the lock file
    std::string os_id, os_family,
        os_python_assert;  // assert: "3.10" when the OS Python is unpinned
    std::string flavor;    // runtime | devel

    std::string python;
    std::string torch, torchvision, torchaudio;
    std::string torch_reports;  // what torch.__version__ says when it differs from the release
                                // (Debian: 1.13.0a0)
    std::string wheel_variant;  // "cu121", "cpu"; empty for ngc / debian-torch
    // Where pip gets torch: empty when the base image already has it (pytorch/pytorch, NGC,
    // Debian), else the PyTorch wheel index (its <wheel_variant> directory, whose URL is a
    // build setting: TORCH_INDEX_URL) or PyPI (the release's default build only).
    enum class TorchSource { Base, PytorchIndex, Pypi } torch_source = TorchSource::Base;
    bool pip_installs_torch() const { return torch_source != TorchSource::Base; }
    // Whether its Dockerfile runs pip at all (torch, the manifest's pip list or JupyterLab).
    bool pip_installs_anything() const {
        return pip_installs_torch() || !manifest->pip.empty() || manifest->jupyter.has_value();
    }
    std::vector<std::string> system_apt;  // pinned "name=version" or bare names
    bool system_apt_pinned = true;

    // What the image promises (io.torchdock.* labels).
    std::string cuda;         // "12.1"; empty for CPU
    std::string base_cuda;    // CUDA of the base image when it has one ("12.1.1")
    std::string cudnn, nccl;  // versions torch loads
    std::string base_cudnn;   // cuDNN of an nvidia/cuda cudnn base
    std::string min_driver, min_driver_compat;
    bool min_driver_unconfirmed = false;  // the knowledge base could not confirm the floor
    std::vector<std::string> arch_list;
    std::vector<std::string> target_gpus;      // knowledge-base model names ("H100")
    std::vector<VariantExtension> extensions;  // the manifest's, resolved for this variant
    std::optional<SourceBuild> source_build;   // when an extension is built from source
    // The manifest's Debian/Ubuntu packages for this variant's OS, as written, and their
    // versions resolved in the pinned base by `torchdock lock` when the lock file has them
    // for exactly these packages and base digest (else why not, when any is unpinned).
    std::vector<std::string> apt;
    std::shared_ptr<const AptLock> apt_lock;
    std::string apt_not_locked;

    // The hash-locked Python set, when the lock file has one resolved from this variant's
    // current inputs (python_lock_plan); otherwise why there is none.
    std::shared_ptr<const PythonLock> python_lock;
    std::string python_lock_file;   // the lock file it came from
    std::string python_not_locked;  // why not: shown in the Dockerfile and by `list`
    // Built for several platforms (manifest "platforms"): each one's set, python_lock being
    // the first's; empty for one platform.
    std::map<std::string, std::shared_ptr<const PythonLock>> platform_locks;
    // The build stage's Python set (source_build's requirements), hash-locked likewise.
    std::shared_ptr<const PythonLock> build_lock;
    std::string build_lock_file, build_not_locked;
};

}  // namespace td
