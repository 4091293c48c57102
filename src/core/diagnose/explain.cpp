#include "core/diagnose/explain.hpp"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

using json = nlohmann::json;

constexpr std::size_t k_max_evidence_text = 300;  // bytes of a line shown as evidence
constexpr std::size_t k_max_hits = 10;            // matched lines kept per signature and kind
constexpr std::size_t k_max_evidence = 12;        // evidence lines per explanation

// Cuts `s` to at most `max` bytes without splitting a UTF-8 sequence.
std::string cut_utf8(std::string_view s, std::size_t max) {
    if (s.size() <= max) return std::string(s);
    std::size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    return std::string(s.substr(0, n)) + "...";
}

// ---- knowledge-base helpers -------------------------------------------------------------

std::optional<Version> parse_version(const std::string& s) { return Version::parse(s); }

// "12.4.131" -> "12.4"; "" when it is not a version with at least two parts.
std::string major_minor(const std::string& s) {
    auto v = Version::parse(s);
    if (!v || v->parts().size() < 2) return {};
    return v->major_minor();
}

// Release indices of the knowledge base, oldest torch first.
std::vector<std::size_t> torch_order(const KnowledgeBase& kb) {
    const auto& rel = kb.torch_releases();
    std::vector<std::size_t> order(rel.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        auto va = Version::parse(rel[a].version), vb = Version::parse(rel[b].version);
        if (!va || !vb) return false;
        return *va < *vb;
    });
    return order;
}

// "2.4.0 to 2.6.0, 2.8.0" for the positions (in `order`) given, consecutive ones joined.
std::string version_runs(const KnowledgeBase& kb, const std::vector<std::size_t>& order,
                         const std::vector<std::size_t>& positions) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < positions.size();) {
        std::size_t j = i;
        while (j + 1 < positions.size() && positions[j + 1] == positions[j] + 1) ++j;
        const auto& first = kb.torch_releases()[order[positions[i]]].version;
        const auto& last = kb.torch_releases()[order[positions[j]]].version;
        parts.push_back(i == j ? first : first + " to " + last);
        i = j + 1;
    }
    return join(parts, ", ");
}

// Torch wheel variants that satisfy `want`, as "cu128 (torch 2.7.0 to 2.11.0), ...", variants
// with the newest CUDA first.
std::string variant_summary(const KnowledgeBase& kb,
                            const std::function<bool(const TorchVariant&)>& want) {
    auto order = torch_order(kb);
    std::map<std::string, std::vector<std::size_t>> by_variant;
    std::map<std::string, std::string> cuda_of;
    for (std::size_t pos = 0; pos < order.size(); ++pos)
        for (const auto& v : kb.torch_releases()[order[pos]].variants)
            if (want(v)) {
                by_variant[v.name].push_back(pos);
                cuda_of[v.name] = v.cuda;
            }
    std::vector<std::string> names;
    for (const auto& [name, positions] : by_variant) names.push_back(name);
    std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
        auto va = Version::parse(cuda_of[a]), vb = Version::parse(cuda_of[b]);
        if (va && vb && !(*va == *vb)) return *vb < *va;
        return a < b;
    });
    std::vector<std::string> parts;
    for (const auto& name : names)
        parts.push_back(name + " (torch " + version_runs(kb, order, by_variant[name]) + ")");
    return join(parts, ", ");
}

// The CUDA major.minor versions the knowledge base knows of.
std::vector<std::string> known_cuda_minors(const KnowledgeBase& kb) {
    std::set<std::string> mm;
    for (const auto& img : kb.cuda_images()) mm.insert(img.cuda_major_minor);
    for (const auto& r : kb.torch_releases())
        for (const auto& v : r.variants)
            if (!v.cuda.empty()) mm.insert(v.cuda);
    std::vector<std::string> out;
    for (const auto& m : mm)
        if (kb.cuda(m)) out.push_back(m);
    return out;
}

// The newest CUDA x.y whose first release's driver floor `driver` meets.
std::string cuda_for_driver(const KnowledgeBase& kb, const std::string& driver) {
    auto d = Version::parse(driver);
    if (!d) return {};
    std::optional<Version> best;
    for (const auto& mm : known_cuda_minors(kb)) {
        const CudaMinor* c = kb.cuda(mm);
        if (!c || c->releases.empty()) continue;
        auto floor = Version::parse(c->releases.front().min_driver);
        auto v = Version::parse(mm);
        if (floor && v && *floor <= *d && (!best || *best < *v)) best = v;
    }
    return best ? best->major_minor() : std::string();
}

// ---- fingerprint helpers -----------------------------------------------------------------

const json* fp_path(const json& fp, std::string_view path) {
    const json* cur = &fp;
    for (const auto& key : split(path, '.')) {
        if (!cur->is_object()) return nullptr;
        auto it = cur->find(key);
        if (it == cur->end()) return nullptr;
        cur = &*it;
    }
    return cur;
}

std::string json_scalar(const json* j) {
    if (!j) return {};
    if (j->is_string()) return j->get<std::string>();
    if (j->is_number_unsigned()) return std::to_string(j->get<std::uint64_t>());
    if (j->is_number_integer()) return std::to_string(j->get<std::int64_t>());
    if (j->is_number_float()) return j->dump();
    return {};
}

std::string resolve(const std::vector<std::string>& from,
                    const std::map<std::string, std::string>& facts, const json* fp) {
    for (const auto& name : from) {
        std::string value;
        if (starts_with(name, "fp:")) {
            if (fp) value = json_scalar(fp_path(*fp, std::string_view(name).substr(3)));
        } else if (auto it = facts.find(name); it != facts.end()) {
            value = it->second;
        }
        if (!value.empty()) return value;
    }
    return {};
}

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

// ---- checks -------------------------------------------------------------------------------

struct Verdict {
    bool decided = false;
    bool confirmed = false;
    std::string text;
};

Verdict confirm(std::string text) { return {true, true, std::move(text)}; }
Verdict rule_out(std::string text) { return {true, false, std::move(text)}; }

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
            auto nv = parse_version(need);
            auto dv = parse_version(d.cuda);
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
            auto a = parse_version(resolve(c.from, facts, &fp));
            auto b = parse_version(resolve(c.against, facts, &fp));
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

// ---- derivations --------------------------------------------------------------------------

void derive(const Derivation& d, std::map<std::string, std::string>& facts,
            const KnowledgeBase& kb) {
    using K = Derivation::Kind;
    std::string in = resolve(d.from, facts, nullptr);
    if (in.empty()) return;
    switch (d.kind) {
        case K::SonameMajor: {
            auto pos = in.find(".so.");
            if (pos == std::string::npos) return;
            std::string major;
            for (std::size_t i = pos + 4; i < in.size() && in[i] >= '0' && in[i] <= '9'; ++i)
                major += in[i];
            if (!major.empty()) facts.emplace("major", major);
            return;
        }
        case K::MinDriverForCuda: {
            std::string mm = major_minor(in);
            if (mm.empty()) return;
            facts.emplace("need_cuda", mm);
            if (const CudaMinor* c = kb.cuda(mm)) {
                if (auto floor = kb.min_driver(mm); !floor.empty())
                    facts.emplace("min_driver", floor);
                if (!c->minor_compat_min_driver.empty())
                    facts.emplace("compat_driver", c->minor_compat_min_driver);
            }
            return;
        }
        case K::CudaFromDriverApi: {
            std::string mm;
            if (in.find('.') != std::string::npos) {
                mm = major_minor(in);
            } else if (auto v = Version::parse(in);
                       v && v->parts().size() == 1 && v->major() >= 1000) {
                mm = cuda_version_from_int(v->major());
            }
            if (!mm.empty()) facts.emplace("found_cuda", mm);
            return;
        }
        case K::TorchVariantsForSm: {
            std::string cc;
            if (in.find('.') != std::string::npos) {
                auto v = Version::parse(in);
                if (v && v->parts().size() == 2) cc = v->str();
            } else {
                std::string digits;
                for (char c : in) {
                    if (c < '0' || c > '9') break;
                    digits += c;
                }
                auto v = Version::parse(digits);
                if (v && digits.size() >= 2 && digits.size() <= 4)
                    cc = std::to_string(v->major() / 10) + "." + std::to_string(v->major() % 10);
            }
            if (cc.empty()) return;
            facts.emplace("sm_cc", cc);
            std::string fits = variant_summary(kb, [&](const TorchVariant& v) {
                return !v.arch_list.empty() && arch_list_covers(v.arch_list, cc);
            });
            if (fits.empty())
                facts.emplace("fits_none", cc);
            else
                facts.emplace("fits", fits);
            return;
        }
        case K::TorchForCudnnMajor: {
            auto want = Version::parse(in);
            if (!want) return;
            auto order = torch_order(kb);
            std::vector<std::size_t> positions;
            for (std::size_t pos = 0; pos < order.size(); ++pos)
                for (const auto& v : kb.torch_releases()[order[pos]].variants) {
                    auto cv = Version::parse(v.cudnn);
                    if (cv && cv->major() == want->major()) {
                        positions.push_back(pos);
                        break;
                    }
                }
            if (!positions.empty())
                facts.emplace("cudnn_torch", version_runs(kb, order, positions));
            return;
        }
        case K::TorchVariantsForCuda: {
            auto want = Version::parse(in);
            if (!want) return;
            std::string summary;
            if (want->parts().size() >= 2) {
                std::string mm = want->major_minor();
                summary = variant_summary(kb, [&](const TorchVariant& v) { return v.cuda == mm; });
            }
            if (summary.empty())
                summary = variant_summary(kb, [&](const TorchVariant& v) {
                    auto cv = Version::parse(v.cuda);
                    return cv && cv->major() == want->major();
                });
            if (!summary.empty()) facts.emplace("cuda_variants", summary);
            return;
        }
        case K::NewestTorchForDriver: {
            auto limit = Version::parse(major_minor(in));
            if (!limit) return;
            std::optional<Version> best_torch, best_cuda;
            std::string best;
            for (const auto& r : kb.torch_releases()) {
                auto tv = Version::parse(r.version);
                if (!tv) continue;
                for (const auto& v : r.variants) {
                    auto cv = Version::parse(v.cuda);
                    if (!cv || *limit < *cv) continue;
                    bool better = !best_torch || *best_torch < *tv ||
                                  (*best_torch == *tv && *best_cuda < *cv);
                    if (better) {
                        best_torch = tv;
                        best_cuda = cv;
                        best = r.version + "+" + v.name;
                    }
                }
            }
            if (!best.empty()) facts.emplace("fitting_torch", best);
            return;
        }
    }
}

// Facts every log gets when it has the inputs: torch_cuda from a torch_version "2.4.1+cu121".
void derive_common(std::map<std::string, std::string>& facts) {
    auto it = facts.find("torch_version");
    if (it == facts.end() || facts.count("torch_cuda")) return;
    auto pos = it->second.find("+cu");
    if (pos == std::string::npos) return;
    std::string digits;
    for (std::size_t i = pos + 3;
         i < it->second.size() && it->second[i] >= '0' && it->second[i] <= '9'; ++i)
        digits += it->second[i];
    if (digits.size() >= 2 && digits.size() <= 4)
        facts.emplace("torch_cuda",
                      digits.substr(0, digits.size() - 1) + "." + digits.substr(digits.size() - 1));
}

// ---- log scanning -------------------------------------------------------------------------

struct Hit {
    std::size_t line = 0;
    std::string text;
};

struct SignatureState {
    bool triggered = false;
    std::size_t first_line = 0;
    std::vector<Hit> hits;          // trigger lines (up to k_max_hits)
    std::vector<Hit> context_hits;  // context lines (up to k_max_hits)
    std::map<std::string, std::string> captures, context_captures, merged_captures;
};

}  // namespace

// ---- explain_log ----------------------------------------------------------------------------

std::vector<Explanation> explain_log(std::string_view log, const ErrorSignatures& signatures,
                                     const nlohmann::json* fingerprint, const KnowledgeBase& kb) {
    const auto& sigs = signatures.signatures;
    std::vector<SignatureState> state(sigs.size());
    std::map<std::string, std::string> global;
    std::vector<bool> fact_done(signatures.facts.size(), false);

    std::size_t line_no = 0;
    for (std::size_t start = 0; start < log.size();) {
        std::size_t nl = log.find('\n', start);
        std::size_t stop = nl == std::string_view::npos ? log.size() : nl;
        ++line_no;
        std::string_view raw = log.substr(start, stop - start);
        start = nl == std::string_view::npos ? log.size() : nl + 1;
        std::string line = normalize_log_line(raw);
        if (line.empty()) continue;

        for (std::size_t f = 0; f < signatures.facts.size(); ++f) {
            if (fact_done[f]) continue;
            if (auto m = signatures.facts[f].match(line)) {
                for (auto& [k, v] : *m) global.emplace(k, v);
                bool all = true;
                for (const auto& n : signatures.facts[f].names()) all = all && global.count(n);
                fact_done[f] = all;
            }
        }
        for (std::size_t s = 0; s < sigs.size(); ++s) {
            SignatureState& st = state[s];
            bool triggered_here = false;
            for (const auto& p : sigs[s].patterns) {
                auto m = p.match(line);
                if (!m) continue;
                if (!st.triggered) st.first_line = line_no;
                st.triggered = triggered_here = true;
                if (st.hits.size() < k_max_hits) st.hits.push_back({line_no, line});
                for (auto& [k, v] : *m) st.captures.emplace(k, v);
                break;
            }
            bool context_here = false;
            for (const auto& c : sigs[s].context) {
                auto m = c.match(line);
                if (!m) continue;
                if (!triggered_here && !context_here && st.context_hits.size() < k_max_hits)
                    st.context_hits.push_back({line_no, line});
                context_here = true;
                for (auto& [k, v] : *m) st.context_captures.emplace(k, v);
            }
        }
    }

    // Superseded signatures fold into the highest-ranked signature that supersedes them.
    std::vector<bool> dropped(sigs.size(), false);
    auto index_of = [&](const std::string& id) {
        for (std::size_t k = 0; k < sigs.size(); ++k)
            if (sigs[k].id == id) return k;
        return sigs.size();
    };
    auto superseder = [&](std::size_t d) {
        std::size_t best = sigs.size();
        for (std::size_t t = 0; t < sigs.size(); ++t) {
            if (!state[t].triggered || t == d) continue;
            for (const auto& id : sigs[t].supersedes)
                if (id == sigs[d].id && (best == sigs.size() || sigs[t].rank > sigs[best].rank))
                    best = t;
        }
        return best;
    };
    for (std::size_t t = 0; t < sigs.size(); ++t)
        if (state[t].triggered)
            for (const auto& id : sigs[t].supersedes)
                if (auto d = index_of(id); d < sigs.size() && state[d].triggered) dropped[d] = true;
    for (std::size_t d = 0; d < sigs.size(); ++d) {
        if (!dropped[d]) continue;
        std::size_t target = superseder(d);
        while (target < sigs.size() && dropped[target]) target = superseder(target);
        if (target >= sigs.size()) continue;
        SignatureState& to = state[target];
        const SignatureState& from = state[d];
        to.context_hits.insert(to.context_hits.end(), from.hits.begin(), from.hits.end());
        to.context_hits.insert(to.context_hits.end(), from.context_hits.begin(),
                               from.context_hits.end());
        for (const auto& [k, v] : from.captures) to.merged_captures.emplace(k, v);
        for (const auto& [k, v] : from.context_captures) to.merged_captures.emplace(k, v);
        to.first_line = std::min(to.first_line, from.first_line);
    }

    std::vector<std::pair<std::size_t, Explanation>> found;  // signature index, explanation
    for (std::size_t s = 0; s < sigs.size(); ++s) {
        const SignatureState& st = state[s];
        if (!st.triggered || dropped[s]) continue;
        const ErrorSignature& sig = sigs[s];
        Explanation e;
        e.id = sig.id;
        e.title = sig.title;
        e.facts = st.captures;
        for (const auto& [k, v] : st.context_captures) e.facts.emplace(k, v);
        for (const auto& [k, v] : st.merged_captures) e.facts.emplace(k, v);
        for (const auto& [k, v] : global) e.facts.emplace(k, v);
        derive_common(e.facts);
        for (const auto& d : sig.derive) derive(d, e.facts, kb);
        e.cause = render_template(sig.cause, e.facts).value_or(sig.title);
        e.fix = render_template(sig.fix, e.facts).value_or(std::string());

        std::vector<Hit> hits = st.hits;
        hits.insert(hits.end(), st.context_hits.begin(), st.context_hits.end());
        std::stable_sort(hits.begin(), hits.end(),
                         [](const Hit& a, const Hit& b) { return a.line < b.line; });
        std::size_t last = 0;
        for (const auto& h : hits) {
            if (h.line == last) continue;
            last = h.line;
            if (e.evidence.size() == k_max_evidence) break;
            e.evidence.push_back("L" + std::to_string(h.line) + ": " +
                                 cut_utf8(h.text, k_max_evidence_text));
        }

        if (fingerprint && fingerprint->is_object()) {
            for (const auto& c : sig.checks) {
                Verdict v = run_check(c, e.facts, *fingerprint, kb);
                if (!v.decided) continue;
                const std::string& note = v.confirmed ? c.confirmed_note : c.ruled_out_note;
                e.verdict = (v.confirmed ? "confirmed: " : "ruled out: ") + v.text +
                            (note.empty() ? "" : "; " + note);
                break;
            }
        }
        found.emplace_back(s, std::move(e));
    }

    std::stable_sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
        const auto &sa = sigs[a.first], &sb = sigs[b.first];
        if (sa.rank != sb.rank) return sa.rank > sb.rank;
        if (state[a.first].first_line != state[b.first].first_line)
            return state[a.first].first_line < state[b.first].first_line;
        return sa.id < sb.id;
    });
    std::vector<Explanation> out;
    for (auto& [s, e] : found) out.push_back(std::move(e));
    return out;
}

}  // namespace td
