// TD125 and TD126: the kernel audit (probe-kernels) judged for the target GPUs, and torch's
// reported arch list against what its binary really carries.
#include "core/validate/check_context.hpp"
#include "core/validate/kernel_coverage.hpp"
#include "util/strings.hpp"

namespace td::validate_detail {
namespace {

using json = nlohmann::json;

// The GPUs to judge: the labelled targets, and in the GPU tier the GPUs present.
std::vector<KernelTarget> kernel_targets(CheckContext& ctx, std::vector<std::string>& unknown) {
    std::vector<KernelTarget> out;
    for (const auto& name : split(ctx.expected("target-gpus"), ',')) {
        if (name.empty()) continue;
        if (const GpuModel* g = ctx.kb().gpu(name))
            out.push_back({name, g->cc});
        else
            unknown.push_back(name);
    }
    if (ctx.input().gpu_tier) {
        const json& c = ctx.data("cuda");
        for (const auto& d : c.value("devices", json::array()))
            if (d.is_object()) out.push_back({str(d, "name") + " (present)", str(d, "cc")});
    }
    return out;
}

void kernel_targets_check(CheckContext& ctx) {
    const json& audit = ctx.data("kernels");
    if (!audit.contains("objects")) return ctx.skip("TD125", ctx.why_missing("kernels"));
    std::size_t with_kernels = 0;
    for (const auto& o : audit.value("objects", json::array()))
        with_kernels += o.is_object() && o.value("has_fatbin", false);
    std::string observed = std::to_string(with_kernels) + " objects with GPU code";
    std::vector<std::string> unknown;
    auto targets = kernel_targets(ctx, unknown);
    if (targets.empty() && unknown.empty())
        return ctx.add("TD125", "skip", observed, "",
                       "no target GPUs are labelled (" + observed + " audited)");
    // A CUDA build of torch carries GPU code; an audit that found none did not see torch's
    // files (a symlinked directory, an unreadable one): no evidence, never a pass.
    if (with_kernels == 0 && !str(ctx.data("torch"), "cuda").empty())
        return ctx.add("TD125", "error", observed, "",
                       "cannot be judged: torch is a CUDA " + str(ctx.data("torch"), "cuda") +
                           " build but the kernel audit found no object with GPU code where it "
                           "looked (" +
                           join(
                               [&] {
                                   std::vector<std::string> dirs;
                                   for (const auto& r : audit.value("roots", json::array()))
                                       if (r.is_object() && r.value("exists", false))
                                           dirs.push_back(str(r, "path"));
                                   return dirs;
                               }(),
                               ", ") +
                           ")",
                       "make torch's directories plain directories readable by the image's USER");
    std::vector<std::string> problems, names;
    for (const auto& u : unknown)
        problems.push_back(u + ": not in data/gpus.json, so its compute capability is unknown");
    // Judged: torch, extensions, and the CUDA libraries torch really loads (when torch imports);
    // in the files-only tier, the ones probe-libs resolves for torch and the CUDA roots.
    std::vector<std::string> linked = libraries_resolved(ctx.data("libs"));
    const bool by_linking = !ctx.input().files_only_reason.empty() && !linked.empty();
    auto verdicts = by_linking ? judge_kernel_audit(audit, targets, &linked)
                               : judge_kernels_for_torch(audit, ctx.data("torch"), targets);
    if (by_linking)
        observed += " (CUDA libraries: the " + std::to_string(linked.size()) +
                    " that probe-libs resolves for torch)";
    for (const auto& v : verdicts) {
        names.push_back(v.gpu);
        if (!v.runs()) problems.push_back(kernel_verdict_summary(v));
    }
    if (problems.empty())
        return ctx.add("TD125", "pass", observed, join(names, ", "),
                       "every object with GPU code has an image these GPUs run");
    ctx.add("TD125", "fail", observed, join(names, ", "), join(problems, "; "),
            "rebuild or reinstall the named objects for these GPUs' architectures (an extension "
            "wheel built for them, or with PTX of an older architecture)");
}

void torch_arch_binaries(CheckContext& ctx) {
    const json& t = ctx.data("torch");
    std::vector<std::string> reported;
    for (const auto& a : t.value("arch_list", json::array()))
        if (a.is_string()) reported.push_back(a.get<std::string>());
    auto binary = torch_binary_archs(ctx.data("kernels"));
    if (reported.empty() || binary.empty())
        return ctx.skip("TD126", reported.empty() ? "torch reports no CUDA arch list (a CPU build, "
                                                    "or it does not import)"
                                                  : "the kernel audit found no libtorch_cuda.so");
    auto missing = torch_archs_missing_from_binary(ctx.data("kernels"), t);
    if (missing.empty())
        return ctx.add("TD126", "pass", join(binary, " "), join(reported, " "),
                       "every arch torch reports is compiled into libtorch_cuda.so");
    ctx.add("TD126", "fail", join(binary, " "), join(reported, " "),
            "torch reports " + join(missing, ", ") + " but libtorch_cuda.so has no such image",
            "reinstall torch: the library does not match the build it claims to be");
}

}  // namespace

void judge_kernels(CheckContext& ctx) {
    kernel_targets_check(ctx);
    torch_arch_binaries(ctx);
}

}  // namespace td::validate_detail
