// TD132 and TD133: the platform every installed distribution was built for (its wheel tags
// and the ELF machine of its files, probe-record), and torch's build as its own files say it
// (torch/version.py): against the labels where torch could not be run (the files-only tier, a
// torch that does not import), against what torch reports where it ran.
#include "core/pypi/wheel_name.hpp"
#include "core/validate/check_context.hpp"
#include "core/validate/kernel_coverage.hpp"
#include "core/validate/platform.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td::validate_detail {
namespace {

using json = nlohmann::json;

// "arm64" from "linux/arm64" or "linux/arm64/v8".
std::string platform_arch(const std::string& platform) {
    auto parts = split(platform, '/');
    return parts.size() >= 2 ? parts[1] : std::string();
}

void platform_objects(CheckContext& ctx) {
    const std::string& platform = ctx.input().platform;
    // The config's architecture is a claim; the files decided the platform (and the tier).
    if (const std::string& problem = ctx.input().platform_problem; !problem.empty())
        return ctx.add("TD132", "fail", platform, "the config's architecture", problem,
                       "build the image for the platform it claims (docker buildx --platform), "
                       "or correct its config; torchdock read it as " +
                           platform + ", the platform of its files");
    const std::string machine = elf_machine_of(platform_arch(platform));
    if (machine.empty())
        return ctx.skip("TD132", platform.empty()
                                     ? "the engine records no architecture for the image"
                                     : "torchdock knows no ELF machine for " + platform);
    const json& rec = ctx.data("record");
    if (!rec.contains("distributions") || !rec["distributions"].is_array())
        return ctx.skip("TD132", ctx.why_missing("record"));
    const std::string want = machine + "/64";
    std::vector<std::string> problems;
    long long objects = 0, tags = 0;
    std::size_t dists = 0;
    for (const auto& d : rec["distributions"]) {
        if (!d.is_object()) continue;
        ++dists;
        const std::string label = str(d, "name") + " " + str(d, "version");
        for (const auto& t : d.value("tags", json::array())) {
            auto m = t.is_string() ? wheel_tag_machine(t.get<std::string>()) : std::nullopt;
            tags += m.has_value();
            if (m && !m->empty() && *m != machine) {
                problems.push_back(label + ": its wheel tag " + t.get<std::string>() + " is for " +
                                   *m);
                break;
            }
        }
        json elf = d.value("elf", json::object());
        if (!elf.is_object()) elf = json::object();
        for (const auto& [identity, c] : elf.items()) {
            long long n = c.is_object() ? c.value("count", 0LL) : 0;
            objects += n;
            if (identity != want)
                problems.push_back(label + ": " + std::to_string(n) + " " + identity +
                                   " ELF object" + (n == 1 ? "" : "s") + " (first " +
                                   str(c, "first") + ")");
        }
    }
    std::string observed =
        std::to_string(dists) + " distributions, " + std::to_string(objects) + " ELF objects";
    // Nothing read that says a platform (no WHEEL tags, no ELF file): no evidence, no pass.
    if (problems.empty() && objects == 0 && tags == 0)
        return ctx.skip("TD132",
                        "probe-record found no wheel tag and no ELF object (" + observed + ")");
    if (problems.empty())
        return ctx.add("TD132", "pass", observed, platform,
                       "every wheel tag and ELF object is " + machine);
    ctx.add("TD132", "fail", observed, platform + " (" + want + ")",
            "built for another platform than the image's " + platform + ": " + join(problems, "; "),
            "install the " + machine +
                " wheels (pip install --platform, uv --python-platform, or "
                "a build on a " +
                platform + " builder) instead of copying another platform's");
}

// The --text files probe-record read for torch, with torch's dist-info.
const json* torch_distribution(const json& rec) {
    auto dists = rec.find("distributions");
    if (dists == rec.end() || !dists->is_array()) return nullptr;
    for (const auto& d : *dists)
        if (d.is_object() && pypi::normalize_project_name(str(d, "name")) == "torch") return &d;
    return nullptr;
}

// Where torch ran: its files must say what it reports, or the files probe-record and
// probe-kernels judged are not the torch that runs.
void torch_files_agree(CheckContext& ctx, const TorchVersionFile& v, const std::string& observed) {
    const json& t = ctx.data("torch");
    const std::string version = str(t, "torch"), cuda = str(t, "cuda");
    if (version.empty())
        return ctx.skip("TD133", "torch reports no version (" + observed + " on file)");
    if (version == v.version && cuda == v.cuda)
        return ctx.add("TD133", "pass", observed, "what torch reports",
                       "torch/version.py says what the running torch reports");
    ctx.add("TD133", "fail", observed,
            "torch " + version + ", " + (cuda.empty() ? "CPU-only" : "CUDA " + cuda),
            "torch/version.py (" + observed +
                ") is not what the running torch reports: the "
                "files checked are not the torch that runs",
            "reinstall torch, and remove the other copy from the import path");
}

// The fix for TD133: where a CPU build is what the index serves on the image's platform
// (torch.json "platforms"), the first release whose build there has the labelled CUDA major.
std::string cpu_build_fix(const CheckContext& ctx, const std::string& torch_version,
                          const std::string& want_cuda, bool cpu_build) {
    const std::string generic =
        "install the torch wheel the labels promise, built for CUDA on this platform (pip on "
        "the image's platform, not a copy of another's)";
    const std::string platform = ctx.input().platform;
    const std::string arch = platform_arch(platform);
    const std::string key = arch.empty() ? std::string() : "linux/" + oci_arch(arch);
    const TorchRelease* release = ctx.kb().torch(torch_version);
    const TorchPlatformBuild* here = release ? release->platform(key) : nullptr;
    if (!cpu_build || want_cuda.empty() || !here || here->variant != "cpu") return generic;
    const std::string major = split(want_cuda, '.')[0];
    const auto first = ctx.kb().first_torch_with_cuda_on(key, major);
    return "torch " + torch_version + " on " + key +
           " is a CPU-only build on PyPI (data/torch.json platforms); " +
           (first ? "the first release whose " + key + " wheel is built for CUDA " + major +
                        " is torch " + *first + ": install that or newer"
                  : "no release there is built for CUDA " + major + ": " + generic);
}

void torch_build_files(CheckContext& ctx) {
    const json& rec = ctx.data("record");
    if (!rec.contains("distributions")) return ctx.skip("TD133", ctx.why_missing("record"));
    const json* dist = torch_distribution(rec);
    if (!dist)
        return ctx.skip("TD133", "probe-record found no torch distribution (dist-info) to read");
    const json texts = dist->value("texts", json::object());
    const json text = texts.is_object() ? texts.value("torch/version.py", json()) : json();
    if (!text.is_string())
        return ctx.add("TD133", "error", "", "",
                       "cannot be judged: torch/version.py of " + str(*dist, "dist_info") +
                           " could not be read",
                       "reinstall torch");
    TorchVersionFile v = parse_torch_version_py(text.get<std::string>());
    if (!v.read)
        return ctx.add("TD133", "error", "", "",
                       "cannot be judged: torch/version.py has no __version__", "reinstall torch");
    const std::string build = !v.cuda.empty()  ? "CUDA " + v.cuda
                              : !v.hip.empty() ? "ROCm " + v.hip
                                               : "CPU-only";
    const std::string observed = "torch " + v.version + ", " + build;
    if (const ProbeRun* t = ctx.probe("torch"); t && t->usable() && !ctx.torch_import_failed())
        return torch_files_agree(ctx, v, observed);
    std::string want_torch = ctx.expected("torch-reports").empty() ? ctx.expected("torch")
                                                                   : ctx.expected("torch-reports");
    const std::string want_cuda = ctx.expected("cuda");
    const std::string expect =
        (want_torch.empty() ? "" : "torch " + want_torch) +
        (want_cuda.empty() ? ""
                           : (want_torch.empty() ? "" : ", ") + std::string("CUDA ") + want_cuda);
    std::vector<std::string> problems;
    const std::string plain = v.version.substr(0, v.version.find('+'));
    if (!want_torch.empty() && plain != want_torch && v.version != want_torch)
        problems.push_back("torch/version.py says " + v.version + ", " + want_torch +
                           " is labelled");
    if (!want_cuda.empty() && v.cuda.empty())
        problems.push_back("torch " + v.version + " is a " + build +
                           " build (torch/version.py cuda = None) in an image labelled CUDA " +
                           want_cuda);
    else if (!want_cuda.empty() && split(v.cuda, '.')[0] != split(want_cuda, '.')[0])
        problems.push_back("torch " + v.version + " was built for CUDA " + v.cuda +
                           " but the image is labelled CUDA " + want_cuda);
    // A CUDA build carries libtorch_cuda.so with GPU code; the audit says whether it does.
    const json& audit = ctx.data("kernels");
    if (!v.cuda.empty() && audited_torch_binary(audit) && torch_binary_archs(audit).empty())
        problems.push_back("torch/version.py says CUDA " + v.cuda +
                           " but the kernel audit found no GPU code in torch/lib/libtorch_cuda.so");
    if (problems.empty())
        return ctx.add("TD133", "pass", observed, expect.empty() ? "-" : expect,
                       observed + " (read from torch/version.py; torch was not run)");
    ctx.add("TD133", "fail", observed, expect, join(problems, "; "),
            cpu_build_fix(ctx, plain, want_cuda, v.cuda.empty()));
}

}  // namespace

void judge_platform(CheckContext& ctx) {
    ctx.guarded(platform_objects);
    ctx.guarded(torch_build_files);
}

}  // namespace td::validate_detail
