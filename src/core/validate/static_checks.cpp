// The static tier: what can be judged without a GPU (library versions, the loader's view,
// torch's build, a CPU all-reduce, /dev/shm).
#include <algorithm>
#include <cstdlib>

#include "core/validate/check_context.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td::validate_detail {
namespace {

using nlohmann::json;

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

// CUDA runtime as the image shows it: the loader's libcudart, else the one torch carries.
std::string observed_cuda(const CheckContext& ctx) {
    const json& c = ctx.data("cuda");
    if (c.contains("runtime_version") && c["runtime_version"].is_number_integer())
        return cuda_version_from_int(c["runtime_version"].get<long long>());
    return str(ctx.data("torch"), "cuda");
}

void cuda_runtime(CheckContext& ctx) {
    std::string want = ctx.expected("cuda"), have = observed_cuda(ctx);
    if (have.empty() && ctx.torch_import_failed())
        return ctx.skip("TD101", "no CUDA runtime on the loader's path, and " +
                                     ctx.torch_import_failure() +
                                     ", so the runtime torch would load is unknown");
    if (want.empty()) {
        if (have.empty())
            ctx.add("TD101", "pass", "none", "none", "no CUDA expected and none found (CPU image)");
        else
            ctx.add("TD101", "pass", have, "none",
                    "CUDA " + have + " present although none is labelled");
        return;
    }
    if (have.empty())
        return ctx.add("TD101", "fail", "none", want,
                       "the image promises CUDA " + want + " but no CUDA runtime loads (" +
                           ctx.why_missing("cuda") + ")",
                       "install the CUDA " + want + " runtime (libcudart.so." +
                           split(want, '.')[0] + ") or fix the io.torchdock.cuda label");
    if (same_prefix(have, want, 2))
        ctx.add("TD101", "pass", have, want, "CUDA runtime " + have);
    else
        ctx.add("TD101", "fail", have, want,
                "the image runs CUDA " + have + " but is labelled " + want,
                "rebuild from a base with CUDA " + want + ", or correct the label");
}

// A library version promised by a label against the one found (TD102 cuDNN, TD104 NCCL).
void library_version(CheckContext& ctx, const char* id, const std::string& library,
                     const std::string& want, const std::string& have, const std::string& probe,
                     const std::string& mismatch_fix) {
    if (want.empty()) return ctx.skip(id, "no " + library + " version is labelled or expected");
    if (have.empty() && ctx.torch_import_failed())
        return ctx.skip(id,
                        "the loader finds no " + library + ", and " + ctx.torch_import_failure());
    if (have.empty())
        return ctx.add(id, "fail", "none", want,
                       library + " " + want + " is promised but none is found (" +
                           ctx.why_missing(probe) + ")",
                       "install " + library + " " + want);
    if (same_prefix(have, want, 3))
        ctx.add(id, "pass", have, want, library + " " + have);
    else
        ctx.add(id, "fail", have, want,
                library + " " + have + " is found, " + want + " is labelled", mismatch_fix);
}

void cudnn_version(CheckContext& ctx) {
    const json& t = ctx.data("torch");
    std::string have = t.contains("cudnn") && t["cudnn"].is_number_integer()
                           ? cudnn_version_from_int(t["cudnn"].get<long long>())
                           : str(ctx.data("cudnn"), "version_string");
    library_version(ctx, "TD102", "cuDNN", ctx.expected("cudnn"), have, "cudnn",
                    "a different cuDNN shadows the intended one: check LD_LIBRARY_PATH and TD111");
}

void cudnn_cuda_major(CheckContext& ctx) {
    const json& d = ctx.data("cudnn");
    if (!d.contains("cudart_version") || !d["cudart_version"].is_number_integer())
        return ctx.skip("TD103",
                        "the cudnn probe found no cuDNN to ask (" + ctx.why_missing("cudnn") + ")");
    std::string built_for = cuda_version_from_int(d["cudart_version"].get<long long>());
    std::string runtime = observed_cuda(ctx);
    std::string major = split(built_for, '.')[0];
    // cuDNN loads libcudart of its own CUDA major at run time (dlopen, not DT_NEEDED).
    std::string soname = ctx.kb().cudart_soname(major);
    if (soname.empty()) soname = "libcudart for CUDA " + major;
    if (runtime.empty() && ctx.torch_import_failed())
        return ctx.skip("TD103", "cuDNN was built for CUDA " + built_for +
                                     "; the runtime is unknown: " + ctx.torch_import_failure());
    if (runtime.empty())
        return ctx.add(
            "TD103", "fail", built_for, "a CUDA " + major + " runtime",
            "cuDNN was built for CUDA " + built_for + " and needs " + soname +
                ", which the image does not have",
            "install the CUDA " + major + " runtime, or the cuDNN build for the CUDA in the image");
    std::string runtime_major = split(runtime, '.')[0];
    if (major == runtime_major)
        ctx.add("TD103", "pass", built_for, "CUDA " + runtime_major + ".x",
                "cuDNN was built for CUDA " + built_for);
    else
        ctx.add("TD103", "fail", built_for, "CUDA " + runtime_major + ".x",
                "cuDNN was built for CUDA " + built_for + " and needs " + soname +
                    ", but the image runs CUDA " + runtime,
                "install the cuDNN build for CUDA " + runtime_major + " (e.g. nvidia-cudnn-cu" +
                    runtime_major + ")");
}

void nccl_version(CheckContext& ctx) {
    std::string have = str(ctx.data("torch"), "nccl");
    if (have.empty()) have = str(ctx.data("nccl"), "version");
    library_version(ctx, "TD104", "NCCL", ctx.expected("nccl"), have, "nccl",
                    "check which libnccl.so.2 wins (TD111) or correct the label");
}

std::string fix_for_missing(const std::string& soname) {
    if (starts_with(soname, "libcudart.so.")) {
        std::string major = soname.substr(13, soname.find('.', 13) - 13);
        return "install the CUDA " + major + " runtime (apt cuda-cudart-" + major +
               "-x, or the nvidia-cuda-runtime-cu" + major +
               " wheel) or use libraries built for the CUDA in the image";
    }
    return "install the package that provides " + soname + ", or remove what needs it";
}

// probe-libs waived: it found no CUDA library and no torch to resolve.
bool libs_found_nothing(const CheckContext& ctx) {
    const ProbeRun* p = ctx.probe("libs");
    return p && p->usable() && p->status == "waived";
}

void libs_resolved(CheckContext& ctx) {
    const json& d = ctx.data("libs");
    if (libs_found_nothing(ctx))
        return ctx.skip("TD110", "nothing to resolve: " + ctx.why_missing("libs"));
    if (!d.contains("unresolved")) return ctx.skip("TD110", ctx.why_missing("libs"));
    const json& u = d["unresolved"];
    if (!u.is_array() || u.empty()) {
        std::size_t n =
            d.contains("libraries") && d["libraries"].is_array() ? d["libraries"].size() : 0;
        return ctx.add("TD110", "pass", std::to_string(n) + " libraries resolved", "all resolve",
                       "every needed soname resolves");
    }
    std::vector<std::string> missing;
    for (const auto& e : u)
        missing.push_back(str(e, "soname") + " (needed by " + str(e, "needed_by") + ")");
    ctx.add("TD110", "fail", join(missing, "; "), "all resolve",
            "unresolved: " + missing.front() +
                (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more" : ""),
            fix_for_missing(str(u[0], "soname")));
}

void libs_duplicates(CheckContext& ctx) {
    const json& d = ctx.data("libs");
    if (libs_found_nothing(ctx))
        return ctx.skip("TD111", "nothing to compare: " + ctx.why_missing("libs"));
    if (!d.contains("duplicates")) return ctx.skip("TD111", ctx.why_missing("libs"));
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
        ctx.add("TD111", "fail", join(conflicts, "; "), "one version per library",
                "conflicting copies that can shadow each other: " + conflicts.front(),
                "remove one copy, or make LD_LIBRARY_PATH/RUNPATH pick the intended one");
    else if (!same.empty())
        ctx.add("TD111", "warn", join(same, "; "), "one copy per library",
                "several copies of the same version: " + same.front(),
                "harmless today; remove the extra copy to keep upgrades predictable", "warning");
    else
        ctx.add("TD111", "pass", "no duplicates", "one copy per library",
                "no duplicate CUDA libraries");
}

void shm_size(CheckContext& ctx) {
    const ValidationInput& in = ctx.input();
    if (!in.shm_bytes)
        return ctx.add("TD130", "error", "", "",
                       "cannot be judged: the size of /dev/shm could not be read" +
                           (in.shm_error.empty() ? "" : " (" + in.shm_error + ")"));
    long long mb = *in.shm_bytes / (1024 * 1024);
    std::string want_text = ctx.expected("validate.shm-min-mb");
    long long want = want_text.empty() ? 1024 : std::atoll(want_text.c_str());
    std::string expect = ">= " + std::to_string(want) + " MiB";
    if (mb >= want)
        return ctx.add("TD130", "pass", std::to_string(mb) + " MiB", expect,
                       "/dev/shm is large enough");
    ctx.add(
        "TD130", want_text.empty() ? "warn" : "fail", std::to_string(mb) + " MiB", expect,
        "/dev/shm is " + std::to_string(mb) +
            " MiB under a default `docker run`; NCCL and DataLoader workers need more",
        "run with --ipc=host, or --shm-size=" + std::to_string(std::max(want / 1024, 1LL)) + "g",
        want_text.empty() ? "warning" : "error");
}

}  // namespace

void judge_static_tier(CheckContext& ctx) {
    cuda_runtime(ctx);
    cudnn_version(ctx);
    cudnn_cuda_major(ctx);
    nccl_version(ctx);
    libs_resolved(ctx);
    libs_duplicates(ctx);
    judge_torch(ctx);
    shm_size(ctx);
}

}  // namespace td::validate_detail
