#include "core/render/platforms.hpp"

#include <algorithm>
#include <tuple>

#include "core/grammar/grammar.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

std::string cuda_major(const std::string& cuda) { return split(cuda, '.')[0]; }

// "; the first release whose linux/arm64 wheel is built for CUDA 12 is torch 2.x" or, when
// none is, the first release there built for any CUDA; "" when none is.
std::string first_cuda_release_text(const std::string& platform, const std::string& cuda,
                                    const KnowledgeBase& kb) {
    if (auto first = kb.first_torch_with_cuda_on(platform, cuda_major(cuda)))
        return "; the first release whose " + platform + " wheel on PyPI is built for CUDA " +
               cuda_major(cuda) + " is torch " + *first;
    for (const auto& r : kb.torch_releases()) {
        const TorchPlatformBuild* b = r.platform(platform);
        const TorchVariant* build = b ? b->default_build() : nullptr;
        if (build && !build->cuda.empty())
            return "; no release's " + platform + " wheel on PyPI is built for CUDA " +
                   cuda_major(cuda) + ", the first built for CUDA at all is torch " + r.version +
                   " (" + b->variant + ")";
    }
    return "; no release's " + platform + " wheel on PyPI is built for CUDA";
}

std::string pypi_refusal(const Variant& v, const std::string& platform, const KnowledgeBase& kb) {
    const TorchRelease* tr = kb.torch(v.torch);
    const TorchPlatformBuild* b = tr ? tr->platform(platform) : nullptr;
    const std::string facts = " (data/torch.json \"platforms\", read from PyPI by `kb refresh`)";
    const std::string gpu =
        v.cuda.empty() ? std::string() : first_cuda_release_text(platform, v.cuda, kb);
    if (!b || b->variant.empty())
        return "PyPI has no " + platform + " wheel of torch " + v.torch + facts + gpu;
    if (b->variant != v.wheel_variant) {
        if (b->variant == "cpu")
            return "torch " + v.torch + "'s " + platform +
                   " wheel on PyPI is a CPU-only build, not " + v.wheel_variant + " like its " +
                   k_default_platform + " one" + facts + gpu;
        return "torch " + v.torch + "'s " + platform + " wheel on PyPI is " + b->variant +
               ", not " + v.wheel_variant + "; one image's labels cannot promise both" + facts;
    }
    const OsInfo* os = kb.os(v.os_id);
    auto need = Version::parse(b->glibc);
    auto have = os ? Version::parse(os->glibc) : std::nullopt;
    if (need && have && *have < *need)
        return "torch " + v.torch + "'s " + platform + " wheels need glibc " + b->glibc +
               " or newer (their manylinux tag); " + v.os_id + " has glibc " + os->glibc;
    if (const TorchVariant* build = b->default_build()) {
        for (const auto& [what, here, there] :
             {std::tuple<const char*, std::string, std::string>{"CUDA", v.cuda, build->cuda},
              {"cuDNN", v.cudnn, build->cudnn},
              {"NCCL", v.nccl, build->nccl}})
            if (!here.empty() && !there.empty() && here != there)
                return "torch " + v.torch + " pins " + what + " " + there + " on " + platform +
                       " and " + here + " on " + k_default_platform +
                       "; one image's labels cannot promise both" + facts;
    }
    return {};
}

}  // namespace

bool default_platform_only(const Manifest& m) {
    return m.platforms == std::vector<std::string>{k_default_platform};
}

const std::vector<std::string>& build_platforms() {
    static const std::vector<std::string> names = {"linux/amd64", "linux/arm64"};
    return names;
}

std::string check_build_platform(std::string_view s) {
    const auto& all = build_platforms();
    if (std::find(all.begin(), all.end(), s) != all.end()) return {};
    return "platform " + quote_value(s) +
           " is not one torchdock builds for; accepted: " + join(all, ", ");
}

std::string target_arch(const std::string& platform) {
    return platform.starts_with("linux/") ? platform.substr(6) : platform;
}

std::string wheel_machine(const std::string& platform) {
    return platform == "linux/arm64" ? "aarch64" : "x86_64";
}

std::string python_lock_key(const std::string& variant, const std::string& platform) {
    return platform == k_default_platform ? variant : variant + "@" + platform;
}

std::string check_python_lock_key(std::string_view key) {
    auto at = key.find('@');
    if (auto e = grammar::check_variant_name(key.substr(0, at)); !e.empty()) return e;
    if (at == std::string_view::npos) return {};
    std::string_view platform = key.substr(at + 1);
    if (platform == k_default_platform)
        return "key " + quote_value(key) + " names " + k_default_platform +
               ", whose Python set is keyed by the variant's name alone";
    return check_build_platform(platform);
}

std::string python_lock_key_platform(std::string_view key) {
    auto at = key.find('@');
    return at == std::string_view::npos ? k_default_platform : std::string(key.substr(at + 1));
}

std::string platform_refusal(const Variant& v, const std::string& platform,
                             const KnowledgeBase& kb) {
    if (platform == k_default_platform) return {};
    if (v.source_build)
        return "extensions built from source are built for " + std::string(k_default_platform) +
               " only (the build stage's toolkit and requirements are resolved for it); "
               "install the extension as a wheel, or build this variant for " +
               k_default_platform;
    switch (v.torch_source) {
        case Variant::TorchSource::Base:
            return {};  // Debian builds python3-torch for arm64; an image base's index says
        case Variant::TorchSource::PytorchIndex:
            return "the knowledge base knows torch's " + platform +
                   " builds on PyPI only (`kb refresh` reads PyPI's wheels), not on the PyTorch "
                   "wheel index; set \"wheel_index\": \"pypi\"" +
                   (v.cuda.empty() ? std::string() : first_cuda_release_text(platform, v.cuda, kb));
        case Variant::TorchSource::Pypi:
            return pypi_refusal(v, platform, kb);
    }
    return {};
}

std::string base_platforms_problem(const std::set<std::string>& wanted, bool index,
                                   const std::map<std::string, std::string>& listed) {
    const std::string builds = "the manifest builds " + join({wanted.begin(), wanted.end()}, ", ");
    if (!index)
        return "is a single-platform manifest, not an index; " + builds +
               ", which needs an index listing each (pick a multi-platform tag)";
    std::vector<std::string> missing, has;
    for (const auto& p : wanted)
        if (!listed.count(p)) missing.push_back(p);
    if (missing.empty()) return {};
    for (const auto& [p, d] : listed) has.push_back(p);
    return "its index has no " + join(missing, ", ") + " manifest (it lists " +
           (has.empty() ? std::string("no platform") : join(has, ", ")) + "); " + builds;
}

BuildPlatformVerdict judge_build_platform(const std::string& platform,
                                          const std::string& engine_machine, bool emulated) {
    const std::string machine = wheel_machine(platform);
    if (engine_machine == machine) return {};
    const std::string here = "this " + engine_machine + " engine";
    const std::string qemu = "qemu-" + machine;
    if (!emulated)
        return {"building " + platform + " on " + here + " needs emulation, and this host has no " +
                    qemu +
                    " handler in binfmt_misc: install Debian's qemu-user-static (binfmt-support "
                    "registers its handlers), or build on a native " +
                    target_arch(platform) +
                    " builder (docs/commands.md, \"Building for another "
                    "platform\")",
                {}};
    return {{},
            platform + " is emulated on " + here + " (" + qemu +
                " in binfmt_misc): its RUN steps run under qemu, several times slower than on "
                "a native " +
                target_arch(platform) + " builder"};
}

}  // namespace td
