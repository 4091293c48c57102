#include "core/diagnose/fingerprint_diff.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/diagnose/fingerprint_flatten.hpp"
#include "core/json/json_text.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "core/validate/probe_plan.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

using json = nlohmann::json;

std::vector<std::string> arch_list_of(const json& fp) {
    std::vector<std::string> out;
    if (!fp.is_object() || !fp.contains("torch") || !fp["torch"].is_object()) return out;
    const json& t = fp["torch"];
    if (t.contains("arch_list") && t["arch_list"].is_array())
        for (const auto& a : t["arch_list"])
            if (a.is_string()) out.push_back(a.get<std::string>());
    return out;
}

// How two versions differ. Local parts ("+cu121") count as a patch-level change.
enum class Level { Same, Major, Minor, Patch, Other };

Level version_level(const std::string& a, const std::string& b) {
    if (a == b) return Level::Same;
    auto base = [](const std::string& s) { return s.substr(0, s.find_first_of("+-")); };
    auto va = Version::parse(base(a)), vb = Version::parse(base(b));
    if (!va || !vb) return Level::Other;
    if (va->major() != vb->major()) return Level::Major;
    if (va->minor() != vb->minor()) return Level::Minor;
    return Level::Patch;
}

// cuDNN's integer version as a dotted one; anything else is kept as it is.
std::string cudnn_version(const std::string& number) {
    if (number.empty() || number.size() > 9 ||
        !std::all_of(number.begin(), number.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return number;
    std::string dotted = cudnn_version_from_int(std::stoll(number));
    return dotted.empty() ? number : dotted;
}

struct Rank {
    std::string category;
    int weight;
    std::string why;
};

// Weight of a version change: a missing side or a major change weighs `major`, a minor one
// `minor`, anything smaller `patch`.
int by_level(const std::string& a, const std::string& b, int major, int minor, int patch) {
    if (a == k_absent || b == k_absent) return major;
    switch (version_level(a, b)) {
        case Level::Major:
            return major;
        case Level::Minor:
            return minor;
        case Level::Other:
            return minor;
        default:
            return patch;
    }
}

// A library of the CUDA or torch stack, by its name in the fingerprint ("cudnn_ops",
// "torch_cuda", "c10", "nvidia-ml").
bool gpu_stack_library(const std::string& name) {
    if (!cuda_library_family("lib" + name + ".so").empty()) return true;
    for (const char* torch : {"torch", "c10", "caffe2", "shm", "gomp"})
        if (name == torch || starts_with(name, std::string(torch) + "_") ||
            starts_with(name, std::string(torch) + "-"))
            return true;
    return false;
}

// "severity: error; title: ..." (an element's summary) or a bare severity -> its weight.
int severity_weight(const std::string& v) {
    std::string s = starts_with(v, "severity: ") ? v.substr(10) : v;
    if (starts_with(s, "error")) return 65;
    if (starts_with(s, "warning")) return 45;
    return 12;
}

// A doctor finding, matched by its ID: on one side only, or with another severity, or only
// worded differently (its cause is among the other differences).
Rank rank_finding(const std::string& path, const std::string& a, const std::string& b) {
    if (path.back() == ']') {
        const std::string& present = a == k_absent ? b : a;
        return {"findings", severity_weight(present),
                "doctor reports this finding on one side only"};
    }
    if (ends_with(path, ".severity"))
        return {"findings", std::max(severity_weight(a), severity_weight(b)) - 5,
                "doctor rates this finding differently on the two sides"};
    return {"cosmetic", 8, "a finding is worded differently (what it rests on differs)"};
}

Rank rank(const std::string& path, const std::string& a, const std::string& b,
          const std::string& va, const std::string& vb) {
    bool one_side = a == k_absent || b == k_absent;
    if (path == "driver.version")
        return {"driver", by_level(va, vb, 100, 90, 90),
                version_level(va, vb) == Level::Major || one_side
                    ? "a different driver branch: it decides the newest CUDA the host runs and "
                      "which GPUs it knows"
                    : "a driver update within one branch: same CUDA support, different fixes"};
    if (path == "cuda_runtime.version")
        return {"cuda", by_level(va, vb, 99, 80, 70),
                "the CUDA runtime differs: a newer one needs a newer driver (or compatibility "
                "packages)"};
    if (path == "driver.cuda")
        return {"driver", by_level(va, vb, 98, 88, 88),
                "the newest CUDA the driver supports differs: runtimes above it need minor-version "
                "compatibility or cuda-compat"};
    if (path == "cuda_error") return {"cuda", 96, "CUDA failed to initialise on one side"};
    if (path == "torch.cuda_available")
        return {"torch", 94, "torch sees a usable GPU on one side only"};
    if (path == "torch.cudnn" || path == "cudnn_loader.version") {
        std::string ca = path == "torch.cudnn" ? cudnn_version(va) : va,
                    cb = path == "torch.cudnn" ? cudnn_version(vb) : vb;
        return {
            "cudnn", by_level(ca, cb, 87, 75, 57),
            "a different cuDNN: kernel selection, numerics and which CUDA runtime it needs change"};
    }
    if (path == "torch.nccl" || path == "nccl_loader.version")
        return {"nccl", by_level(va, vb, 86, 76, 58),
                "a different NCCL: ranks with different NCCL versions may hang or fail to connect, "
                "and transports differ"};
    if (path == "torch.cuda")
        return {"cuda", by_level(va, vb, 84, 68, 60),
                "torch was built for a different CUDA: it bundles that runtime and needs a driver "
                "for it"};
    if (path == "torch.arch_list")
        return {"arch", 66, "torch has kernels for different GPU architectures"};
    if (path == "cudnn_loader.cuda")
        return {"cudnn", 60, "cuDNN was built for a different CUDA runtime"};
    if (starts_with(path, "unresolved["))
        return {"libraries", 63,
                "a library cannot be found on one side: whatever needs it fails to load there"};
    if (starts_with(path, "duplicates["))
        return {"libraries", 62,
                "the copies of a library on the search path differ: which one loads depends on "
                "search order"};
    if (starts_with(path, "libraries[")) {
        // The CUDA and torch libraries decide GPU jobs; the rest (X11, Qt, codecs) rarely do.
        std::string name = path.substr(10, path.find_first_of("#]", 10) - 10);
        if (!gpu_stack_library(name))
            return {"libraries", one_side ? 20 : 18,
                    one_side ? "a library outside the CUDA and torch stack is on one side only"
                             : "a library outside the CUDA and torch stack differs"};
        // Below torch's own version: the runtime, cuDNN and NCCL rows already say which stack
        // each side has; these name the files.
        if (one_side)
            return {"libraries", 47, "a CUDA or torch library is present on one side only"};
        if (va == vb) return {"libraries", 40, "the same library is loaded from a different place"};
        if (cuda_library_family("lib" + name + ".so").empty())  // torch's own: torch.version
            return {"libraries", 44, "torch's own library differs (see torch.version)"};
        return {"libraries", by_level(va, vb, 64, 54, 46),
                "a different version of a library is loaded"};
    }
    if (starts_with(path, "findings[")) return rank_finding(path, a, b);
    if (starts_with(path, "kernels[")) {
        if (path.back() == ']' && path.find("].") == std::string::npos)  // the whole object
            return {"kernels", 35, "an object with GPU code is on one side only"};
        return {"arch", 64, "an object carries code for different GPU architectures"};
    }
    if (starts_with(path, "damaged_files["))
        return {"libraries", 45,
                "an installed file is missing or altered on one side: whatever loads it may fail"};
    if (starts_with(path, "wheels.")) {
        std::string name = path.substr(7);
        if (starts_with(name, "nvidia-"))
            return {"libraries", by_level(va, vb, 48, 44, 40),
                    "a different NVIDIA wheel: it ships the CUDA library torch loads"};
        if (starts_with(name, "torch"))
            return {"torch", by_level(va, vb, 46, 42, 38), "a different torch package"};
        return {"python", 20, "a different Python package"};
    }
    if (path == "torch_import_error" || path == "torch_crash" || starts_with(path, "torch_crash."))
        // Above the driver: every torch job there fails, and the versions torch would report
        // are missing because of it.
        return {"torch", 101,
                "torch does not import (or crashes) on one side: every torch job fails there"};
    if (path == "torch_installed" || path == "torch_probed")
        return {"torch", 42, "torch is installed on one side only"};
    if (path == "torch_requires") return {"torch", 30, "torch pins different companion wheels"};
    if (path == "env.LD_LIBRARY_PATH")
        return {
            "search_path", 60,
            "the loader searches different directories: other copies of CUDA libraries may win"};
    if (path == "cuda_runtime.library" || path == "cudnn_loader.library" ||
        path == "nccl_loader.library") {
        if (one_side)  // the version row above already says one side has none
            return {"search_path", 30, "the library is found on one side only"};
        return {"search_path", 50, "the library is loaded from a different place"};
    }
    if (starts_with(path, "gpus[")) {
        if (ends_with(path, ".cc"))
            return {"gpu", 58, "a different GPU architecture: kernels and features differ"};
        if (ends_with(path, ".name")) return {"gpu", 56, "a different GPU model"};
        if (ends_with(path, ".memory_bytes")) return {"cosmetic", 5, "GPU memory size differs"};
        return {"gpu", 30, "a GPU property differs"};
    }
    if (path == "gpus.count")
        return {"gpu", 54, "a different number of GPUs: parallel jobs see another world size"};
    if (path == "torch.version")
        return {"torch", by_level(va, vb, 50, 48, 44),
                "a different torch release: behaviour and defaults change"};
    if (path == "torch_error") return {"torch", 42, "torch could not be probed on one side"};
    if (starts_with(path, "torch.")) return {"torch", 40, "a torch property differs"};
    if (path == "shm_bytes")
        return {"env", 40, "/dev/shm differs: NCCL and DataLoader workers need shared memory"};
    if (path == "image.id")
        return {"image", 97,
                "the same reference names other bytes on this node: the nodes run different "
                "images"};
    if (path == "image.shm_bytes")
        return {"image", 41,
                "containers get another /dev/shm from this node's engine: NCCL and DataLoader "
                "workers need shared memory"};
    if (path == "image.engine")
        return {"image", 34, "a different container engine or engine version runs the image"};
    if (starts_with(path, "checks[")) {
        if (path.back() == ']') return {"cosmetic", 8, "a check ran on one side only"};
        if (ends_with(path, ".status")) {
            auto failed = [](const std::string& v) { return v == "fail" || v == "error"; };
            return {"findings",
                    failed(a) || failed(b) ? 70 : (a == "warn" || b == "warn" ? 45 : 12),
                    "validate judges the image differently here"};
        }
        return {"cosmetic", 6, "a check observed something else (see its status)"};
    }
    if (path == "memlock_bytes")
        return {"env", 52,
                "the locked-memory limit differs: InfiniBand verbs (NCCL's IB transport) pin "
                "their buffers"};
    if (path == "infiniband")
        return {"env", 53,
                "the InfiniBand devices differ: NCCL uses IB where it finds it, sockets "
                "elsewhere"};
    if (path == "env.CUDA_VISIBLE_DEVICES" || path == "env.NVIDIA_VISIBLE_DEVICES")
        return {"env", 38, "a different set of GPUs is visible"};
    if (path == "env.NVIDIA_DRIVER_CAPABILITIES")
        return {"env", 37, "the container gets different driver capabilities"};
    if (starts_with(path, "env.NCCL_"))
        return {"env", 36, "NCCL is tuned differently (transports, topology, timeouts)"};
    if (path == "container_runtime")
        return {"env", 34, "a different container runtime passes GPUs in differently"};
    if (path == "env.TORCH_CUDA_ARCH_LIST")
        return {"env", 30, "extensions built here target different GPU architectures"};
    if (starts_with(path, "env."))
        return {"env", 24, "an environment variable that affects CUDA or torch differs"};
    if (path == "os.glibc")
        return {"os", 33, "a different glibc: prebuilt binaries may need a newer one"};
    if (path == "os.id" || path == "os.version")
        return {"os", 32, "a different operating system release"};
    if (path == "python.version")
        return {"python", by_level(va, vb, 26, 26, 22),
                "a different Python: wheels are built per Python version"};
    if (path == "subject" || path == "kind" || path == "schema" || path == "os.pretty" ||
        ends_with(path, "hostname") || starts_with(path, "labels."))
        return {"cosmetic", 5, "descriptive only"};
    if (starts_with(path, "probes."))
        return {"cosmetic", 8, "a probe's outcome differs (see the detailed differences)"};
    return {"cosmetic", 10, "a field torchdock does not rank"};
}

struct Gpu {
    std::string name, cc;
};

std::vector<Gpu> gpus_of(const json& fp) {
    std::vector<Gpu> out;
    if (fp.is_object() && fp.contains("gpus") && fp["gpus"].is_array())
        for (const auto& g : fp["gpus"])
            if (!string_at(g, "cc").empty())
                out.push_back({string_at(g, "name"), string_at(g, "cc")});
    return out;
}

// GPUs of `other` whose compute capability `self`'s torch arch list lacks (and that `self`
// does not have itself: then it would not be a difference).
void arch_gaps(const json& self, const json& other, bool self_is_a,
               std::vector<FingerprintDifference>& out, std::set<std::string>& seen) {
    std::vector<std::string> raw = arch_list_of(self);
    if (raw.empty()) return;
    std::vector<std::string> arch;
    for (const auto& r : raw) arch.push_back(normalize_arch(r));
    std::vector<Gpu> own = gpus_of(self);
    for (const auto& g : gpus_of(other)) {
        if (arch_list_covers(arch, g.cc)) continue;
        if (std::any_of(own.begin(), own.end(), [&](const Gpu& o) { return o.cc == g.cc; }))
            continue;
        std::string path = "torch.arch_list[" + sm_name(g.cc) + "]";
        if (!seen.insert(path).second) continue;
        std::string lacks = "no " + sm_name(g.cc) + " in " + join(raw, " ");
        std::string gpu = (g.name.empty() ? std::string("a GPU") : g.name) + " (cc " + g.cc + ")";
        FingerprintDifference d;
        d.path = path;
        d.a = self_is_a ? lacks : gpu;
        d.b = self_is_a ? gpu : lacks;
        d.category = "arch";
        d.weight = 82;
        d.why = std::string(self_is_a ? "A" : "B") + "'s torch has no kernels for " +
                (self_is_a ? "B" : "A") + "'s " + (g.name.empty() ? "GPU" : g.name) + " (" +
                sm_name(g.cc) +
                "): CUDA ops fail there with 'no kernel image is available for execution on the "
                "device'";
        out.push_back(std::move(d));
    }
}

}  // namespace

const std::vector<std::string>& diff_categories() {
    static const std::vector<std::string> all = {
        "driver",      "cuda",     "cudnn",   "nccl",  "arch", "torch", "gpu",    "libraries",
        "search_path", "findings", "kernels", "image", "env",  "os",    "python", "cosmetic"};
    return all;
}

FingerprintDifference rank_difference(const std::string& path, const std::string& a,
                                      const std::string& b, const std::string& version_a,
                                      const std::string& version_b) {
    Rank r = rank(path, a, b, version_a.empty() ? a : version_a, version_b.empty() ? b : version_b);
    return {path, a, b, r.category, r.weight, r.why};
}

std::vector<FingerprintDifference> diff_fingerprints(const nlohmann::json& a,
                                                     const nlohmann::json& b) {
    FlatFingerprint fa = flatten_fingerprint(a), fb = flatten_fingerprint(b);
    std::vector<FingerprintDifference> out;
    auto add = [&](const std::string& p, std::string va, std::string vb, const std::string& ka,
                   const std::string& kb) {
        Rank r = rank(p, va, vb, ka, kb);
        if (p == "torch.cudnn") {
            if (va != k_absent) va += " (" + cudnn_version(va) + ")";
            if (vb != k_absent) vb += " (" + cudnn_version(vb) + ")";
        }
        out.push_back({p, va, vb, r.category, r.weight, r.why});
    };
    // A list element on one side only is one difference; its fields (and the elements in
    // it) are not compared.
    std::vector<std::string> lone;
    auto inside_lone = [&](const std::string& p) {
        return std::any_of(lone.begin(), lone.end(), [&](const std::string& e) {
            return p.size() > e.size() && starts_with(p, e) &&
                   (p[e.size()] == '.' || p[e.size()] == '[');
        });
    };
    for (const auto& [side, other, is_a] :
         {std::tuple{&fa, &fb, true}, std::tuple{&fb, &fa, false}})
        for (const auto& [element, summary] : side->elements)  // parents before children
            if (!other->elements.count(element) && !inside_lone(element)) {
                lone.push_back(element);
                add(element, is_a ? summary : k_absent, is_a ? k_absent : summary, k_absent,
                    k_absent);
            }
    std::set<std::string> paths;
    for (const auto& [p, _] : fa.leaves) paths.insert(p);
    for (const auto& [p, _] : fb.leaves) paths.insert(p);
    for (const auto& p : paths) {
        auto ia = fa.leaves.find(p), ib = fb.leaves.find(p);
        std::string va = ia == fa.leaves.end() ? k_absent : ia->second.value;
        std::string vb = ib == fb.leaves.end() ? k_absent : ib->second.value;
        if (va == vb || inside_lone(p)) continue;
        add(p, va, vb, ia == fa.leaves.end() ? k_absent : ia->second.version,
            ib == fb.leaves.end() ? k_absent : ib->second.version);
    }
    std::set<std::string> seen;
    arch_gaps(a, b, true, out, seen);
    arch_gaps(b, a, false, out, seen);

    std::sort(out.begin(), out.end(),
              [](const FingerprintDifference& x, const FingerprintDifference& y) {
                  if (x.weight != y.weight) return x.weight > y.weight;
                  return x.path < y.path;
              });
    return out;
}

}  // namespace td
