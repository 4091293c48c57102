#include "core/kernels/kernel_judge.hpp"

namespace td::kernels {

namespace {

bool not_newer(int major, int minor, const ComputeCapability& cc) {
    return major < cc.major || (major == cc.major && minor <= cc.minor);
}

bool isa_ok(const PtxTarget& p, const GpuTarget& gpu) {
    return !gpu.max_ptx_isa || !(*gpu.max_ptx_isa < p.isa);
}

std::string ptx_name(const PtxTarget& p) {
    return p.arch.name("compute_") + " (PTX ISA " + p.isa.text() + ")";
}

// The image the driver would use, best first: the newest fitting SASS, else the newest
// PTX it can JIT. Empty when none fits.
std::string pick_image(const KernelImages& images, const GpuTarget& gpu, KernelRun& how) {
    for (auto it = images.sass.rbegin(); it != images.sass.rend(); ++it) {
        if (sass_runs_on(*it, gpu.cc)) {
            how = KernelRun::sass;
            return it->name("sm_");
        }
    }
    for (auto it = images.ptx.rbegin(); it != images.ptx.rend(); ++it) {
        if (ptx_jits_to(it->arch, gpu.cc) && isa_ok(*it, gpu)) {
            how = KernelRun::ptx_jit;
            return ptx_name(*it);
        }
    }
    how = images.empty() ? KernelRun::no_kernels : KernelRun::no_image;
    return {};
}

// Why images that look close do not fit: arch-specific and family-specific targets that
// do not carry over, PTX too new for the driver.
std::string near_misses(const KernelImages& images, const GpuTarget& gpu) {
    std::string out;
    auto note = [&](const std::string& s) { out += (out.empty() ? " (" : "; ") + s; };
    for (const auto& s : images.sass) {
        if (s.suffix == ArchSuffix::arch_specific && s.major() == gpu.cc.major &&
            s.minor() != gpu.cc.minor)
            note(s.name("sm_") + " runs only on " + std::to_string(s.major()) + "." +
                 std::to_string(s.minor()));
    }
    for (const auto& p : images.ptx) {
        if (ptx_jits_to(p.arch, gpu.cc) && !isa_ok(p, gpu)) {
            note(p.arch.name("compute_") + " is PTX ISA " + p.isa.text() +
                 ", newer than the driver's " + gpu.max_ptx_isa->text());
        } else if (!ptx_jits_to(p.arch, gpu.cc) &&
                   not_newer(p.arch.major(), p.arch.minor(), gpu.cc)) {
            if (p.arch.suffix == ArchSuffix::arch_specific)
                note(p.arch.name("compute_") + " JIT-compiles only for " +
                     std::to_string(p.arch.major()) + "." + std::to_string(p.arch.minor()));
            if (p.arch.suffix == ArchSuffix::family_specific)
                note(p.arch.name("compute_") + " JIT-compiles only for " +
                     std::to_string(p.arch.major()) + ".x");
        }
    }
    return out.empty() ? out : out + ")";
}

}  // namespace

bool sass_runs_on(const Arch& sass, const ComputeCapability& cc) {
    if (sass.major() != cc.major) return false;
    if (sass.suffix == ArchSuffix::arch_specific) return sass.minor() == cc.minor;
    return sass.minor() <= cc.minor;  // plain and family-specific alike
}

bool ptx_jits_to(const Arch& ptx, const ComputeCapability& cc) {
    switch (ptx.suffix) {
        case ArchSuffix::arch_specific:
            return ptx.number == cc.number();
        case ArchSuffix::family_specific:
            return ptx.major() == cc.major && ptx.minor() <= cc.minor;
        case ArchSuffix::none:
            break;
    }
    return not_newer(ptx.major(), ptx.minor(), cc);
}

std::string describe_images(const KernelImages& images) {
    std::string out;
    for (const auto& s : images.sass) out += (out.empty() ? "" : ", ") + s.name("sm_");
    for (const auto& p : images.ptx) out += (out.empty() ? "" : ", ") + ptx_name(p);
    return out.empty() ? "no GPU code" : out;
}

std::string describe_needs(const ComputeCapability& cc) {
    const std::string base = "sm_" + std::to_string(cc.major * 10);
    const std::string own = "sm_" + std::to_string(cc.number());
    std::string sass = cc.minor == 0   ? base
                       : cc.minor == 1 ? base + " or " + own
                                       : base + " to " + own;
    return sass + " or PTX <= compute_" + std::to_string(cc.number());
}

KernelVerdict judge_kernels(std::string_view object_name, const KernelImages& images,
                            const GpuTarget& gpu, const std::vector<ContainerProfile>& profiles,
                            bool profiles_complete) {
    KernelVerdict v;
    v.image = pick_image(images, gpu, v.how);
    const std::string object(object_name);
    const std::string who =
        gpu.name.empty() ? "a GPU of compute capability " + gpu.cc.text() : gpu.name;
    if (v.how == KernelRun::no_kernels) {
        v.message = object + " carries no GPU code";
        return v;
    }
    if (v.how == KernelRun::no_image) {
        v.message = object + " has " + describe_images(images) + "; " + who + " needs " +
                    describe_needs(gpu.cc) + near_misses(images, gpu);
        return v;
    }
    v.containers_complete = profiles_complete;
    for (const auto& p : profiles) {
        if (p.images.empty()) continue;
        v.containers_judged += p.containers;
        KernelRun how = KernelRun::no_kernels;
        if (pick_image(p.images, gpu, how).empty()) v.containers_without_image += p.containers;
    }
    v.message = object + " runs on " + who +
                (v.how == KernelRun::sass ? " with " : " by JIT-compiling ") + v.image;
    return v;
}

}  // namespace td::kernels
