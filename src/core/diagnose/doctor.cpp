#include "core/diagnose/doctor.hpp"

#include <algorithm>
#include <map>

#include "core/diagnose/finding_catalog.hpp"
#include "core/validate/kernel_coverage.hpp"
#include "core/validate/library_observation.hpp"
#include "core/validate/probe_plan.hpp"
#include "core/validate/python_abi.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

using json = nlohmann::json;

bool behaviour_variable(const std::string& name) {
    for (const char* prefix : {"NVIDIA_", "CUDA_", "NCCL_", "TORCH_", "PYTORCH_", "CUDNN_"})
        if (starts_with(name, prefix)) return true;
    // The Python ones decide which torch imports (a PYTHONPATH can shadow the venv's).
    for (const char* python : {"PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONSAFEPATH",
                               "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONUSERBASE"})
        if (name == python) return true;
    return name == "LD_LIBRARY_PATH" || name == "LD_PRELOAD";
}

const json& data_of(const std::map<std::string, ProbeRun>& probes, const std::string& name) {
    static const json empty = json::object();
    auto it = probes.find(name);
    return it != probes.end() && it->second.usable() ? it->second.data : empty;
}

json value_or_null(const json& j, const char* key) {
    return j.is_object() && j.contains(key) ? j[key] : json();
}

std::string fact_text(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) return {};
    if (j[key].is_string()) return j[key].get<std::string>();
    if (j[key].is_number_integer()) return std::to_string(j[key].get<long long>());
    return j[key].dump();
}

std::string str_of(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                                                  : std::string();
}

// A probe answer's field of the expected type, or the empty value: an image's probe answer
// may have any shape (adversarial-2 N12), and nlohmann's value() throws on another type.
json array_of(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_array() ? j[key] : json::array();
}

bool bool_of(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>();
}

std::string cuda_int(const json& v) {
    return v.is_number_integer() ? cuda_version_from_int(v.get<long long>()) : std::string();
}

}  // namespace

std::map<std::string, std::string> parse_os_release(const std::string& t) {
    std::map<std::string, std::string> out;
    for (auto line : split(t, '\n')) {
        auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        std::string v = line.substr(eq + 1);
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
        out[line.substr(0, eq)] = v;
    }
    return out;
}

json build_fingerprint(const EnvironmentFacts& f, const std::map<std::string, ProbeRun>& probes) {
    json fp = {{"schema", 1}, {"kind", f.kind}, {"subject", f.subject}};
    auto os = [&](const char* k) {
        auto it = f.os_release.find(k);
        return it == f.os_release.end() ? std::string() : it->second;
    };
    fp["os"] = {{"id", os("ID")},
                {"version", os("VERSION_ID")},
                {"pretty", os("PRETTY_NAME")},
                {"glibc", f.glibc}};

    const json& t = data_of(probes, "torch");
    // The interpreter is known whether or not torch imports.
    fp["python"] = t.contains("python")
                       ? json{{"version", fact_text(t, "python")},
                              {"executable", value_or_null(t, "python_executable")},
                              {"interpreters_tried", array_of(t, "interpreters_tried")},
                              {"why", f.interpreter_why},
                              {"other_interpreters", array_of(t, "other_interpreters")}}
                       : json();
    json wheels = json::object();  // nvidia-* and companions as installed, with versions
    if (t.contains("distributions") && t["distributions"].is_object())
        for (const auto& [name, info] : t["distributions"].items())
            wheels[name] = fact_text(info, "version");
    fp["wheels"] = wheels;
    // What torch pins (so a missing library can be named with the wheel that ships it).
    if (t.contains("crash") && t["crash"].is_object())
        fp["torch_crash"] = crash_summary(t["crash"]);
    fp["damaged_files"] = json::array();
    for (const auto& dist : array_of(data_of(probes, "record"), "distributions"))
        for (const auto& pr : array_of(dist, "problems"))
            fp["damaged_files"].push_back(
                {{"distribution", fact_text(dist, "name") + " " + fact_text(dist, "version")},
                 {"path", fact_text(pr, "path")},
                 {"kind", fact_text(pr, "kind")}});
    fp["torch_requires"] = t.contains("distributions") && t["distributions"].is_object() &&
                                   t["distributions"].contains("torch")
                               ? array_of(t["distributions"]["torch"], "requires")
                               : json::array();
    if (t.contains("torch") && t["torch"].is_string()) {
        fp["torch"] = {{"version", fact_text(t, "torch")},
                       {"cuda", value_or_null(t, "cuda")},
                       {"cudnn", value_or_null(t, "cudnn")},
                       {"cudnn_error", value_or_null(t, "cudnn_error")},
                       {"nccl", value_or_null(t, "nccl")},
                       {"arch_list", array_of(t, "arch_list")},
                       {"cuda_available", bool_of(t, "cuda_available")},
                       {"loaded_libraries", array_of(t, "loaded_libraries")}};
    } else {
        fp["torch"] = nullptr;
        auto it = probes.find("torch");
        if (!str_of(t, "import_error").empty())
            fp["torch_import_error"] = fact_text(t, "import_error");
        // Whether the torch probe's answer is evidence ("no torch" is a finding only then).
        fp["torch_probed"] = it != probes.end() && it->second.usable();
        // Another interpreter of the environment that imports torch: "no torch" is then wrong.
        if (TorchElsewhere other = torch_in_other_interpreter(t); !other.path.empty())
            fp["torch_elsewhere"] = other.path + " (torch " + other.torch + ")";
        // Torch built for another Python than the one that runs (core/validate/python_abi).
        if (std::string abi = torch_python_mismatch(t); !abi.empty()) {
            fp["torch_python_mismatch"] = abi;
            fp["torch_python_mismatch_fix"] = torch_python_mismatch_fix(t);
        }
        fp["torch_installed"] = t.contains("distributions") && t["distributions"].is_object() &&
                                t["distributions"].contains("torch");
        fp["torch_error"] = it == probes.end()     ? "not probed"
                            : !it->second.usable() ? it->second.problem()
                            : t.contains("import_error")
                                ? "import torch failed: " + fact_text(t, "import_error")
                                : it->second.reason;
    }
    const json& c = data_of(probes, "cuda");
    fp["driver"] = {
        {"version", value_or_null(c, "nvidia_driver")},
        {"cuda", c.contains("driver_version") ? json(cuda_int(c["driver_version"])) : json()}};
    if (fp["driver"]["cuda"] == "") fp["driver"]["cuda"] = nullptr;
    fp["gpus"] = json::array();
    if (c.contains("devices") && c["devices"].is_array())
        for (const auto& d : c["devices"])
            fp["gpus"].push_back({{"name", fact_text(d, "name")},
                                  {"cc", fact_text(d, "cc")},
                                  {"memory_bytes", value_or_null(d, "memory_bytes")}});
    fp["cuda_runtime"] = c.contains("runtime_version") && c["runtime_version"].is_number_integer()
                             ? json{{"version", cuda_int(c["runtime_version"])},
                                    {"library", fact_text(c, "runtime_library")}}
                             : json();
    fp["cuda_error"] = value_or_null(c, "error");

    const json& l = data_of(probes, "libs");
    // The process's maps outrank the loader model (core/validate/library_observation): a
    // library the process mapped from elsewhere is listed where it was mapped from, the
    // model's answer kept beside it, and a soname the process found is not "unresolved".
    LibraryObservation seen = observe_libraries(l, t);
    std::map<std::string, std::string> mapped_instead;
    for (const auto& d : seen.disagreements) mapped_instead[d.soname] = d.mapped_path;
    fp["libraries"] = json::array();
    for (const auto& lib : array_of(l, "libraries")) {
        json row = {{"soname", fact_text(lib, "soname")},
                    {"path", value_or_null(lib, "path")},
                    {"found_via", fact_text(lib, "found_via")}};
        if (auto it = mapped_instead.find(fact_text(lib, "soname")); it != mapped_instead.end()) {
            row["model_path"] = row["path"];
            row["path"] = it->second;
            row["found_via"] = "mapped by the process";
        }
        fp["libraries"].push_back(std::move(row));
    }
    for (const auto& found : seen.found_by_process)
        fp["libraries"].push_back({{"soname", found.soname},
                                   {"path", found.mapped.empty() ? json() : json(found.mapped)},
                                   {"found_via", "mapped by the process"}});
    fp["duplicates"] = array_of(l, "duplicates");
    fp["unresolved"] = seen.unresolved;
    // The kernel audit: per object with GPU code, what it carries (bounded).
    const json& k = data_of(probes, "kernels");
    fp["kernels"] = json::array();
    for (const auto& o : array_of(k, "objects")) {
        if (!bool_of(o, "has_fatbin")) continue;
        if (fp["kernels"].size() == 500) break;
        fp["kernels"].push_back({{"path", str_of(o, "path")},
                                 {"sass", array_of(o, "sass")},
                                 {"ptx", array_of(o, "ptx")}});
    }
    const json& dn = data_of(probes, "cudnn");
    // The cuDNN and NCCL the probes asked: the files torch loads when torch loads them, else
    // what the loader finds by name.
    fp["cudnn_loader"] = dn.contains("version_string") && dn["version_string"].is_string()
                             ? json{{"version", fact_text(dn, "version_string")},
                                    {"cuda", cuda_int(value_or_null(dn, "cudart_version"))},
                                    {"library", fact_text(dn, "library")}}
                             : json();
    const json& nc = data_of(probes, "nccl");
    fp["nccl_loader"] =
        nc.contains("version") && nc["version"].is_string()
            ? json{{"version", fact_text(nc, "version")}, {"library", fact_text(nc, "library")}}
            : json();

    json env = json::object();
    for (const auto& kv : f.env) {
        auto eq = kv.find('=');
        std::string name = kv.substr(0, eq);
        if (behaviour_variable(name)) env[name] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
    fp["env"] = env;
    fp["shm_bytes"] = f.shm_bytes ? json(*f.shm_bytes) : json();
    fp["container_runtime"] = f.container_runtime;
    if (f.kind == "host") {
        fp["memlock_bytes"] = !f.memlock_bytes       ? json()
                              : *f.memlock_bytes < 0 ? json("unlimited")
                                                     : json(*f.memlock_bytes);
        fp["infiniband"] = f.infiniband;
    }
    if (!f.labels.empty()) fp["labels"] = f.labels;
    json probe_status = json::object();
    for (const auto& [name, run] : probes)
        probe_status[name] = run.usable() ? run.status : run.problem();
    fp["probes"] = probe_status;
    return fp;
}

namespace {

// `fp` is a copy read with the non-const operator[]: a missing key reads as null (the const
// one is undefined behaviour for it), and a value of another type throws.
void judge_fingerprint(json fp, const KnowledgeBase& kb, const ErrorSignatures* signatures,
                       std::vector<Finding>& out) {
    // An error text with what `explain` says of it: "<text> (EX103: <cause>)" and its fix.
    auto explained = [&](const std::string& text, std::string fallback_fix) {
        std::optional<Explanation> e;
        if (signatures) e = explain_error_text(text, *signatures, kb);
        return e ? std::make_pair(text + " (" + e->id + ": " + e->cause + ")", e->fix)
                 : std::make_pair(text, std::move(fallback_fix));
    };
    // The severity is the catalog's (core/diagnose/finding_catalog): an ID has a page.
    auto add = [&](const char* id, std::string title, std::string detail, std::string fix) {
        out.push_back(
            {id, finding_info(id).severity, std::move(title), std::move(detail), std::move(fix)});
    };
    const json& err = fp.value("cuda_error", json());
    std::string err_class = err.is_object() ? err.value("class", "") : "";
    std::string runtime =
        fp["cuda_runtime"].is_object() ? fp["cuda_runtime"].value("version", "") : "";
    json& torch = fp["torch"];
    std::string torch_cuda =
        torch.is_object() && torch["cuda"].is_string() ? torch["cuda"].get<std::string>() : "";

    if (err_class == "no_driver")
        add("DR101", "no NVIDIA driver",
            "libcuda.so.1 is not loadable here: CUDA calls fail with " +
                err.value("name", std::string("an error")) + "; only the static checks apply",
            "on a GPU host, install the NVIDIA driver (and nvidia-container-toolkit to give GPUs "
            "to containers)");
    if (err_class == "insufficient_driver") {
        std::string need = !runtime.empty() ? kb.min_driver(runtime) : "";
        add("DR102", "driver too old for the CUDA runtime",
            "the driver supports CUDA " + fp["driver"].value("cuda", std::string("?")) +
                ", the runtime here is CUDA " + runtime,
            need.empty() ? "upgrade the driver"
                         : "upgrade the driver to " + need + " or newer (CUDA " + runtime + ")" +
                               (kb.min_driver_unconfirmed(runtime)
                                    ? "; that floor is unconfirmed in the knowledge base"
                                    : ""));
    }
    if (err_class == "forward_compat_unsupported")
        add("DR103", "forward compatibility on unsupported hardware (error 804)",
            "a cuda-compat package is loaded but this GPU is not a data-center GPU",
            "remove the cuda-compat libraries from the library path, or upgrade the driver");
    if (fp["unresolved"].is_array() && !fp["unresolved"].empty()) {
        json& u = fp["unresolved"][0];
        add("DR104", "shared libraries that do not resolve",
            u.value("soname", "?") + " needed by " + u.value("needed_by", "?") +
                (fp["unresolved"].size() > 1
                     ? " (and " + std::to_string(fp["unresolved"].size() - 1) + " more)"
                     : ""),
            [&] {
                // The same torch metadata the probe read: {"distributions": {"torch": ...}}.
                json torch_data = {
                    {"distributions",
                     {{"torch", {{"requires", fp.value("torch_requires", json::array())}}}}}};
                std::string pin = wheel_pin_for(torch_data, u.value("soname", ""));
                return pin.empty() ? std::string("install what provides it, or fix LD_LIBRARY_PATH")
                                   : "pip install '" + pin +
                                         "' (torch requires it), or reinstall torch without "
                                         "--no-deps";
            }());
    }
    if (fp["duplicates"].is_array())
        for (auto& d : fp["duplicates"]) {
            std::vector<std::string> versions, copies;
            for (const auto& c : d.value("copies", json::array())) {
                // What the file itself reports, else what its name says.
                std::string v = c.contains("content_version") && c["content_version"].is_string()
                                    ? c["content_version"].get<std::string>()
                                    : c.value("version", "");
                if (std::find(versions.begin(), versions.end(), v) == versions.end())
                    versions.push_back(v);
                copies.push_back(c.value("path", "?") + " (" + v + ")");
            }
            if (versions.size() > 1)
                add("DR105", "several versions of " + d.value("name", std::string("a library")),
                    join(copies, ", "),
                    "make sure the intended copy wins: the loader takes LD_LIBRARY_PATH before "
                    "RUNPATH and ld.so.cache");
        }
    if (!runtime.empty() && !torch_cuda.empty() &&
        split(runtime, '.')[0] != split(torch_cuda, '.')[0])
        add("DR106", "torch and the system CUDA runtime differ in major",
            "torch was built for CUDA " + torch_cuda + ", the loader finds CUDA " + runtime +
                " first",
            "use torch's own CUDA libraries (nvidia-* wheels), or a torch built for CUDA " +
                split(runtime, '.')[0]);
    if (torch.is_object() && fp["gpus"].is_array()) {
        std::vector<std::string> arch;
        for (const auto& a : torch.value("arch_list", json::array()))
            arch.push_back(normalize_arch(a.get<std::string>()));
        for (auto& g : fp["gpus"])
            if (!arch.empty() && !arch_list_covers(arch, g.value("cc", "")))
                add("DR107", "torch has no kernels for " + g.value("name", std::string("a GPU")),
                    "compute capability " + g.value("cc", "?") + " is not in torch's arch list " +
                        join(arch, ";"),
                    "install a torch build whose arch list covers " + sm_name(g.value("cc", "")) +
                        " (see `torchdock explain`)");
        if (torch_cuda.empty() && !fp["gpus"].empty())
            add("DR108", "CPU-only torch on a GPU host",
                "torch " + torch.value("version", "") + " has no CUDA",
                "install a CUDA build of torch (PyPI's default build, or a +cuXXX build from the "
                "PyTorch wheel index)");
    }
    json& loader_cudnn = fp["cudnn_loader"];
    if (torch.is_object() && torch["cudnn_error"].is_string()) {
        auto [detail, fix] = explained(torch["cudnn_error"].get<std::string>(),
                                       "let torch load the cuDNN it was built with: remove other "
                                       "cuDNN directories from LD_LIBRARY_PATH");
        add("DR115", "torch cannot use its cuDNN", detail, fix);
    }
    if (loader_cudnn.is_object() && !loader_cudnn.value("cuda", std::string()).empty()) {
        std::string built_for = loader_cudnn["cuda"].get<std::string>();
        std::string major = split(built_for, '.')[0];
        std::string soname = kb.cudart_soname(major);
        if (soname.empty()) soname = "libcudart for CUDA " + major;
        if (runtime.empty() || split(runtime, '.')[0] != major)
            add("DR114", "cuDNN needs a CUDA runtime the environment does not have",
                "cuDNN " + loader_cudnn.value("version", std::string()) + " was built for CUDA " +
                    built_for + " and loads " + soname +
                    (runtime.empty() ? ", which is absent"
                                     : ", but the CUDA runtime here is " + runtime),
                "install the CUDA " + major + " runtime, or the cuDNN build for the CUDA in use");
    }
    if (!runtime.empty() && !torch_cuda.empty())
        if (auto r = Version::parse(runtime), b = Version::parse(torch_cuda);
            r && b && r->major() == b->major() && *b < *r && r->major_minor() != b->major_minor())
            add("DR117", "torch loads a newer CUDA runtime than it was built with",
                "torch was built with CUDA " + torch_cuda + " and loads runtime " + runtime + " (" +
                    fp["cuda_runtime"].value("library", std::string()) +
                    "): compatible within the major, but it needs CUDA " + runtime +
                    "'s driver floor (" + kb.min_driver(runtime) + ")",
                "pin the runtime torch was built with, or make sure hosts meet that floor");
    // The kernels of every object torch uses, judged for the GPUs here (same as TD125).
    if (fp["kernels"].is_array() && !fp["kernels"].empty() && fp["gpus"].is_array()) {
        std::vector<KernelTarget> targets;
        for (auto& g : fp["gpus"]) targets.push_back({g.value("name", ""), g.value("cc", "")});
        json audit = {{"objects", json::array()}};
        for (auto& o : fp["kernels"]) {
            audit["objects"].push_back(o);
            audit["objects"].back()["has_fatbin"] = true;
        }
        for (const auto& v : judge_kernels_for_torch(audit, torch, targets))
            if (!v.runs())
                add("DR118", "code without an image for " + v.gpu, join(v.failing, "; "),
                    "rebuild or reinstall those objects for compute capability " + v.cc);
        if (auto missing = torch_archs_missing_from_binary(audit, torch); !missing.empty())
            add("DR119", "torch reports archs its binary lacks",
                "torch reports " + join(missing, ", ") + " but libtorch_cuda.so has " +
                    join(torch_binary_archs(audit), " "),
                "reinstall torch: the library does not match the build it claims to be");
    }
    if (fp["shm_bytes"].is_number_integer() && fp["shm_bytes"].get<long long>() < (1LL << 30))
        add("DR110", "/dev/shm is small",
            "/dev/shm is " + std::to_string(fp["shm_bytes"].get<long long>() >> 20) +
                " MiB; NCCL and DataLoader workers need more",
            "containers: --ipc=host or --shm-size=8g; Kubernetes: an emptyDir with medium: Memory "
            "at /dev/shm");
    if (fp["infiniband"].is_array() && !fp["infiniband"].empty() &&
        fp["memlock_bytes"].is_number_integer())
        add("DR124", "locked memory is limited on an InfiniBand host",
            "ulimit -l is " + std::to_string(fp["memlock_bytes"].get<long long>() >> 10) +
                " KiB with " + std::to_string(fp["infiniband"].size()) +
                " entries in /dev/infiniband; NCCL's IB transport pins its buffers",
            "run jobs with an unlimited memlock limit (limits.conf, slurmd's "
            "LimitMEMLOCK=infinity, --ulimit memlock=-1 for containers)");
    json& env = fp["env"];
    if (env.is_object() && env.contains("CUDA_VISIBLE_DEVICES") &&
        env["CUDA_VISIBLE_DEVICES"] == "")
        add("DR111", "CUDA_VISIBLE_DEVICES is empty",
            "an empty CUDA_VISIBLE_DEVICES hides every GPU", "unset it, or list the GPUs to use");
    if (env.is_object() && env.contains("LD_LIBRARY_PATH") && !runtime.empty()) {
        for (const auto& dir : split(env["LD_LIBRARY_PATH"].get<std::string>(), ':'))
            if (dir.find("cuda-") != std::string::npos) {
                std::string ver = dir.substr(dir.find("cuda-") + 5);
                ver = ver.substr(0, ver.find('/'));
                if (auto v = Version::parse(ver);
                    v && !torch_cuda.empty() &&
                    std::to_string(v->major()) != split(torch_cuda, '.')[0])
                    add("DR112", "LD_LIBRARY_PATH points at another CUDA",
                        dir + " is CUDA " + ver + ", torch uses CUDA " + torch_cuda,
                        "remove " + dir + " from LD_LIBRARY_PATH");
            }
    }
    if (fp.contains("torch_python_mismatch") && fp["torch_python_mismatch"].is_string() &&
        !torch.is_object()) {
        add("DR125", "torch is built for another Python",
            fp["torch_python_mismatch"].get<std::string>() +
                (fp.contains("torch_import_error")
                     ? " (import torch: " + fact_text(fp, "torch_import_error") + ")"
                     : std::string()),
            fact_text(fp, "torch_python_mismatch_fix"));
    } else if (fp.contains("torch_crash")) {
        add("DR120", "torch's process died", fp["torch_crash"].get<std::string>(),
            fp["damaged_files"].empty() ? "find what is wrong with the library named"
                                        : "reinstall the damaged wheels (DR122)");
    } else if (!torch.is_object() && fp.contains("torch_import_error")) {
        auto [detail, fix] =
            explained(fp["torch_import_error"].get<std::string>(),
                      "no known cause for this error; DR104 names libraries that do not resolve");
        add("DR116", "torch does not import", detail, fix);
    } else if (!torch.is_object() && !fp.value("torch_probed", false) &&
               fp.contains("torch_error")) {
        // No evidence is not evidence of absence: doctor says it could not look.
        add("DR121", "torch could not be probed", fp["torch_error"].get<std::string>(),
            "make the torch probe run to its end in this environment (see the reason)");
    } else if (!torch.is_object() &&
               (fp.value("torch_installed", false) || fp.contains("torch_elsewhere"))) {
        add("DR121", "torch is installed but was not found",
            fp["torch_error"].get<std::string>() +
                (fp.contains("torch_elsewhere")
                     ? "; torch imports in " + fact_text(fp, "torch_elsewhere") +
                           ", which is not the python the environment runs"
                     : std::string()),
            "check which python the environment runs (TD127 in `torchdock validate`): put "
            "the environment with torch first on PATH, or run through its runner (uv run, "
            "poetry run)");
    } else if (!torch.is_object() && fp.contains("torch_error")) {
        add("DR113", "no torch", fp["torch_error"].get<std::string>(),
            "install torch if this environment should run it");
    }
    if (!fp["damaged_files"].empty()) {
        std::vector<std::string> files;
        for (auto& d : fp["damaged_files"])
            files.push_back(fact_text(d, "distribution") + ": " + fact_text(d, "path") + " (" +
                            fact_text(d, "kind") + ")");
        add("DR122", "installed files differ from their wheels' RECORD", join(files, "; "),
            "pip install --force-reinstall --no-deps the wheels named");
    }
    return;
}

}  // namespace

std::vector<Finding> doctor_findings(const json& fp, const KnowledgeBase& kb,
                                     const ErrorSignatures* signatures) {
    std::vector<Finding> out;
    // The fingerprint carries what an image's probes answered, in any shape (adversarial-2
    // N12): a value of another type than doctor writes ends the judging with DR123, never
    // with an exception.
    try {
        judge_fingerprint(fp, kb, signatures, out);
    } catch (const std::exception& e) {
        out.push_back({"DR123", finding_info("DR123").severity, finding_info("DR123").title,
                       std::string(e.what()) + "; the findings after it were not judged",
                       "re-run doctor; where the value came from an image's probe answer, that "
                       "image's answers are not evidence"});
    }
    return out;
}

json findings_json(const std::vector<Finding>& findings) {
    json out = json::array();
    for (const auto& f : findings)
        out.push_back({{"id", f.id},
                       {"severity", f.severity},
                       {"title", f.title},
                       {"detail", f.detail},
                       {"fix", f.fix}});
    return out;
}

}  // namespace td
