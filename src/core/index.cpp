#include "core/index.hpp"

#include <nlohmann/json.hpp>

namespace td {

std::string render_index(const std::vector<Variant>& variants) {
    using nlohmann::json;
    json list = json::array();
    for (const auto& v : variants) {
        const Manifest& m = *v.manifest;
        json build_args = json::object();
        if (!v.pip_index.empty()) build_args["TORCH_INDEX_URL"] = v.pip_index;
        json expect = {{"python", v.python},       {"torch", v.torch},
                       {"torchvision", v.torchvision}, {"torchaudio", v.torchaudio},
                       {"cuda", v.cuda},           {"cudnn", v.cudnn},
                       {"nccl", v.nccl},           {"min_driver", v.min_driver},
                       {"min_driver_compat", v.min_driver_compat},
                       {"arch_list", v.arch_list}, {"target_gpus", v.target_gpus}};
        json validate = json::object();
        if (!m.validate.gemm_tflops_min.empty()) validate["gemm_tflops_min"] = m.validate.gemm_tflops_min;
        if (m.validate.allreduce_busbw_min_gbps)
            validate["allreduce_busbw_min_gbps"] = *m.validate.allreduce_busbw_min_gbps;
        if (m.validate.shm_min_mb) validate["shm_min_mb"] = *m.validate.shm_min_mb;
        list.push_back({{"name", v.name},
                        {"family", m.name},
                        {"manifest", m.file},
                        {"manifest_sha256", m.sha256},
                        {"dockerfile", v.name + "/Dockerfile"},
                        {"image", m.image},
                        {"tag", v.tag},
                        {"base", v.base_ref},
                        {"base_digest", v.base_digest ? json(*v.base_digest) : json(nullptr)},
                        {"base_kind", base_kind_name(m.base)},
                        {"axes", v.axes},
                        {"flavor", v.flavor},
                        {"build_args", build_args},
                        {"expect", expect},
                        {"validate", validate}});
    }
    json doc = {{"schema", 1}, {"generator", "torchdock"}, {"variants", list}};
    return doc.dump(2) + "\n";
}

}  // namespace td
