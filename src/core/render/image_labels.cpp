#include "core/render/image_labels.hpp"

#include "core/render/dockerfile.hpp"
#include "core/render/platforms.hpp"
#include "core/render/python_lock.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

// "certifi==2025.1.31,...,torch==2.9.1": every package of the hash-locked set (the
// io.torchdock.python-set label that validate's TD129 compares the installed set with).
// Built for several platforms, one label serves every platform's image: it is written only
// when their sets pin the same versions (python_set_label_withheld says so otherwise).
std::string pins_of(const PythonLock& lock) {
    std::vector<std::string> pins;
    for (const auto& p : lock.packages) pins.push_back(p.name + "==" + p.version);
    return join(pins, ",");
}
std::string locked_set(const Variant& v) {
    if (!v.python_lock) return {};
    std::string pins = pins_of(*v.python_lock);
    for (const auto& [platform, l] : v.platform_locks)
        if (pins_of(*l) != pins) return {};
    return pins;
}

// "xformers==0.0.33.post2,flash-attn==2.8.1": the io.torchdock.extensions label.
std::string extension_pins(const Variant& v) {
    std::vector<std::string> pins;
    for (const auto& e : v.extensions) pins.push_back(e.name + "==" + e.version);
    return join(pins, ",");
}

// The extensions built from source (io.torchdock.built-extensions): installed beside the
// locked set, which validate's TD129 expects.
std::string built_extension_pins(const Variant& v) {
    std::vector<std::string> pins;
    for (const auto& e : v.extensions)
        if (e.from_source) pins.push_back(e.name + "==" + e.version);
    return join(pins, ",");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> image_labels(const Variant& v) {
    const Manifest& m = *v.manifest;
    std::vector<std::pair<std::string, std::string>> labels = {
        {"org.opencontainers.image.title", v.name},
        {"org.opencontainers.image.description", m.description.empty() ? v.name : m.description},
        {"org.opencontainers.image.version", v.tag},
        {"org.opencontainers.image.base.name", v.base_ref},
    };
    if (v.base_digest) labels.push_back({"org.opencontainers.image.base.digest", *v.base_digest});
    std::vector<std::pair<std::string, std::string>> td = {
        {"schema", "1"},
        {"manifest", m.file},
        {"manifest-sha256", m.sha256},
        {"variant", v.name},
        {"base-kind", base_kind_name(m.base)},
        {"flavor", v.flavor},
        {"python", v.python},
        {"torch", v.torch},
        {"torchvision", v.torchvision},
        {"torchaudio", v.torchaudio},
        {"cuda", v.cuda},
        {"cudnn", v.cudnn},
        {"nccl", v.nccl},
        {"base-cudnn", v.base_cudnn},
        {"min-driver", v.min_driver},
        {"min-driver-compat", v.min_driver_compat},
        {"min-driver-unconfirmed", v.min_driver_unconfirmed ? "true" : ""},
        {"arch-list", join(v.arch_list, ";")},
        {"target-gpus", join(v.target_gpus, ",")},
        {"extensions", extension_pins(v)},
        {"built-extensions", built_extension_pins(v)},
        {"python-set", locked_set(v)},
        {"platforms", default_platform_only(m) ? std::string() : join(m.platforms, ",")},
        {"torch-reports", v.torch_reports},
    };
    // Thresholds `torchdock validate` reads back.
    for (const auto& [precision, tflops] : m.validate.gemm_tflops_min)
        td.push_back({"validate.gemm-tflops-min." + precision, format_number(tflops)});
    if (m.validate.allreduce_busbw_min_gbps)
        td.push_back({"validate.allreduce-busbw-min-gbps",
                      format_number(*m.validate.allreduce_busbw_min_gbps)});
    if (m.validate.shm_min_mb)
        td.push_back({"validate.shm-min-mb", std::to_string(*m.validate.shm_min_mb)});
    for (const auto& [id, reason] : m.waivers) td.push_back({"waive." + id, reason});
    for (const auto& [k, value] : td)
        if (!value.empty()) labels.push_back({"io.torchdock." + k, value});
    return labels;
}

bool python_set_label_withheld(const Variant& v) { return v.python_lock && locked_set(v).empty(); }

}  // namespace td
