#pragma once
// One resolved cell of a manifest's matrix: everything the renderer and the labels need,
// already checked against the knowledge base.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/render/manifest.hpp"

namespace td {

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
    // torch installation; pip_index empty when the base image already has torch
    std::string torch, torchvision, torchaudio;
    std::string torch_reports;  // what torch.__version__ says when it differs from the release
                                // (Debian: 1.13.0a0)
    std::string wheel_variant;  // "cu121", "cpu"; empty for ngc / debian-torch
    std::string pip_index;      // https://download.pytorch.org/whl/<variant>
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
    std::vector<std::string> target_gpus;  // knowledge-base model names ("H100")
};

}  // namespace td
