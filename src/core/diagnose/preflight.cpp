#include "core/diagnose/preflight.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/diagnose/container_requirement.hpp"
#include "core/diagnose/explain_facts.hpp"
#include "core/validate/kernel_coverage.hpp"
#include "core/validate/python_abi.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

using json = nlohmann::json;

Error fc_error(const std::string& path, const std::string& message) {
    return Error{ErrorKind::Config, "forward_compat.json: " + path + ": " + message};
}

std::string get(const std::map<std::string, std::string>& m, const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? std::string() : it->second;
}

// "12.4.1" -> "12.4"; anything that is not a version is returned as given.
std::string major_minor_of(const std::string& text) {
    auto v = Version::parse(text);
    return v ? v->major_minor() : text;
}

bool at_least(const Version& have, const std::string& floor) {
    auto f = Version::parse(floor);
    return f && *f <= have;
}

std::vector<std::string> parse_arch_list(const std::string& text) {
    std::vector<std::string> out;
    std::string cur;
    auto flush = [&] {
        if (!cur.empty()) out.push_back(normalize_arch(cur));
        cur.clear();
    };
    for (char c : text) {
        if (c == ';' || c == ',' || std::isspace(static_cast<unsigned char>(c)))
            flush();
        else
            cur += c;
    }
    flush();
    return out;
}

// The first minor release of CUDA `major` that the knowledge base knows.
const CudaMinor* first_minor(const KnowledgeBase& kb, int major) {
    for (int minor = 0; minor <= 9; ++minor)
        if (const CudaMinor* c = kb.cuda(std::to_string(major) + "." + std::to_string(minor)))
            return c;
    return nullptr;
}

// The CUDA major family a driver belongs to for minor-version compatibility: the newest
// major whose minor-version-compatibility floor the driver meets.
std::optional<int> driver_cuda_major(const KnowledgeBase& kb, const Version& driver) {
    std::optional<int> best;
    for (int major = 9; major <= 40; ++major) {
        const CudaMinor* c = first_minor(kb, major);
        if (c && at_least(driver, c->minor_compat_min_driver)) best = major;
    }
    return best;
}

std::optional<std::string> oldest_cuda(const KnowledgeBase& kb) {
    for (int major = 9; major <= 40; ++major)
        if (const CudaMinor* c = first_minor(kb, major)) return c->version;
    return std::nullopt;
}

bool version_less(const std::string& a, const std::string& b) {
    auto va = Version::parse(a), vb = Version::parse(b);
    return va && vb && *va < *vb;
}

std::string compat_package(const std::string& cuda_mm) {
    std::string s = cuda_mm;
    std::replace(s.begin(), s.end(), '.', '-');
    return "cuda-compat-" + s;
}

enum class DriverPath { None, Native, MinorCompat, ForwardCompat };

}  // namespace

Result<ForwardCompat> ForwardCompat::parse(const std::string& text) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const std::exception& e) {
        return fc_error("$", std::string("not JSON: ") + e.what());
    }
    if (!doc.is_object()) return fc_error("$", "expected an object");
    if (!doc.contains("schema") || doc["schema"] != 1)
        return fc_error("$.schema", "unsupported schema (expected 1)");
    ForwardCompat fc;
    if (auto it = doc.find("requires"); it != doc.end() && it->is_object()) {
        if (it->contains("text") && (*it)["text"].is_string())
            fc.requirement = (*it)["text"].get<std::string>();
        if (it->contains("source") && (*it)["source"].is_string())
            fc.source = (*it)["source"].get<std::string>();
    }
    auto branches = doc.find("branches");
    if (branches == doc.end() || !branches->is_array())
        return fc_error("$.branches", "expected an array");
    std::set<int> seen;
    for (std::size_t i = 0; i < branches->size(); ++i) {
        const json& b = (*branches)[i];
        std::string path = "$.branches[" + std::to_string(i) + "]";
        if (!b.is_object()) return fc_error(path, "expected an object");
        ForwardCompatBranch out;
        if (!b.contains("branch") || !b["branch"].is_number_integer())
            return fc_error(path + ".branch", "expected an integer");
        out.branch = b["branch"].get<int>();
        if (!seen.insert(out.branch).second)
            return fc_error(path + ".branch",
                            "branch " + std::to_string(out.branch) + " is listed twice");
        for (const char* key : {"min_driver", "native_cuda"}) {
            if (!b.contains(key) || !b[key].is_string() ||
                !Version::parse(b[key].get<std::string>()))
                return fc_error(path + "." + key, "expected a version string");
        }
        out.min_driver = b["min_driver"].get<std::string>();
        out.native_cuda = b["native_cuda"].get<std::string>();
        if (Version::parse(out.min_driver)->major() != out.branch)
            return fc_error(path + ".min_driver", "is not in branch " + std::to_string(out.branch));
        if (!b.contains("cuda") || !b["cuda"].is_array())
            return fc_error(path + ".cuda", "expected an array");
        for (std::size_t j = 0; j < b["cuda"].size(); ++j) {
            const json& c = b["cuda"][j];
            auto v = c.is_string() ? Version::parse(c.get<std::string>()) : std::nullopt;
            if (!v || v->parts().size() != 2)
                return fc_error(path + ".cuda[" + std::to_string(j) + "]",
                                "expected a CUDA major.minor");
            out.cuda.push_back(v->major_minor());
        }
        for (const char* key : {"end_of_life", "unconfirmed"})
            if (b.contains(key) && !b[key].is_boolean())
                return fc_error(path + "." + key, "expected true or false");
        out.end_of_life = b.value("end_of_life", false);
        out.unconfirmed = b.value("unconfirmed", false);
        if (b.contains("note") && b["note"].is_string()) out.note = b["note"].get<std::string>();
        if (!b.contains("source") || !b["source"].is_string())
            return fc_error(path + ".source", "every fact needs a source");
        fc.branches.push_back(std::move(out));
    }
    return fc;
}

const ForwardCompatBranch* ForwardCompat::branch_of(const std::string& driver_version) const {
    auto v = Version::parse(driver_version);
    if (!v) return nullptr;
    for (const auto& b : branches)
        if (b.branch == v->major()) return &b;
    return nullptr;
}

bool ForwardCompat::supports(const std::string& driver_version,
                             const std::string& cuda_version) const {
    const ForwardCompatBranch* b = branch_of(driver_version);
    if (!b || b->end_of_life) return false;
    auto have = Version::parse(driver_version);
    if (!have || !at_least(*have, b->min_driver)) return false;
    auto cuda = Version::parse(cuda_version);
    if (!cuda) return false;
    return std::find(b->cuda.begin(), b->cuda.end(), cuda->major_minor()) != b->cuda.end();
}

ContainerRequirements container_requirements(const std::vector<std::string>& image_env) {
    ContainerRequirements r;
    for (const auto& kv : image_env) {
        if (starts_with(kv, "NVIDIA_REQUIRE_CUDA=")) r.require_cuda = kv.substr(20);
        if (starts_with(kv, "NVIDIA_DISABLE_REQUIRE=") && kv.size() > 23) r.disable_require = true;
        if (kv == "CUDA_VISIBLE_DEVICES=" || kv == "CUDA_VISIBLE_DEVICES=-1" ||
            kv == "NVIDIA_VISIBLE_DEVICES=void" || kv == "NVIDIA_VISIBLE_DEVICES=none")
            r.hides_gpus = kv;
    }
    return r;
}

PreflightResult preflight(const std::map<std::string, std::string>& expect,
                          const std::string& driver_version,
                          const std::vector<std::string>& gpu_models, const KnowledgeBase& kb,
                          const ForwardCompat& fc, const ContainerRequirements& requirements,
                          const ImageProbes& probed) {
    PreflightResult r;
    // The CUDA torch was built with stands in for a CUDA label the image lacks.
    std::string cuda = major_minor_of(get(expect, "cuda"));
    if (cuda.empty() && probed.torch.is_object() && probed.torch.contains("cuda") &&
        probed.torch["cuda"].is_string() && !probed.torch["cuda"].get<std::string>().empty()) {
        cuda = major_minor_of(probed.torch["cuda"].get<std::string>());
        r.notes.push_back("CUDA " + cuda +
                          " is torch's build CUDA (torch.version.cuda): the image "
                          "names none");
    }
    const CudaMinor* cm = cuda.empty() ? nullptr : kb.cuda(cuda);
    std::string min_driver = get(expect, "min-driver");
    if (min_driver.empty() && cm) min_driver = kb.min_driver(cuda);
    // A floor the knowledge base could not confirm says so wherever it is printed.
    const bool floor_unconfirmed =
        get(expect, "min-driver-unconfirmed") == "true" ||
        (cm && min_driver == kb.min_driver(cuda) && kb.min_driver_unconfirmed(cuda));
    const std::string floor_text =
        min_driver + (floor_unconfirmed ? " (unconfirmed in the knowledge base)" : "");
    std::string min_compat = get(expect, "min-driver-compat");
    if (min_compat.empty() && cm) min_compat = cm->minor_compat_min_driver;
    const auto have = Version::parse(driver_version);
    const auto cuda_v = Version::parse(cuda);
    const std::string cuda_name = cuda.empty() ? std::string("the image's CUDA") : "CUDA " + cuda;

    // Which GPUs are data-center GPUs (forward compatibility needs them all to be).
    std::vector<std::string> not_datacenter;
    bool all_known = true;
    for (const auto& m : gpu_models) {
        const GpuModel* g = kb.gpu(m);
        if (!g)
            all_known = false;
        else if (!g->datacenter)
            not_datacenter.push_back(m);
    }
    const bool all_datacenter = !gpu_models.empty() && all_known && not_datacenter.empty();

    // The driver.
    DriverPath path = DriverPath::None;
    if (driver_version.empty() || !have) {
        r.driver_verdict =
            driver_version.empty()
                ? "the host driver version is unknown"
                : "the host driver version " + quote_value(driver_version) + " is not a version";
    } else if (min_driver.empty()) {
        path = DriverPath::Native;
        r.driver_verdict = "the image names no CUDA version or minimum driver; driver " +
                           driver_version + " is not checked";
    } else if (at_least(*have, min_driver)) {
        path = DriverPath::Native;
        r.driver_verdict =
            "driver " + driver_version + " meets " + cuda_name + "'s minimum driver " + floor_text;
    } else {
        std::optional<int> family = driver_cuda_major(kb, *have);
        bool same_major = cuda_v && family && *family == cuda_v->major();
        bool fc_ok = !cuda.empty() && fc.supports(driver_version, cuda);
        const ForwardCompatBranch* branch = fc.branch_of(driver_version);
        std::string branch_name = std::to_string(have->major());
        if (!min_compat.empty() && at_least(*have, min_compat) && same_major) {
            path = DriverPath::MinorCompat;
            r.driver_verdict = "ok through CUDA minor-version compatibility: driver " +
                               driver_version + " (CUDA " + std::to_string(*family) +
                               ".x family, >= " + min_compat + ") is older than " + cuda_name +
                               "'s minimum driver " + floor_text +
                               "; caveat: no PTX JIT of newer PTX (kernels must be compiled for "
                               "the GPU; PTX built by "
                               "the newer toolkit cannot be JIT-compiled by this driver), and APIs "
                               "newer than the driver "
                               "fail with cudaErrorCallRequiresNewerDriver";
            if (fc_ok && all_datacenter)
                r.notes.push_back(
                    "on these data-center GPUs the CUDA forward-compatibility package " +
                    compat_package(cuda) + " also supports driver branch " + branch_name +
                    " and lifts the PTX JIT restriction");
        } else if (fc_ok && all_datacenter) {
            path = DriverPath::ForwardCompat;
            r.driver_verdict = "ok only with the CUDA forward-compatibility package (" +
                               compat_package(cuda) + "): driver " + driver_version + " (branch " +
                               branch_name + ") is older than " + cuda_name + "'s minimum driver " +
                               floor_text +
                               "; forward compatibility works on data-center GPUs only and does "
                               "not work on GeForce/RTX GPUs";
            r.notes.push_back("the image must contain " + compat_package(cuda) +
                              " (nvidia/cuda images do, in /usr/local/cuda-" + cuda +
                              "/compat) and load it (LD_LIBRARY_PATH=/usr/local/cuda-" + cuda +
                              "/compat, or the NVIDIA container toolkit's compat handling); no "
                              "CUDA-OpenGL/Vulkan interop");
        } else {
            std::string v = "not ok: driver " + driver_version + " is too old for " + cuda_name +
                            ": it needs driver >= " + floor_text;
            if (!min_compat.empty() && cuda_v)
                v += " (or >= " + min_compat + " of the CUDA " + std::to_string(cuda_v->major()) +
                     ".x family through minor-version compatibility)";
            if (fc_ok && gpu_models.empty())
                v += "; forward compatibility (" + compat_package(cuda) + ") supports branch " +
                     branch_name + " only on data-center GPUs, and no GPUs were named";
            else if (fc_ok && !not_datacenter.empty())
                v += "; forward compatibility (" + compat_package(cuda) + ") supports branch " +
                     branch_name + " but only on data-center GPUs, which " +
                     join(not_datacenter, ", ") +
                     (not_datacenter.size() == 1 ? " is not" : " are not") +
                     ": it does not work on GeForce/RTX GPUs";
            else if (fc_ok)
                v +=
                    "; forward compatibility (" + compat_package(cuda) + ") supports branch " +
                    branch_name +
                    " only on data-center GPUs, and not every GPU named is a known data-center GPU";
            else if (branch && branch->end_of_life)
                v += "; the " + branch_name +
                     " branch is end of life for forward compatibility (NVIDIA's matrix no longer "
                     "lists it)";
            else if (branch && !cuda.empty())
                v += "; forward compatibility does not help: NVIDIA's matrix has no " +
                     compat_package(cuda) + " for branch " + branch_name;
            else if (!cuda.empty())
                v += "; forward compatibility does not help: branch " + branch_name +
                     " is not in NVIDIA's forward-compatibility matrix";
            r.driver_verdict = v;
        }
    }
    r.driver_ok = path != DriverPath::None;
    bool driver_checked = path != DriverPath::None && !min_driver.empty();
    if (!driver_checked && path == DriverPath::None && have) driver_checked = true;  // a "no"

    // The container toolkit's own admission check (NVIDIA_REQUIRE_CUDA), which runs before
    // anything in the image and does not know about minor-version compatibility.
    if (!requirements.require_cuda.empty() && have) {
        std::string driver_cuda = explain_detail::cuda_for_driver(kb, driver_version);
        RequirementVerdict req =
            evaluate_require_cuda(requirements.require_cuda, driver_version, driver_cuda);
        std::string what = "the image's NVIDIA_REQUIRE_CUDA (\"" + requirements.require_cuda +
                           "\") against driver " + driver_version +
                           (driver_cuda.empty() ? "" : " (CUDA " + driver_cuda + ")");
        if (req.outcome == RequirementVerdict::Outcome::NotMet) {
            driver_checked = true;
            if (requirements.disable_require) {
                r.notes.push_back(what + " is not met (" + req.detail +
                                  "), but the image sets NVIDIA_DISABLE_REQUIRE");
            } else if (r.driver_ok) {
                r.driver_verdict =
                    "ok only with -e NVIDIA_DISABLE_REQUIRE=1: the NVIDIA container "
                    "toolkit refuses to start the container otherwise, because " +
                    what + " is not met (" + req.detail + "); then " + r.driver_verdict;
                r.run_flags.push_back("-e NVIDIA_DISABLE_REQUIRE=1");
            } else {
                r.driver_verdict +=
                    "; besides, the NVIDIA container toolkit refuses to start it: " + what +
                    " is not met (" + req.detail + ")";
            }
        } else if (req.outcome == RequirementVerdict::Outcome::Unknown) {
            r.notes.push_back(what + " could not be decided here: " + req.detail);
        }
    }

    // The GPUs.
    const std::string arch_text = get(expect, "arch-list");
    const std::vector<std::string> arch = parse_arch_list(arch_text);
    std::vector<std::string>
        cubins;  // the arch list without its PTX ("9.0+PTX" also carries a sm_90 cubin)
    for (const auto& a : arch)
        cubins.push_back(ends_with(a, "+PTX") ? a.substr(0, a.size() - 4) : a);
    std::vector<const GpuModel*> targets_promised;
    const std::string target_text = get(expect, "target-gpus");
    for (const auto& t : split(target_text, ',')) {
        std::string name = t;
        while (!name.empty() && name.front() == ' ') name.erase(name.begin());
        while (!name.empty() && name.back() == ' ') name.pop_back();
        if (const GpuModel* g = name.empty() ? nullptr : kb.gpu(name))
            targets_promised.push_back(g);
    }
    const std::optional<std::string> oldest = oldest_cuda(kb);
    bool noted_unknown_cuda = false;
    bool kernels_judged = false;  // the audit judged at least one object for some GPU

    for (const auto& model : gpu_models) {
        PreflightTarget t;
        t.gpu = model;
        const GpuModel* g = kb.gpu(model);
        if (!g) {
            std::string reason = "unknown GPU model " + quote_value(model);
            std::vector<std::string> names = kb.gpu_names();
            if (auto m = closest_match(model, names))
                reason += "; did you mean " + quote_value(*m) + "?";
            t.reasons.push_back(reason);
            r.targets.push_back(std::move(t));
            continue;
        }
        t.cc = g->cc;
        const std::string sm = sm_name(g->cc);
        if (cm) {
            if (!sm_list_covers(cm->sm, g->cc)) {
                auto first = kb.first_cuda_for(g->cc), last = kb.last_cuda_for(g->cc);
                std::string reason = "CUDA " + cuda + " cannot build for " + g->model + " (cc " +
                                     g->cc + ", " + sm + ")";
                if (first && version_less(cuda, *first))
                    reason += ": it needs CUDA " + *first + " or newer";
                else if (last && version_less(*last, cuda))
                    reason +=
                        ": CUDA " + cuda + " dropped " + sm + "; the last CUDA for it is " + *last;
                else if (!first)
                    reason += ": no CUDA version in the knowledge base supports it";
                t.reasons.push_back(reason);
            }
        } else if (!cuda.empty() && !noted_unknown_cuda) {
            r.notes.push_back(
                "CUDA " + cuda +
                " is not in the knowledge base; which GPU families it supports was not checked");
            noted_unknown_cuda = true;
        }
        if (!arch.empty()) {
            if (!arch_list_covers(arch, g->cc)) {
                t.reasons.push_back(
                    "the image's arch list (" + join(arch, ";") + ") has no kernels for " +
                    g->model + " (cc " + g->cc + ", " + sm +
                    "): 'no kernel image is available for execution on the device'");
            } else if (!arch_list_covers(cubins, g->cc)) {
                if (path == DriverPath::MinorCompat)
                    t.reasons.push_back("the arch list covers cc " + g->cc +
                                        " only through PTX, which needs JIT compilation; "
                                        "under minor-version compatibility this driver cannot JIT "
                                        "PTX from the newer toolkit");
                else
                    r.notes.push_back(g->model + " (cc " + g->cc +
                                      ") runs PTX JIT-compiled at load time (no " + sm +
                                      " kernels in the arch list): a slow first start");
            }
        }
        // The code the image really carries (torch, extensions, the CUDA libraries it loads).
        if (probed.audit.is_object())
            for (const auto& v :
                 judge_kernels_for_torch(probed.audit, probed.torch, {{model, g->cc}})) {
                kernels_judged = kernels_judged || v.objects_judged > 0;
                if (!v.runs()) t.reasons.push_back("kernel audit: " + kernel_verdict_summary(v));
            }
        // A driver older than the first toolkit that targets an architecture predates its GPUs;
        // the forward-compatibility package does not change that (the kernel driver stays old).
        if (have) {
            auto first = kb.first_cuda_for(g->cc);
            const CudaMinor* fc_minor = first ? kb.cuda(*first) : nullptr;
            if (first && oldest && *first != *oldest && fc_minor && !fc_minor->releases.empty() &&
                !at_least(*have, fc_minor->releases.front().min_driver))
                t.reasons.push_back("driver " + driver_version + " predates " + g->model + " (cc " +
                                    g->cc + "): its GPUs need a driver of the CUDA " + *first +
                                    " generation (>= " + fc_minor->releases.front().min_driver +
                                    ")");
        }
        if (!targets_promised.empty() && std::find(targets_promised.begin(), targets_promised.end(),
                                                   g) == targets_promised.end())
            r.notes.push_back(model + " is not among the image's target GPUs (" + target_text +
                              ")");
        t.ok = t.reasons.empty();
        r.targets.push_back(std::move(t));
    }
    if (gpu_models.empty())
        r.notes.push_back("no GPU models were given; only the driver was checked");
    if (!requirements.hides_gpus.empty())
        r.notes.push_back("the image sets " + requirements.hides_gpus +
                          ": its containers see no GPU unless a run overrides it");
    // Labels are expectations; torch's own build is evidence. A CPU build of torch runs
    // nothing on a GPU, whatever the labels promise.
    const json& pt = probed.torch;
    bool torch_seen = pt.is_object() && pt.contains("torch") && pt["torch"].is_string();
    if (torch_seen &&
        (!pt.contains("cuda") || !pt["cuda"].is_string() || pt["cuda"].get<std::string>().empty()))
        for (auto& t : r.targets)
            t.reasons.push_back("torch " + pt["torch"].get<std::string>() +
                                " in the image is a CPU build (torch.version.cuda is None): it "
                                "runs nothing on a GPU");
    // A torch that does not import runs nothing on any GPU: that is the answer's reason, not
    // the GPU code of libraries it never reached (judge_kernels_for_torch then audits only
    // torch's own objects). Nor does a torch built for another Python than the image runs
    // (a 3.11 venv in a 3.13 stage: "no torch module" there), named as the cause.
    const std::string other_python = torch_python_mismatch(pt);
    if (pt.is_object() && pt.contains("import_error") && pt["import_error"].is_string())
        for (auto& t : r.targets)
            t.reasons.push_back("torch does not import in the image (" +
                                pt["import_error"].get<std::string>().substr(0, 200) +
                                (other_python.empty() ? "" : "; the cause: " + other_python) +
                                "): it runs nothing on a GPU");
    else if (!other_python.empty())
        for (auto& t : r.targets) t.reasons.push_back(other_python + ": it runs nothing on a GPU");
    for (auto& t : r.targets) t.ok = t.reasons.empty();
    if (!probed.audit.is_object() && !probed.not_audited.empty())
        r.notes.push_back("the image's kernels were not audited: " + probed.not_audited);
    if (auto missing = torch_archs_missing_from_binary(probed.audit, probed.torch);
        !missing.empty())
        r.notes.push_back("torch reports " + join(missing, ", ") +
                          " but libtorch_cuda.so has no such image (reinstall torch)");
    if (arch.empty() && !kernels_judged)
        r.notes.push_back(
            "the image names no arch list; kernel coverage of the GPUs was not checked");

    r.ok = r.driver_ok && std::all_of(r.targets.begin(), r.targets.end(),
                                      [](const PreflightTarget& t) { return t.ok; });
    // YES needs something checked: the driver against a floor, or the GPUs against an arch
    // list or the image's CUDA. Neither checked is not a yes.
    const bool gpus_checked =
        !gpu_models.empty() && (!arch.empty() || cm != nullptr || kernels_judged);
    r.answer = !r.ok ? "no" : driver_checked || gpus_checked ? "yes" : "unknown";
    // A yes rests on the image's own code: torch seen and its kernels judged. From labels
    // alone (the probes could not run, or found no torch) it is "unknown", unless the user
    // chose to skip the audit.
    if (r.answer == "yes" && !kernels_judged && !torch_seen &&
        probed.not_audited != "--no-kernel-audit") {
        r.answer = "unknown";
        r.notes.push_back(
            "no torch and no GPU code could be examined in the image: the labels alone are "
            "expectations, not evidence");
    }
    if (r.answer == "unknown")
        r.notes.push_back(
            "nothing could be checked: the image names no CUDA version, driver floor or arch list "
            "(label it, or pass --expect cuda=... arch-list=...)");

    // How to run it (NVIDIA's recommendation for NGC containers).
    r.run_flags.insert(r.run_flags.begin(), "--gpus all");
    if (!get(expect, "nccl").empty()) {
        r.run_flags.push_back("--ipc=host");
        r.notes.push_back(
            "NCCL and DataLoader workers need shared memory: --ipc=host, or --shm-size=8g where "
            "the host IPC "
            "namespace must not be shared");
    }
    r.run_flags.push_back("--ulimit memlock=-1");
    r.run_flags.push_back("--ulimit stack=67108864");
    return r;
}

}  // namespace td
