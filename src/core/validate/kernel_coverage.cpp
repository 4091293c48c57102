#include "core/validate/kernel_coverage.hpp"

#include <algorithm>

#include "core/kernels/kernel_judge.hpp"
#include "core/validate/probe_plan.hpp"

namespace td {
namespace {

using json = nlohmann::json;
namespace tk = td::kernels;

// The runnable images of one object in probe-kernels' JSON ("sass": ["sm_80"], "ptx":
// [{"arch": "compute_90", "isa": "8.4"}]).
tk::KernelImages images_of(const json& object) {
    tk::KernelImages images;
    for (const auto& s : object.value("sass", json::array()))
        if (s.is_string())
            if (auto a = tk::parse_arch(s.get<std::string>(), "sm_")) images.sass.push_back(*a);
    for (const auto& p : object.value("ptx", json::array())) {
        if (!p.is_object()) continue;
        auto a = tk::parse_arch(p.value("arch", ""), "compute_");
        auto isa = tk::parse_ptx_isa(p.value("isa", ""));
        if (a && isa) images.ptx.push_back({*a, *isa});
    }
    return images;
}

}  // namespace

std::string object_name(const std::string& path) {
    for (const char* dir : {"/site-packages/", "/dist-packages/"})
        if (auto at = path.rfind(dir); at != std::string::npos)
            return path.substr(at + std::string(dir).size());
    return path.substr(path.find_last_of('/') + 1);
}

std::vector<GpuKernelVerdict> judge_kernel_audit(const json& audit,
                                                 const std::vector<KernelTarget>& targets,
                                                 const std::vector<std::string>* loaded) {
    // A CUDA library: by name, or by where NVIDIA's wheels and toolkit keep them.
    auto cuda_library = [](const std::string& path) {
        return !cuda_library_family(path.substr(path.find_last_of('/') + 1)).empty() ||
               path.find("-packages/nvidia/") != std::string::npos ||
               path.rfind("/usr/local/cuda", 0) == 0;
    };
    auto judged = [&](const std::string& path) {
        if (!loaded || !cuda_library(path)) return true;
        return std::find(loaded->begin(), loaded->end(), path) != loaded->end();
    };
    std::vector<GpuKernelVerdict> out;
    const json objects = audit.is_object() ? audit.value("objects", json::array()) : json::array();
    for (const auto& t : targets) {
        GpuKernelVerdict v{t.name, t.cc, 0, {}};
        auto cc = tk::parse_compute_capability(t.cc);
        if (!cc) {
            out.push_back(std::move(v));
            continue;
        }
        std::size_t torch_failing = 0;  // torch's own libraries are named first
        for (const auto& o : objects) {
            const std::string path = o.is_object() ? o.value("path", "") : "";
            if (!o.is_object() || !o.value("has_fatbin", false) || !judged(path)) continue;
            tk::KernelImages images = images_of(o);
            if (images.empty()) continue;  // only relocatable device code: never loaded as is
            ++v.objects_judged;
            tk::GpuTarget gpu{t.name, *cc, std::nullopt};
            auto verdict = tk::judge_kernels(object_name(path), images, gpu);
            if (verdict.runs()) continue;
            if (path.find("/torch/lib/") != std::string::npos)
                v.failing.insert(v.failing.begin() + static_cast<long>(torch_failing++),
                                 verdict.message);
            else
                v.failing.push_back(verdict.message);
        }
        out.push_back(std::move(v));
    }
    return out;
}

namespace {

// The audit's entry for torch's own libtorch_cuda.so, or nullptr when the audit did not read it.
const json* torch_binary_of(const json& audit) {
    if (!audit.is_object() || !audit.contains("objects") || !audit["objects"].is_array())
        return nullptr;
    const std::string suffix = "/torch/lib/libtorch_cuda.so";
    for (const auto& o : audit["objects"]) {
        std::string path = o.is_object() ? o.value("path", "") : "";
        if (path.size() >= suffix.size() &&
            path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
            return &o;
    }
    return nullptr;
}

}  // namespace

bool audited_torch_binary(const json& audit) { return torch_binary_of(audit) != nullptr; }

std::vector<std::string> torch_binary_archs(const json& audit) {
    std::vector<std::string> out;
    const json* o = torch_binary_of(audit);
    if (!o) return out;
    for (const auto& s : o->value("sass", json::array()))
        if (s.is_string()) out.push_back(s.get<std::string>());
    for (const auto& p : o->value("ptx", json::array()))
        if (p.is_object()) out.push_back(p.value("arch", ""));
    return out;
}

std::vector<GpuKernelVerdict> judge_kernels_for_torch(const json& audit, const json& torch,
                                                      const std::vector<KernelTarget>& targets) {
    // torch was run but did not import: which CUDA libraries it would load is not observed,
    // so only the objects torch itself carries (torch/lib) are judged, not every library on
    // disk (libcufftw's sm_52 cubin, which torch never loads, is no reason).
    if (torch.is_object() && torch.contains("import_error") && audit.is_object() &&
        audit.contains("objects") && audit["objects"].is_array()) {
        std::vector<std::string> own;
        for (const auto& o : audit["objects"]) {
            std::string path = o.is_object() ? o.value("path", "") : "";
            if (path.find("/torch/lib/") != std::string::npos) own.push_back(path);
        }
        return judge_kernel_audit(audit, targets, &own);
    }
    if (!torch.is_object() || !torch.contains("loaded_libraries") ||
        !torch["loaded_libraries"].is_array())
        return judge_kernel_audit(audit, targets);
    std::vector<std::string> loaded;
    for (const auto& p : torch["loaded_libraries"])
        if (p.is_string()) loaded.push_back(p.get<std::string>());
    return judge_kernel_audit(audit, targets, &loaded);
}

std::vector<std::string> torch_archs_missing_from_binary(const json& audit, const json& torch) {
    std::vector<std::string> missing;
    auto binary = torch_binary_archs(audit);
    if (binary.empty() || !torch.is_object()) return missing;
    for (const auto& a : torch.value("arch_list", json::array()))
        if (a.is_string() &&
            std::find(binary.begin(), binary.end(), a.get<std::string>()) == binary.end())
            missing.push_back(a.get<std::string>());
    return missing;
}

std::vector<std::string> libraries_resolved(const json& libs) {
    std::vector<std::string> out;
    if (!libs.is_object()) return out;
    for (const char* key : {"roots", "libraries"})
        for (const auto& l : libs.value(key, json::array())) {
            std::string path = l.is_object() && l.contains("path") && l["path"].is_string()
                                   ? l["path"].get<std::string>()
                                   : std::string();
            if (!path.empty() && std::find(out.begin(), out.end(), path) == out.end())
                out.push_back(path);
        }
    return out;
}

std::string kernel_verdict_summary(const GpuKernelVerdict& v) {
    if (v.runs()) return {};
    return v.failing.front() + (v.failing.size() > 1
                                    ? " (and " + std::to_string(v.failing.size() - 1) +
                                          " more objects lack an image for " + v.gpu + ")"
                                    : "");
}

}  // namespace td
