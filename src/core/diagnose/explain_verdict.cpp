// How a fingerprint confirms or rules out an explanation (the signature's `checks`).
#include "core/diagnose/explain_verdict.hpp"

#include <nlohmann/json.hpp>

#include "core/diagnose/explain_facts.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td::explain_detail {
namespace {

using json = nlohmann::json;

struct DriverInfo {
    bool present = false;
    std::string version, cuda;
    std::string
        below;  // when `cuda` is unknown: the oldest known CUDA x.y whose floor the driver is under
};

DriverInfo driver_info(const json& fp, const KnowledgeBase& kb) {
    DriverInfo d;
    d.version = json_scalar(fp_path(fp, "driver.version"));
    d.present = !d.version.empty();
    d.cuda = major_minor(json_scalar(fp_path(fp, "driver.cuda")));
    if (d.present && d.cuda.empty()) {
        d.cuda = cuda_for_driver(kb, d.version);
        auto dv = Version::parse(d.version);
        if (d.cuda.empty() && dv) {
            std::optional<Version> oldest;
            for (const auto& mm : known_cuda_minors(kb)) {
                auto v = Version::parse(mm);
                if (v && (!oldest || *v < *oldest)) oldest = v;
            }
            if (oldest) {
                const CudaMinor* c = kb.cuda(oldest->major_minor());
                auto floor = c && !c->releases.empty()
                                 ? Version::parse(c->releases.front().min_driver)
                                 : std::nullopt;
                if (floor && *dv < *floor) d.below = oldest->major_minor();
            }
        }
    }
    return d;
}

std::string human_bytes(std::int64_t n) {
    constexpr std::int64_t mib = 1024 * 1024, gib = 1024 * mib;
    if (n >= gib && n % gib == 0) return std::to_string(n / gib) + " GiB";
    if (n >= mib && n % mib == 0) return std::to_string(n / mib) + " MiB";
    return std::to_string(n) + " bytes";
}

// The arch list named by `from`: a fingerprint array or a fact "sm_50 sm_60 ...".
std::vector<std::string> resolve_arch_list(const std::vector<std::string>& from,
                                           const std::map<std::string, std::string>& facts,
                                           const json* fp) {
    for (const auto& name : from) {
        std::vector<std::string> raw;
        if (starts_with(name, "fp:")) {
            const json* j = fp ? fp_path(*fp, std::string_view(name).substr(3)) : nullptr;
            if (j && j->is_array())
                for (const auto& e : *j)
                    if (e.is_string()) raw.push_back(e.get<std::string>());
        } else if (auto it = facts.find(name); it != facts.end()) {
            std::string cur;
            for (char c : it->second + " ") {
                if (c == ' ' || c == ',') {
                    if (!cur.empty()) raw.push_back(cur);
                    cur.clear();
                } else {
                    cur += c;
                }
            }
        }
        if (!raw.empty()) return raw;
    }
    return {};
}

struct FpGpu {
    std::string name, cc;
};

std::vector<FpGpu> fingerprint_gpus(const json& fp, const KnowledgeBase& kb) {
    std::vector<FpGpu> out;
    auto it = fp.find("gpus");
    if (it == fp.end() || !it->is_array()) return out;
    for (const auto& g : *it) {
        if (!g.is_object()) continue;
        FpGpu gpu{json_scalar(fp_path(g, "name")), json_scalar(fp_path(g, "cc"))};
        if (gpu.cc.empty())
            if (const GpuModel* m = kb.gpu(gpu.name)) gpu.cc = m->cc;
        out.push_back(std::move(gpu));
    }
    return out;
}

// cuDNN version as torch reports it (8902 = 8.9.2, 90100 = 9.1.0) or dotted.
std::optional<Version> cudnn_version(const std::string& s) {
    if (s.find('.') != std::string::npos) return Version::parse(s);
    auto v = Version::parse(s);
    if (!v || v->parts().size() != 1) return std::nullopt;
    return Version::parse(cudnn_version_from_int(v->major()));
}

std::string env_value(const json& fp, const char* name) {
    return json_scalar(fp_path(fp, std::string("env.") + name));
}

Verdict confirm(std::string text) { return {true, true, std::move(text)}; }
Verdict rule_out(std::string text) { return {true, false, std::move(text)}; }

}  // namespace

Verdict run_check(const SignatureCheck& c, const std::map<std::string, std::string>& facts,
                  const json& fp, const KnowledgeBase& kb) {
    using K = SignatureCheck::Kind;
    switch (c.kind) {
        case K::UnresolvedSoname: {
            auto soname = render_template(c.soname, facts);
            auto it = fp.find("unresolved");
            if (!soname || soname->empty() || it == fp.end() || !it->is_array()) return {};
            for (const auto& u : *it) {
                std::string s = json_scalar(fp_path(u, "soname"));
                if (s == *soname) {
                    std::string by = json_scalar(fp_path(u, "needed_by"));
                    return confirm(*soname + " is unresolved in the fingerprint" +
                                   (by.empty() ? std::string() : " (needed by " + by + ")"));
                }
            }
            return rule_out(*soname +
                            " is not among the fingerprint's unresolved libraries: it loads there");
        }
        case K::DriverSupports: {
            DriverInfo d = driver_info(fp, kb);
            if (!d.present)
                return c.absent_confirms ? confirm("the fingerprint shows no NVIDIA driver")
                                         : Verdict{};
            std::string need = major_minor(resolve(c.from, facts, &fp));
            auto nv = Version::parse(need);
            auto dv = Version::parse(d.cuda);
            if (nv && !dv && !d.below.empty()) {  // older than every CUDA the knowledge base knows
                auto oldest = Version::parse(d.below);
                bool bad = c.compare_minor ? !(*nv < *oldest) : oldest->major() < nv->major();
                if (bad)
                    return confirm("driver " + d.version +
                                   " is older than the driver floor of CUDA " + d.below +
                                   ", older than the CUDA " + need + " needed");
                return {};
            }
            if (!nv || !dv) return {};
            bool bad = c.compare_minor ? *dv < *nv : dv->major() < nv->major();
            if (bad)
                return confirm("driver " + d.version + " supports CUDA up to " + d.cuda +
                               ", older than the CUDA " + need + " needed");
            std::string how = (!c.compare_minor && *dv < *nv)
                                  ? " (same major version: minor-version compatibility)"
                                  : std::string();
            return rule_out("driver " + d.version + " supports CUDA " + d.cuda +
                            ", enough for CUDA " + need + how);
        }
        case K::ShmMin: {
            const json* j = fp_path(fp, "shm_bytes");
            if (!j || !j->is_number()) return {};
            auto n = static_cast<std::int64_t>(j->get<double>());
            if (n < c.min_bytes)
                return confirm("/dev/shm in the fingerprint is " + human_bytes(n) + ", below " +
                               human_bytes(c.min_bytes));
            return rule_out("/dev/shm in the fingerprint is " + human_bytes(n) + ", at least " +
                            human_bytes(c.min_bytes));
        }
        case K::GpuArch: {
            auto raw = resolve_arch_list(c.from, facts, &fp);
            auto gpus = fingerprint_gpus(fp, kb);
            if (raw.empty()) return {};
            std::vector<std::string> arch;
            for (const auto& r : raw)
                if (auto a = normalize_arch(r); !a.empty()) arch.push_back(a);
            std::vector<std::string> covered, uncovered;
            for (const auto& g : gpus) {
                if (g.cc.empty()) continue;
                std::string label = g.name + " (compute capability " + g.cc + ")";
                (arch_list_covers(arch, g.cc) ? covered : uncovered).push_back(label);
            }
            std::string list = join(raw, " ");
            if (!uncovered.empty())
                return confirm(join(uncovered, ", ") + " is not covered by torch's arch list " +
                               list);
            if (!covered.empty())
                return rule_out(join(covered, ", ") + " is covered by torch's arch list " + list);
            return {};
        }
        case K::NoDriver: {
            DriverInfo d = driver_info(fp, kb);
            if (!d.present)
                return c.absent_confirms ? confirm("the fingerprint shows no NVIDIA driver")
                                         : Verdict{};
            return c.present_rules_out
                       ? rule_out("the fingerprint shows NVIDIA driver " + d.version)
                       : Verdict{};
        }
        case K::DatacenterGpu: {
            for (const auto& g : fingerprint_gpus(fp, kb)) {
                const GpuModel* m = kb.gpu(g.name);
                if (!m || m->datacenter) continue;
                std::string text =
                    g.name +
                    " is not a data-center GPU, and CUDA forward compatibility runs only on "
                    "data-center GPUs";
                std::string ld = env_value(fp, "LD_LIBRARY_PATH");
                if (ld.find("compat") != std::string::npos)
                    text += "; LD_LIBRARY_PATH holds the compat libraries (" + ld + ")";
                return confirm(text);
            }
            return {};
        }
        case K::CudnnRuntime: {
            if (c.from.size() < 2) return {};
            auto cm = facts.find(c.from[0]), cn = facts.find(c.from[1]);
            auto runtime = cudnn_version(json_scalar(fp_path(fp, "torch.cudnn")));
            if (cm == facts.end() || cn == facts.end() || !runtime) return {};
            auto compiled = Version::parse(cm->second + "." + cn->second);
            if (!compiled) return {};
            bool bad =
                runtime->major() != compiled->major() || runtime->minor() < compiled->minor();
            std::string text = "torch in the fingerprint loads cuDNN " + runtime->str() + ", " +
                               (bad ? "incompatible with" : "compatible with") + " the cuDNN " +
                               compiled->str() + " it was compiled against";
            std::string ld = env_value(fp, "LD_LIBRARY_PATH");
            if (bad &&
                (ld.find("cudnn") != std::string::npos || ld.find("cuda") != std::string::npos))
                text += "; LD_LIBRARY_PATH is " + ld;
            return bad ? confirm(text) : rule_out(text);
        }
        case K::MajorDiffers: {
            auto a = Version::parse(resolve(c.from, facts, &fp));
            auto b = Version::parse(resolve(c.against, facts, &fp));
            if (!a || !b) return {};
            if (a->major() != b->major())
                return confirm("CUDA " + a->str() + " and CUDA " + b->str() +
                               " differ in major version");
            return rule_out("CUDA " + a->str() + " and CUDA " + b->str() + " share major version " +
                            std::to_string(a->major()));
        }
    }
    return {};
}

}  // namespace td::explain_detail
