#include "core/validate/probe_plan.hpp"

#include <algorithm>

#include "core/validate/platform.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

// torch/version.py, read by probe-record for TD133 (what torch.version.cuda reports).
const char* const k_torch_version_text = "torch:torch/version.py";

using json = nlohmann::json;

// Families by the part of the file name after "lib" and before ".so" or a "_"/"-" suffix.
// Longest names first, so "cublasLt" wins over "cublas" and "cudart" over "cuda".
const std::vector<std::string>& families() {
    static const std::vector<std::string> all = [] {
        std::vector<std::string> f = {"cudart",   "cublasLt",  "cublas", "cudnn",      "nccl",
                                      "nvrtc",    "nvJitLink", "cufft",  "curand",     "cusparseLt",
                                      "cusparse", "cusolver",  "cupti",  "nvToolsExt", "cufile",
                                      "nvshmem",  "nvidia-ml", "cuda"};
        std::stable_sort(f.begin(), f.end(), [](const std::string& a, const std::string& b) {
            return a.size() > b.size();
        });
        return f;
    }();
    return all;
}

// The file name of a path.
// "--name=a,b" from the strings of a JSON array; empty when there are none.
std::string list_flag(const std::string& name, const json& list) {
    std::vector<std::string> items;
    if (list.is_array())
        for (const auto& x : list)
            if (x.is_string() && !x.get<std::string>().empty() &&
                x.get<std::string>().find(',') == std::string::npos)
                items.push_back(x.get<std::string>());
    return items.empty() ? std::string() : "--" + name + "=" + join(items, ",");
}

std::optional<std::string> gemm_peak_flag(const ProbeRun* cuda, const KnowledgeBase& kb) {
    if (!cuda || !cuda->usable() || !cuda->data.contains("devices") ||
        !cuda->data["devices"].is_array() || cuda->data["devices"].empty())
        return std::nullopt;
    // The probe's answer may have any shape (adversarial-2 N12): a name only when it is one.
    const json& first = cuda->data["devices"][0];
    const GpuModel* g = first.is_object() && first.contains("name") && first["name"].is_string()
                            ? kb.gpu(first["name"].get<std::string>())
                            : nullptr;
    if (!g) return std::nullopt;
    std::vector<std::string> parts;
    for (const auto& [dtype, tflops] : g->peak_tflops) {
        if (dtype != "fp32" && dtype != "tf32" && dtype != "fp16" && dtype != "bf16" &&
            dtype != "fp8")
            continue;  // GEMM dtypes only
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s:%g", dtype.c_str(), tflops);
        parts.push_back(buf);
    }
    if (parts.empty()) return std::nullopt;
    return "--peak-tflops=" + join(parts, ",");
}

}  // namespace

std::string cuda_library_family(const std::string& file_name) {
    if (file_name.rfind("lib", 0) != 0) return {};
    auto so = file_name.find(".so");
    if (so == std::string::npos) return {};
    std::string stem = file_name.substr(3, so - 3);
    for (const auto& f : families())
        if (stem == f || stem.rfind(f + "_", 0) == 0 || stem.rfind(f + "-", 0) == 0) return f;
    return {};
}

std::vector<std::string> loaded_library_paths(const ProbeRun& torch, const std::string& family) {
    std::vector<std::string> main, rest;
    if (!torch.usable() || !torch.data.contains("loaded_libraries") ||
        !torch.data["loaded_libraries"].is_array())
        return {};
    for (const auto& p : torch.data["loaded_libraries"]) {
        if (!p.is_string()) continue;
        std::string path = p.get<std::string>(), name = base_name(path);
        if (cuda_library_family(name) != family) continue;
        // The family's own library ("libcudnn.so.9"), not a sub-library ("libcudnn_ops.so.9").
        bool is_main =
            name.rfind("lib" + family + ".so", 0) == 0 || name.rfind("lib" + family + "-", 0) == 0;
        (is_main ? main : rest).push_back(path);
    }
    main.insert(main.end(), rest.begin(), rest.end());
    return main;
}

std::string wheel_pin_for(const json& torch_data, const std::string& soname) {
    std::string family = cuda_library_family(soname.substr(soname.find_last_of('/') + 1));
    if (family.empty() || !torch_data.is_object()) return {};
    // NVIDIA names the wheels after the libraries, lowercased, with two exceptions.
    std::string token = family == "cudart"       ? "cuda-runtime"
                        : family == "nvToolsExt" ? "nvtx"
                                                 : to_lower(family);
    auto dists = torch_data.find("distributions");
    if (dists == torch_data.end() || !dists->is_object() || !dists->contains("torch")) return {};
    const json& dist = (*dists)["torch"];
    const json pins = dist.is_object() ? dist.value("requires", json::array()) : json::array();
    if (!pins.is_array()) return {};
    for (const auto& r : pins) {
        if (!r.is_string()) continue;
        std::string req = r.get<std::string>();
        std::string pin = req.substr(0, req.find_first_of("; "));
        auto eq = pin.find("==");
        if (eq != std::string::npos &&
            to_lower(pin.substr(0, eq)).rfind("nvidia-" + token + "-cu", 0) == 0)
            return pin;
    }
    return {};
}

std::vector<std::string> dynamic_probe_flags(const std::string& probe, const ProbeRun* torch,
                                             const ProbeRun* cuda, const KnowledgeBase& kb,
                                             const std::string& ld_preload) {
    std::vector<std::string> out;
    auto library = [&](const std::string& flag, const std::string& family) {
        if (!torch) return;
        auto paths = loaded_library_paths(*torch, family);
        // A path with a comma or a control character is not passed (it could not be meant).
        if (!paths.empty() && is_valid_utf8(paths.front()) &&
            paths.front().find_first_of(",\n\r") == std::string::npos)
            out.push_back("--" + flag + "=" + paths.front());
    };
    if (probe == "libs" || probe == "record") {
        // Site directories are known also when torch crashed or failed to import (the probe
        // finds them before it imports torch).
        if (torch && torch->state == ProbeRun::State::Ran && torch->data.is_object()) {
            json dirs = torch->data.value("site_dirs", json::array());
            if (!dirs.is_array()) dirs = json::array();
            // What the image's python said it is and imported is checked against the files
            // (probe-record --inspect; TD119): the interpreter, and torch.__file__, whose own
            // site directory is read whatever site directories the python listed.
            const json& t = torch->data;
            json inspect = json::array();
            for (const char* key : {"python_executable", "torch_file"})
                if (t.contains(key) && t[key].is_string()) inspect.push_back(t[key]);
            std::string torch_dir;  // the site dir the process imported torch from
            if (t.contains("torch_file") && t["torch_file"].is_string()) {
                const std::string file = t["torch_file"].get<std::string>();
                const auto at = file.rfind("/torch/");
                if (at != std::string::npos && at > 0) torch_dir = file.substr(0, at);
                if (!torch_dir.empty() &&
                    std::find(dirs.begin(), dirs.end(), torch_dir) == dirs.end())
                    dirs.push_back(torch_dir);
            }
            std::string flag = list_flag("site-dirs", dirs);
            if (!flag.empty()) out.push_back(flag);
            if (probe == "record") {
                std::string inspected = list_flag("inspect", inspect);
                if (!inspected.empty()) out.push_back(inspected);
                // Another torch on these site dirs is not the one this python imports: it is
                // listed, not hashed (a --target tree over a venv's torch, a venv over the
                // system's).
                std::string imported = list_flag("imported", json::array({"torch@" + torch_dir}));
                if (!torch_dir.empty() && !imported.empty()) out.push_back(imported);
            }
        }
        if (probe == "record") out.push_back(std::string("--text=") + k_torch_version_text);
        if (probe == "libs" && !ld_preload.empty() && is_valid_utf8(ld_preload) &&
            ld_preload.find_first_of("\n\r") == std::string::npos)
            out.push_back("--preload=" + ld_preload);
    } else if (probe == "kernels" && torch && torch->usable()) {
        // Torch's import directories (torch, extensions, nvidia-* wheels) and the directories
        // of the CUDA libraries torch loaded; nothing: the probe's own defaults.
        json paths = torch->data.value("site_dirs", json::array());
        if (!paths.is_array()) paths = json::array();
        for (const auto& p : torch->data.value("loaded_libraries", json::array()))
            if (p.is_string()) {
                std::string dir = p.get<std::string>().substr(0, p.get<std::string>().rfind('/'));
                if (std::find(paths.begin(), paths.end(), dir) == paths.end()) paths.push_back(dir);
            }
        std::string flag = list_flag("paths", paths);
        if (!flag.empty()) out.push_back(flag);
    } else if (probe == "cuda") {
        library("library", "cudart");
    } else if (probe == "cudnn") {
        library("library", "cudnn");
        library("cudart", "cudart");
    } else if (probe == "nccl") {
        library("library", "nccl");
        library("cudart", "cudart");
    } else if (probe == "gemm") {
        if (auto peak = gemm_peak_flag(cuda, kb)) out.push_back(*peak);
    }
    return out;
}

std::vector<std::string> files_only_probe_flags(const std::string& probe, const RuntimePlan& plan) {
    std::vector<std::string> out;
    if (probe == "libs" || probe == "record" || probe == "kernels") {
        std::string flag =
            list_flag(probe == "kernels" ? "paths" : "site-dirs", json(plan.files_only_site_dirs));
        if (!flag.empty()) out.push_back(flag);
    }
    if (probe == "libs" && !plan.files_only_machine.empty())
        out.push_back("--machine=" + plan.files_only_machine);
    if (probe == "record") {
        out.push_back(std::string("--text=") + k_torch_version_text);
        // Where a torch package would be in each directory read by name: its egg-info is then
        // found beside it (an OS package's torch has no RECORD), so TD119 sees torch's files.
        json files = json::array();
        for (const auto& dir : plan.files_only_site_dirs)
            files.push_back(dir + "/torch/version.py");
        std::string flag = list_flag("inspect", files);
        if (!flag.empty()) out.push_back(flag);
    }
    return out;
}

std::vector<std::string> site_dirs_by_name_of(const RuntimePlan& plan, const ProbeRun* env) {
    if (plan.candidates.empty()) return {};
    const std::string& path = plan.candidates.front();
    std::string real = path;
    if (env && env->usable())
        for (const auto& i : env->data.value("interpreters", json::array()))
            if (i.is_object() && i.value("path", "") == path && i.contains("realpath") &&
                i["realpath"].is_string())
                real = i["realpath"].get<std::string>();
    return files_only_site_dirs(path, real, plan.environment);
}

std::vector<std::string> label_probe_flags(const std::string& probe,
                                           const std::map<std::string, std::string>& labels) {
    auto it = labels.find("io.torchdock.python-set");
    if (probe == "record" && it != labels.end() && !it->second.empty()) return {"--dists=*"};
    return {};
}

}  // namespace td
