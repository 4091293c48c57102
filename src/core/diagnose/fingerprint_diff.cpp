#include "core/diagnose/fingerprint_diff.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "core/knowledge/knowledge_base.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

using json = nlohmann::json;

const std::string kAbsent = "(absent)";

struct Leaf {
    std::string value;  // as shown
    std::string
        version;  // what version comparison uses (libraries: their version or soname number)
};
using Flat = std::map<std::string, Leaf>;

std::string scalar(const json& j) {
    if (j.is_string()) return j.get<std::string>();
    return j.dump();
}

// Generic flattening: objects to "a.b", arrays to "a[0]"; null is the same as missing.
void flatten(const json& j, const std::string& path, Flat& out) {
    if (j.is_null()) return;
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) flatten(v, path.empty() ? k : path + "." + k, out);
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            flatten(j[i], path + "[" + std::to_string(i) + "]", out);
    } else {
        out[path] = {scalar(j), scalar(j)};
    }
}

std::string text_of(const json& j, const char* key) {
    if (!j.is_object()) return {};
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "libcudnn_ops.so.9" -> "cudnn_ops"; "/usr/lib/libnccl.so.2" -> "nccl".
std::string library_name_of(std::string file) {
    if (auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
    if (starts_with(file, "lib")) file = file.substr(3);
    if (auto so = file.find(".so"); so != std::string::npos) file = file.substr(0, so);
    return file;
}

// "libcudnn.so.9" -> "9"; "libcudart.so.12.4.127" -> "12.4.127".
std::string soname_version(const std::string& soname) {
    auto so = soname.find(".so.");
    return so == std::string::npos ? std::string() : soname.substr(so + 4);
}

void add_keyed(Flat& out, const std::string& prefix, const std::string& key, Leaf leaf) {
    std::string path = prefix + "[" + key + "]";
    for (int n = 2; out.count(path); ++n) path = prefix + "[" + key + "#" + std::to_string(n) + "]";
    out[path] = std::move(leaf);
}

std::vector<std::string> arch_list_of(const json& fp) {
    std::vector<std::string> out;
    if (!fp.is_object() || !fp.contains("torch") || !fp["torch"].is_object()) return out;
    const json& t = fp["torch"];
    if (t.contains("arch_list") && t["arch_list"].is_array())
        for (const auto& a : t["arch_list"])
            if (a.is_string()) out.push_back(a.get<std::string>());
    return out;
}

Flat flatten_fingerprint(const json& fp) {
    Flat out;
    if (!fp.is_object()) return out;
    for (const auto& [key, v] : fp.items()) {
        if (v.is_null()) continue;
        if (key == "libraries" && v.is_array()) {
            for (std::size_t i = 0; i < v.size(); ++i) {
                const json& lib = v[i];
                std::string name = text_of(lib, "name"), soname = text_of(lib, "soname"),
                            path = text_of(lib, "path");
                std::string version = text_of(lib, "version");
                std::string k = !name.empty()     ? name
                                : !soname.empty() ? library_name_of(soname)
                                : !path.empty()   ? library_name_of(path)
                                                  : std::to_string(i);
                std::string shown = soname.empty() ? k : soname;
                if (!version.empty()) shown += " " + version;
                shown += path.empty() ? " (not found)" : " at " + path;
                add_keyed(out, "libraries", k,
                          {shown, version.empty() ? soname_version(soname) : version});
            }
        } else if (key == "duplicates" && v.is_array()) {
            for (std::size_t i = 0; i < v.size(); ++i) {
                const json& d = v[i];
                std::string name = text_of(d, "name");
                std::vector<std::string> copies;
                if (d.is_object() && d.contains("copies") && d["copies"].is_array())
                    for (const auto& c : d["copies"]) {
                        std::string ver = text_of(c, "version");
                        copies.push_back(text_of(c, "path") +
                                         (ver.empty() ? "" : " (" + ver + ")"));
                    }
                std::sort(copies.begin(), copies.end());
                std::string shown = join(copies, ", ");
                add_keyed(out, "duplicates", name.empty() ? std::to_string(i) : name,
                          {shown, shown});
            }
        } else if (key == "unresolved" && v.is_array()) {
            std::map<std::string, std::set<std::string>> needed;
            for (std::size_t i = 0; i < v.size(); ++i) {
                std::string soname = text_of(v[i], "soname");
                std::string by = text_of(v[i], "needed_by");
                auto& s = needed[soname.empty() ? std::to_string(i) : soname];
                if (!by.empty()) s.insert(by);
            }
            for (const auto& [soname, by] : needed) {
                std::string shown =
                    by.empty() ? "not found"
                               : "not found, needed by " + join({by.begin(), by.end()}, ", ");
                out["unresolved[" + soname + "]"] = {shown, shown};
            }
        } else if (key == "gpus" && v.is_array()) {
            for (std::size_t i = 0; i < v.size(); ++i)
                flatten(v[i], "gpus[" + std::to_string(i) + "]", out);
            if (!v.empty())
                out["gpus.count"] = {std::to_string(v.size()), std::to_string(v.size())};
        } else if (key == "torch" && v.is_object()) {
            for (const auto& [tk, tv] : v.items()) {
                if (tk == "arch_list" && tv.is_array()) {
                    std::vector<std::string> arch;
                    for (const auto& a : tv) arch.push_back(scalar(a));
                    if (!arch.empty()) out["torch.arch_list"] = {join(arch, " "), join(arch, " ")};
                } else {
                    flatten(tv, "torch." + tk, out);
                }
            }
        } else {
            flatten(v, key, out);
        }
    }
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
    if (a == kAbsent || b == kAbsent) return major;
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

Rank rank(const std::string& path, const std::string& a, const std::string& b,
          const std::string& va, const std::string& vb) {
    bool one_side = a == kAbsent || b == kAbsent;
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
        if (one_side) return {"libraries", 60, "a library is present on one side only"};
        if (va == vb) return {"libraries", 40, "the same library is loaded from a different place"};
        return {"libraries", by_level(va, vb, 64, 54, 46),
                "a different version of a library is loaded"};
    }
    if (path == "env.LD_LIBRARY_PATH")
        return {
            "search_path", 60,
            "the loader searches different directories: other copies of CUDA libraries may win"};
    if (path == "cuda_runtime.library" || path == "cudnn_loader.library" ||
        path == "nccl_loader.library")
        return {"search_path", 50, "the library is loaded from a different place"};
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
            if (!text_of(g, "cc").empty()) out.push_back({text_of(g, "name"), text_of(g, "cc")});
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

std::vector<FingerprintDifference> diff_fingerprints(const nlohmann::json& a,
                                                     const nlohmann::json& b) {
    Flat fa = flatten_fingerprint(a), fb = flatten_fingerprint(b);
    std::set<std::string> paths;
    for (const auto& [p, _] : fa) paths.insert(p);
    for (const auto& [p, _] : fb) paths.insert(p);

    std::vector<FingerprintDifference> out;
    for (const auto& p : paths) {
        auto ia = fa.find(p), ib = fb.find(p);
        std::string va = ia == fa.end() ? kAbsent : ia->second.value;
        std::string vb = ib == fb.end() ? kAbsent : ib->second.value;
        if (va == vb) continue;
        std::string ka = ia == fa.end() ? kAbsent : ia->second.version;
        std::string kb = ib == fb.end() ? kAbsent : ib->second.version;
        Rank r = rank(p, va, vb, ka, kb);
        if (p == "torch.cudnn") {
            if (va != kAbsent) va += " (" + cudnn_version(va) + ")";
            if (vb != kAbsent) vb += " (" + cudnn_version(vb) + ")";
        }
        out.push_back({p, va, vb, r.category, r.weight, r.why});
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
