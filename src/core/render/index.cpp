#include "core/render/index.hpp"

#include "core/json/json_writer.hpp"
#include "core/render/platforms.hpp"
#include "core/render/render_plan.hpp"

namespace td {

std::string render_index(const std::vector<Variant>& variants) {
    JsonWriter w;
    w.begin_object()
        .key("schema")
        .value(1)
        .key("generator")
        .value("torchdock")
        .key("variants")
        .begin_array();
    for (const auto& v : variants) {
        const Manifest& m = *v.manifest;
        w.begin_object();
        w.key("name").value(v.name);
        w.key("family").value(m.name);
        w.key("manifest").value(m.file);
        w.key("manifest_sha256").value(m.sha256);
        w.key("dockerfile").value(v.name + "/Dockerfile");
        w.key("image").value(m.image);
        w.key("tag").value(v.tag);
        w.key("base").value(v.base_ref);
        w.key("base_digest");
        if (v.base_digest)
            w.value(*v.base_digest);
        else
            w.null();
        w.key("base_kind").value(base_kind_name(m.base));
        w.key("axes").begin_object();
        for (const auto& [axis, value] : v.axes) w.key(axis).value(value);
        w.end_object();
        w.key("flavor").value(v.flavor);
        // Where pip gets torch, and the hash-locked requirements (python_lock.hpp).
        w.key("torch_source")
            .value(v.torch_source == Variant::TorchSource::PytorchIndex ? "pytorch-index"
                   : v.torch_source == Variant::TorchSource::Pypi       ? "pypi"
                                                                        : "base");
        if (v.torch_source == Variant::TorchSource::PytorchIndex)
            w.key("torch_index_dir").value(v.wheel_variant);
        w.key("python_lock");
        if (v.python_lock)
            w.value(v.name + "/" + k_requirements_lock);
        else
            w.null();
        if (!v.python_not_locked.empty()) w.key("python_not_locked").value(v.python_not_locked);
        if (v.build_lock) w.key("build_lock").value(v.name + "/" + k_build_requirements_lock);
        if (!default_platform_only(m)) w.key("platforms").strings(m.platforms);
        if (!v.platform_locks.empty()) {
            w.key("python_locks").begin_object();
            for (const auto& [platform, l] : v.platform_locks)
                w.key(platform).value(v.name + "/" + requirements_lock_for(platform));
            w.end_object();
        }
        w.key("expect").begin_object();
        w.key("python").value(v.python).key("torch").value(v.torch);
        w.key("torchvision").value(v.torchvision).key("torchaudio").value(v.torchaudio);
        w.key("cuda").value(v.cuda).key("cudnn").value(v.cudnn).key("nccl").value(v.nccl);
        w.key("min_driver").value(v.min_driver).key("min_driver_compat").value(v.min_driver_compat);
        if (v.min_driver_unconfirmed) w.key("min_driver_unconfirmed").boolean(true);
        w.key("arch_list").strings(v.arch_list).key("target_gpus").strings(v.target_gpus);
        w.end_object();
        w.key("validate").begin_object();
        if (!m.validate.gemm_tflops_min.empty()) {
            w.key("gemm_tflops_min").begin_object();
            for (const auto& [precision, tflops] : m.validate.gemm_tflops_min)
                w.key(precision).value(tflops);
            w.end_object();
        }
        if (m.validate.allreduce_busbw_min_gbps)
            w.key("allreduce_busbw_min_gbps").value(*m.validate.allreduce_busbw_min_gbps);
        if (m.validate.shm_min_mb) w.key("shm_min_mb").value(*m.validate.shm_min_mb);
        w.end_object();
        w.end_object();
    }
    w.end_array().end_object();
    return w.take();
}

}  // namespace td
