#include "core/validate/checks.hpp"

#include <algorithm>

#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

using nlohmann::json;

const std::vector<CheckInfo> k_catalog = {
    {"TD101", "cuda.runtime", "static",
     "the CUDA runtime in the image has the labelled major.minor"},
    {"TD102", "cudnn.version", "static",
     "the cuDNN that torch (or the loader) finds is the labelled version"},
    {"TD103", "cudnn.cuda_major", "static", "cuDNN was built for the CUDA major the image runs"},
    {"TD104", "nccl.version", "static",
     "the NCCL that torch (or the loader) finds is the labelled version"},
    {"TD110", "libs.resolved", "static",
     "every shared library the CUDA stack and torch need resolves"},
    {"TD111", "libs.duplicates", "static",
     "no two different copies of cudart/cuBLAS/cuDNN/NCCL could shadow each other"},
    {"TD120", "torch.version", "static", "torch reports the labelled version"},
    {"TD121", "torch.cuda", "static",
     "torch was built for the image's CUDA major (or is a CPU build in a CPU image)"},
    {"TD122", "torch.arch_targets", "static", "torch's compiled arch list covers every target GPU"},
    {"TD123", "torch.distributed", "static",
     "a real multi-process all-reduce (gloo on CPU, NCCL on GPUs) gives the exact sum"},
    {"TD130", "shm.size", "static", "/dev/shm is large enough for NCCL and data loader workers"},
    {"TD140", "gpu.available", "gpu", "the probes see at least one GPU"},
    {"TD141", "driver.floor", "gpu", "the host driver meets the image's minimum driver"},
    {"TD142", "torch.arch_gpus", "gpu", "torch's arch list covers every GPU present"},
    {"TD143", "gemm.correct", "gpu", "cuBLAS GEMM results match an FP64 host reference"},
    {"TD144", "gemm.throughput", "gpu", "GEMM TFLOP/s at or above the manifest's threshold"},
    {"TD145", "nccl.allreduce", "gpu", "NCCL all-reduce over all GPUs gives the exact sum"},
    {"TD146", "nccl.busbw", "gpu", "all-reduce bus bandwidth at or above the manifest's threshold"},
    {"TD147", "torch.matmul", "gpu", "torch.matmul on the GPU matches its reference"},
};

const CheckInfo& info(const std::string& id) {
    for (const auto& c : k_catalog)
        if (id == c.id) return c;
    return k_catalog.front();
}

std::string str(const json& j, const char* key) {
    if (!j.is_object()) return {};
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_integer()) return std::to_string(it->get<long long>());
    if (it->is_number()) return std::to_string(it->get<double>());
    if (it->is_boolean()) return it->get<bool>() ? "true" : "false";
    return {};
}

// Compares the first `n` components.
bool same_prefix(const std::string& a, const std::string& b, std::size_t n) {
    auto va = Version::parse(a.substr(0, a.find_first_not_of("0123456789.")));
    auto vb = Version::parse(b.substr(0, b.find_first_not_of("0123456789.")));
    if (!va || !vb) return a == b;
    for (std::size_t i = 0; i < n; ++i) {
        int x = i < va->parts().size() ? va->parts()[i] : 0;
        int y = i < vb->parts().size() ? vb->parts()[i] : 0;
        if (x != y) return false;
    }
    return true;
}

class Judge {
  public:
    Judge(const ValidationInput& in, const KnowledgeBase& kb) : m_in(in), m_kb(kb) {}

    std::vector<CheckResult> run() {
        cuda_runtime();
        cudnn_version();
        cudnn_cuda_major();
        nccl_version();
        libs_resolved();
        libs_duplicates();
        torch_checks();
        shm_size();
        gpu_tier();
        return m_out;
    }

  private:
    const ValidationInput& m_in;
    const KnowledgeBase& m_kb;
    std::vector<CheckResult> m_out;

    const ProbeRun* probe(const std::string& name) const {
        auto it = m_in.probes.find(name);
        return it == m_in.probes.end() ? nullptr : &it->second;
    }
    const json& data(const std::string& name) const {
        static const json empty;
        const ProbeRun* p = probe(name);
        return p && p->usable() ? p->data : empty;
    }
    std::string expected(const std::string& key) const {
        auto it = m_in.expect.find(key);
        return it == m_in.expect.end() ? std::string() : it->second;
    }
    // Why a probe's data is missing, for skip messages.
    std::string why_missing(const std::string& name) const {
        const ProbeRun* p = probe(name);
        if (!p) return "probe " + name + " was not run";
        if (p->state != ProbeRun::State::Ran) return "probe " + name + ": " + p->reason;
        if (!p->usable()) return "probe " + name + " printed no result (" + p->reason + ")";
        return p->reason;
    }

    void add(const std::string& id, const std::string& status, const std::string& observed,
             const std::string& expect, const std::string& message, const std::string& fix = {},
             const std::string& severity = "error") {
        const CheckInfo& c = info(id);
        m_out.push_back(
            {id, c.name, severity, status, observed, expect, message, status == "pass" ? "" : fix});
    }
    void skip(const std::string& id, const std::string& reason) { add(id, "skip", "", "", reason); }

    // CUDA runtime as the image shows it: the loader's libcudart, else the one torch carries.
    std::string observed_cuda() const {
        const json& c = data("cuda");
        if (c.contains("runtime_version") && c["runtime_version"].is_number_integer())
            return cuda_version_from_int(c["runtime_version"].get<long long>());
        return str(data("torch"), "cuda");
    }

    void cuda_runtime() {
        std::string want = expected("cuda"), have = observed_cuda();
        if (want.empty()) {
            if (have.empty())
                add("TD101", "pass", "none", "none", "no CUDA expected and none found (CPU image)");
            else
                add("TD101", "pass", have, "none",
                    "CUDA " + have + " present although none is labelled");
            return;
        }
        if (have.empty())
            return add("TD101", "fail", "none", want,
                       "the image promises CUDA " + want + " but no CUDA runtime loads (" +
                           why_missing("cuda") + ")",
                       "install the CUDA " + want + " runtime (libcudart.so." +
                           split(want, '.')[0] + ") or fix the io.torchdock.cuda label");
        if (same_prefix(have, want, 2))
            add("TD101", "pass", have, want, "CUDA runtime " + have);
        else
            add("TD101", "fail", have, want,
                "the image runs CUDA " + have + " but is labelled " + want,
                "rebuild from a base with CUDA " + want + ", or correct the label");
    }

    std::string observed_cudnn() const {
        const json& t = data("torch");
        if (t.contains("cudnn") && t["cudnn"].is_number_integer())
            return cudnn_version_from_int(t["cudnn"].get<long long>());
        return str(data("cudnn"), "version_string");
    }

    // A library version promised by a label against the one found (TD102 cuDNN, TD104 NCCL).
    void library_version(const char* id, const std::string& library, const std::string& want,
                         const std::string& have, const std::string& probe,
                         const std::string& mismatch_fix) {
        if (want.empty()) return skip(id, "no " + library + " version is labelled or expected");
        if (have.empty())
            return add(id, "fail", "none", want,
                       library + " " + want + " is promised but none is found (" +
                           why_missing(probe) + ")",
                       "install " + library + " " + want);
        if (same_prefix(have, want, 3))
            add(id, "pass", have, want, library + " " + have);
        else
            add(id, "fail", have, want,
                library + " " + have + " is found, " + want + " is labelled", mismatch_fix);
    }

    void cudnn_version() {
        library_version(
            "TD102", "cuDNN", expected("cudnn"), observed_cudnn(), "cudnn",
            "a different cuDNN shadows the intended one: check LD_LIBRARY_PATH and TD111");
    }

    void cudnn_cuda_major() {
        const json& d = data("cudnn");
        if (!d.contains("cudart_version") || !d["cudart_version"].is_number_integer())
            return skip("TD103",
                        "the cudnn probe found no cuDNN to ask (" + why_missing("cudnn") + ")");
        std::string built_for = cuda_version_from_int(d["cudart_version"].get<long long>());
        std::string runtime = observed_cuda();
        std::string major = split(built_for, '.')[0];
        // cuDNN loads libcudart of its own CUDA major at run time (dlopen, not DT_NEEDED).
        std::string soname = m_kb.cudart_soname(major);
        if (soname.empty()) soname = "libcudart for CUDA " + major;
        if (runtime.empty())
            return add("TD103", "fail", built_for, "a CUDA " + major + " runtime",
                       "cuDNN was built for CUDA " + built_for + " and needs " + soname +
                           ", which the image does not have",
                       "install the CUDA " + major +
                           " runtime, or the cuDNN build for the CUDA in the image");
        if (split(built_for, '.')[0] == split(runtime, '.')[0])
            add("TD103", "pass", built_for, "CUDA " + split(runtime, '.')[0] + ".x",
                "cuDNN was built for CUDA " + built_for);
        else
            add("TD103", "fail", built_for, "CUDA " + split(runtime, '.')[0] + ".x",
                "cuDNN was built for CUDA " + built_for + " and needs " + soname +
                    ", but the image runs CUDA " + runtime,
                "install the cuDNN build for CUDA " + split(runtime, '.')[0] +
                    " (e.g. nvidia-cudnn-cu" + split(runtime, '.')[0] + ")");
    }

    void nccl_version() {
        std::string have = str(data("torch"), "nccl");
        if (have.empty()) have = str(data("nccl"), "version");
        library_version("TD104", "NCCL", expected("nccl"), have, "nccl",
                        "check which libnccl.so.2 wins (TD111) or correct the label");
    }

    void libs_resolved() {
        const json& d = data("libs");
        if (!d.contains("unresolved")) return skip("TD110", why_missing("libs"));
        const json& u = d["unresolved"];
        if (!u.is_array() || u.empty()) {
            std::size_t n =
                d.contains("libraries") && d["libraries"].is_array() ? d["libraries"].size() : 0;
            return add("TD110", "pass", std::to_string(n) + " libraries resolved", "all resolve",
                       "every needed soname resolves");
        }
        std::vector<std::string> missing;
        for (const auto& e : u)
            missing.push_back(str(e, "soname") + " (needed by " + str(e, "needed_by") + ")");
        add("TD110", "fail", join(missing, "; "), "all resolve",
            "unresolved: " + missing.front() +
                (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more" : ""),
            fix_for_missing(str(u[0], "soname")));
    }

    static std::string fix_for_missing(const std::string& soname) {
        if (starts_with(soname, "libcudart.so.")) {
            std::string major = soname.substr(13, soname.find('.', 13) - 13);
            return "install the CUDA " + major + " runtime (apt cuda-cudart-" + major +
                   "-x, or the nvidia-cuda-runtime-cu" + major +
                   " wheel) or use libraries built for the CUDA in the image";
        }
        return "install the package that provides " + soname + ", or remove what needs it";
    }

    void libs_duplicates() {
        const json& d = data("libs");
        if (!d.contains("duplicates")) return skip("TD111", why_missing("libs"));
        std::vector<std::string> conflicts, same;
        for (const auto& dup : d["duplicates"]) {
            std::vector<std::string> versions, copies;
            for (const auto& c : dup.value("copies", json::array())) {
                copies.push_back(str(c, "path") + " (" + str(c, "version") + ")");
                versions.push_back(str(c, "version"));
            }
            std::sort(versions.begin(), versions.end());
            versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
            (versions.size() > 1 ? conflicts : same)
                .push_back(str(dup, "name") + ": " + join(copies, ", "));
        }
        if (!conflicts.empty())
            add("TD111", "fail", join(conflicts, "; "), "one version per library",
                "conflicting copies that can shadow each other: " + conflicts.front(),
                "remove one copy, or make LD_LIBRARY_PATH/RUNPATH pick the intended one");
        else if (!same.empty())
            add("TD111", "warn", join(same, "; "), "one copy per library",
                "several copies of the same version: " + same.front(),
                "harmless today; remove the extra copy to keep upgrades predictable", "warning");
        else
            add("TD111", "pass", "no duplicates", "one copy per library",
                "no duplicate CUDA libraries");
    }

    void torch_checks() {
        const ProbeRun* p = probe("torch");
        const json& t = data("torch");
        if (!t.contains("torch")) {
            std::string why = why_missing("torch");
            for (const char* id : {"TD120", "TD121", "TD122", "TD123"}) {
                if (p && p->state == ProbeRun::State::Ran && p->status == "error" &&
                    !expected("torch").empty())
                    add(id, "fail", "torch does not import", expected("torch"),
                        "torch probe: " + p->reason, "install torch " + expected("torch"));
                else
                    skip(id, why);
            }
            return;
        }
        std::string have = str(t, "torch");
        std::string want =
            expected("torch-reports").empty() ? expected("torch") : expected("torch-reports");
        std::string plain = have.substr(0, have.find('+'));
        if (want.empty())
            skip("TD120", "no torch version is labelled or expected");
        else if (plain == want || have == want)
            add("TD120", "pass", have, want, "torch " + have);
        else
            add("TD120", "fail", have, want, "torch reports " + have + ", " + want + " is labelled",
                "install torch==" + want + " or correct the label");

        std::string torch_cuda = str(t, "cuda"), want_cuda = expected("cuda");
        if (want_cuda.empty() && torch_cuda.empty())
            add("TD121", "pass", "cpu", "cpu", "CPU torch in a CPU image");
        else if (torch_cuda.empty())
            add("TD121", "fail", "cpu", want_cuda,
                "torch is a CPU build in an image labelled CUDA " + want_cuda,
                "install torch from the matching CUDA wheel index");
        else if (want_cuda.empty())
            add("TD121", "pass", torch_cuda, "-", "torch built for CUDA " + torch_cuda);
        else if (split(torch_cuda, '.')[0] == split(want_cuda, '.')[0])
            add("TD121", "pass", torch_cuda, want_cuda, "torch built for CUDA " + torch_cuda);
        else
            add("TD121", "fail", torch_cuda, want_cuda,
                "torch was built for CUDA " + torch_cuda + " but the image is CUDA " + want_cuda,
                "install the torch wheel for CUDA " + split(want_cuda, '.')[0] + ".x (e.g. +cu" +
                    split(want_cuda, '.')[0] + "x)");

        std::vector<std::string> arch;
        if (t.contains("arch_list") && t["arch_list"].is_array())
            for (const auto& a : t["arch_list"])
                arch.push_back(normalize_arch(a.get<std::string>()));
        std::string targets = expected("target-gpus");
        if (targets.empty())
            skip("TD122", "no target GPUs are labelled");
        else if (arch.empty())
            add("TD122", "fail", "no CUDA archs", targets,
                "torch has no compiled CUDA architectures", "install a CUDA build of torch");
        else {
            std::vector<std::string> uncovered;
            for (const auto& name : split(targets, ',')) {
                const GpuModel* g = m_kb.gpu(name);
                if (!g)
                    uncovered.push_back(
                        name + " (not in data/gpus.json, so its compute capability is unknown)");
                else if (!arch_list_covers(arch, g->cc))
                    uncovered.push_back(name + " (" + g->cc + ")");
            }
            if (uncovered.empty())
                add("TD122", "pass", join(arch, ";"), targets,
                    "the arch list covers every target GPU");
            else
                add("TD122", "fail", join(arch, ";"), targets,
                    "not covered: " + join(uncovered, ", "),
                    "use a torch build whose arch list includes these GPUs");
        }

        const json& dist = t.contains("distributed") ? t["distributed"] : json();
        if (!dist.is_object())
            skip("TD123", "the torch probe ran no distributed all-reduce");
        else if (dist.value("exact", false))
            add("TD123", "pass", str(dist, "observed"), str(dist, "expected"),
                str(dist, "backend") + " all-reduce over " + str(dist, "world_size") +
                    " processes is exact");
        else
            add("TD123", "fail", str(dist, "observed"), str(dist, "expected"),
                str(dist, "backend") + " all-reduce gave a wrong sum" +
                    (p && !p->reason.empty() ? ": " + p->reason : ""),
                "check the NCCL/gloo installation and NCCL_* environment variables");
    }

    void shm_size() {
        if (!m_in.shm_bytes) return skip("TD130", "the size of /dev/shm could not be read");
        long long mb = *m_in.shm_bytes / (1024 * 1024);
        std::string want_text = expected("validate.shm-min-mb");
        long long want = want_text.empty() ? 1024 : std::atoll(want_text.c_str());
        std::string expect = ">= " + std::to_string(want) + " MiB";
        if (mb >= want)
            return add("TD130", "pass", std::to_string(mb) + " MiB", expect,
                       "/dev/shm is large enough");
        add("TD130", want_text.empty() ? "warn" : "fail", std::to_string(mb) + " MiB", expect,
            "/dev/shm is " + std::to_string(mb) +
                " MiB under a default `docker run`; NCCL and DataLoader workers need more",
            "run with --ipc=host, or --shm-size=" + std::to_string(std::max(want / 1024, 1LL)) +
                "g",
            want_text.empty() ? "warning" : "error");
    }

    void gpu_tier() {
        std::vector<const char*> ids = {"TD140", "TD141", "TD142", "TD143",
                                        "TD144", "TD145", "TD146", "TD147"};
        if (!m_in.gpu_tier) {
            for (auto id : ids) skip(id, "GPU tier skipped: " + m_in.gpu_skip_reason);
            return;
        }
        const json& c = data("cuda");
        long long count = c.contains("device_count") && c["device_count"].is_number_integer()
                              ? c["device_count"].get<long long>()
                              : 0;
        if (count < 1) {
            std::string reason =
                c.contains("error") && c["error"].is_object()
                    ? str(c["error"], "name") + " (" + str(c["error"], "class") + ")"
                    : why_missing("cuda");
            add("TD140", "fail", "0 GPUs", ">= 1 GPU",
                "GPUs were requested but the probes see none: " + reason,
                "check the NVIDIA driver and nvidia-container-toolkit on the host");
            for (std::size_t i = 1; i < ids.size(); ++i)
                skip(ids[i], "no GPU visible to the probes");
            return;
        }
        std::vector<std::string> names;
        for (const auto& d : c["devices"])
            names.push_back(str(d, "name") + " (" + str(d, "cc") + ")");
        add("TD140", "pass", std::to_string(count) + " GPU(s): " + join(names, ", "), ">= 1 GPU",
            "GPUs visible");

        std::string driver = str(c, "nvidia_driver"), floor = expected("min-driver");
        // A floor the knowledge base could not confirm is labelled so, and printed so.
        std::string floor_note = expected("min-driver-unconfirmed") == "true"
                                     ? " (unconfirmed in the knowledge base)"
                                     : "";
        if (floor.empty())
            skip("TD141", "no minimum driver is labelled");
        else if (driver.empty())
            skip("TD141", "the host driver version could not be read");
        else {
            auto have = Version::parse(driver), want = Version::parse(floor);
            if (have && want && !(*have < *want))
                add("TD141", "pass", driver, ">= " + floor + floor_note, "driver " + driver);
            else
                add("TD141", "fail", driver, ">= " + floor + floor_note,
                    "the host driver " + driver + " is older than the image needs (" + floor +
                        floor_note + ")",
                    "upgrade the driver to " + floor +
                        " or newer (or use the cuda-compat package on data-center GPUs)");
        }

        const json& t = data("torch");
        if (!t.contains("arch_list"))
            skip("TD142", why_missing("torch"));
        else {
            std::vector<std::string> arch, uncovered;
            for (const auto& a : t["arch_list"])
                arch.push_back(normalize_arch(a.get<std::string>()));
            for (const auto& d : c["devices"])
                if (!arch_list_covers(arch, str(d, "cc")))
                    uncovered.push_back(str(d, "name") + " (" + str(d, "cc") + ")");
            if (uncovered.empty())
                add("TD142", "pass", join(arch, ";"), "present GPUs",
                    "the arch list covers the GPUs present");
            else
                add("TD142", "fail", join(arch, ";"), "present GPUs",
                    "no kernel image for: " + join(uncovered, ", "),
                    "use a torch build compiled for these GPUs");
        }

        gemm_checks();
        nccl_checks();
        const json& mm = t.contains("matmul") ? t["matmul"] : json();
        if (!mm.is_object())
            skip("TD147", "the torch probe ran no GPU matmul (" + why_missing("torch") + ")");
        else if (mm.value("correct", false))
            add("TD147", "pass", "correct", "correct", "torch.matmul matches its reference");
        else
            add("TD147", "fail", "wrong", "correct", "torch.matmul does not match its reference",
                "check the GPU and the torch/cuBLAS build");
    }

    void gemm_checks() {
        const ProbeRun* p = probe("gemm");
        const json& g = data("gemm");
        if (!g.contains("results")) {
            skip("TD143", why_missing("gemm"));
            skip("TD144", why_missing("gemm"));
            return;
        }
        std::vector<std::string> wrong, slow, figures;
        for (const auto& r : g["results"]) {
            std::string dtype = str(r, "dtype");
            if (!r.value("correct", false)) wrong.push_back(dtype);
            double tflops = r.value("tflops_median", 0.0);
            char buf[64];
            std::snprintf(buf, sizeof buf, "%s %.1f", dtype.c_str(), tflops);
            figures.push_back(buf);
            std::string min = expected("validate.gemm-tflops-min." + dtype);
            if (!min.empty() && tflops < std::atof(min.c_str()))
                slow.push_back(std::string(buf) + " < " + min);
        }
        if (wrong.empty() && p && p->status != "fail")
            add("TD143", "pass", "correct", "correct", "GEMM results match the FP64 reference");
        else
            add("TD143", "fail", "wrong: " + join(wrong, ","), "correct",
                "GEMM results outside tolerance for " + join(wrong, ", "),
                "check the GPU (ECC errors, clocks) and the cuBLAS installation");
        bool any_threshold = false;
        for (const auto& [k, v] : m_in.expect)
            any_threshold = any_threshold || starts_with(k, "validate.gemm-tflops-min.");
        if (!any_threshold)
            skip("TD144",
                 "no GEMM threshold is labelled (measured: " + join(figures, ", ") + " TFLOP/s)");
        else if (slow.empty())
            add("TD144", "pass", join(figures, ", ") + " TFLOP/s", "thresholds met",
                "GEMM throughput meets the thresholds");
        else
            add("TD144", "fail", join(slow, ", "), "thresholds",
                "GEMM below threshold: " + join(slow, ", "),
                "check clocks, power limits and that the right GPU was used");
    }

    void nccl_checks() {
        const json& n = data("nccl");
        std::vector<std::string> wrong;
        double best = 0;
        bool any = false;
        for (const char* mode : {"single_process", "multi_process"}) {
            if (!n.contains(mode) || !n[mode].is_array()) continue;
            for (const auto& r : n[mode]) {
                any = true;
                if (!r.value("correct", false))
                    wrong.push_back(std::string(mode) + " " + str(r, "dtype") + " " +
                                    str(r, "bytes") + " B");
                best = std::max(best, r.value("busbw_gbps", 0.0));
            }
        }
        if (!any) {
            skip("TD145", why_missing("nccl"));
            skip("TD146", why_missing("nccl"));
            return;
        }
        if (wrong.empty())
            add("TD145", "pass", "exact", "exact", "NCCL all-reduce sums are exact");
        else
            add("TD145", "fail", join(wrong, "; "), "exact",
                "NCCL all-reduce gave wrong sums: " + wrong.front(),
                "check NCCL_* variables, the interconnect and /dev/shm (TD130)");
        std::string min = expected("validate.allreduce-busbw-min-gbps");
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f GB/s", best);
        if (min.empty())
            skip("TD146", std::string("no bus bandwidth threshold is labelled (best measured: ") +
                              buf + ")");
        else if (best >= std::atof(min.c_str()))
            add("TD146", "pass", buf, ">= " + min + " GB/s", "bus bandwidth meets the threshold");
        else
            add("TD146", "fail", buf, ">= " + min + " GB/s",
                std::string("best bus bandwidth ") + buf + " is below " + min + " GB/s",
                "check NVLink/PCIe topology (nvidia-smi topo -m) and NCCL_P2P/NCCL_IB settings");
    }
};

}  // namespace

const std::vector<CheckInfo>& check_catalog() { return k_catalog; }

std::vector<CheckResult> evaluate(const ValidationInput& input, const KnowledgeBase& kb) {
    return Judge(input, kb).run();
}

}  // namespace td
