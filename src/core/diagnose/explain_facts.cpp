// Facts of an explanation: what the knowledge base derives from the values a log gave
// (driver floors, torch variants for an arch or a CUDA), and fingerprint lookups.
#include "core/diagnose/explain_facts.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "util/strings.hpp"
#include "util/version.hpp"

namespace td::explain_detail {

using json = nlohmann::json;

namespace {

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

// "2.00 GiB" / "20.00 MiB" / "512 bytes" (torch's allocator messages) -> bytes; < 0 if not.
double size_bytes(const std::string& text) {
    std::size_t i = 0;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    if (i == 0) return -1;
    double v = 0;
    try {
        v = std::stod(text.substr(0, i));
    } catch (...) {
        return -1;
    }
    std::string unit = text.substr(i);
    while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
    static const std::map<std::string, double> units = {
        {"bytes", 1},          {"B", 1},
        {"KiB", 1024.0},       {"MiB", 1048576.0},
        {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
    auto it = units.find(unit);
    return it == units.end() ? -1 : v * it->second;
}

std::string human_size(double bytes) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
    return buf;
}

}  // namespace

// "12.4.131" -> "12.4"; "" when it is not a version with at least two parts.
std::string major_minor(const std::string& s) {
    auto v = Version::parse(s);
    if (!v || v->parts().size() < 2) return {};
    return v->major_minor();
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

void derive(const Derivation& d, std::map<std::string, std::string>& facts,
            const KnowledgeBase& kb) {
    using K = Derivation::Kind;
    if (d.kind == K::OomSplit) {  // from: requested, unallocated[, reserved total, allocated]
        auto fact = [&](std::size_t i) {
            auto it = i < d.from.size() ? facts.find(d.from[i]) : facts.end();
            return it == facts.end() ? -1.0 : size_bytes(it->second);
        };
        double requested = fact(0), unallocated = fact(1);
        if (unallocated < 0 && fact(2) >= 0 && fact(3) >= 0) unallocated = fact(2) - fact(3);
        if (requested < 0 || unallocated < 0) return;
        // The cache holds at least the request in free blocks, yet none fits it: fragmentation.
        facts.emplace(unallocated >= requested ? "fragmented" : "too_big", human_size(unallocated));
        return;
    }
    if (d.kind == K::CudnnDotted) {  // 7102 -> 7.1.2, 90100 -> 9.1.0
        const char* out[] = {"compiled_dotted", "runtime_dotted"};
        for (std::size_t i = 0; i < 2 && i < d.from.size(); ++i) {
            auto it = facts.find(d.from[i]);
            if (it == facts.end()) continue;
            auto v = Version::parse(it->second);
            if (v && v->parts().size() == 1 && v->major() >= 1000)
                facts.emplace(out[i], cudnn_version_from_int(v->major()));
        }
        return;
    }
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
                    facts.emplace("min_driver",
                                  kb.min_driver_unconfirmed(mm) ? floor + ", unconfirmed" : floor);
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
        case K::OomSplit:
        case K::CudnnDotted:
            return;  // handled above: they read several facts
        case K::NvccForArch: {
            auto arch = Version::parse(in);
            if (!arch || arch->parts().size() != 1) return;
            std::vector<std::string> have;
            for (const auto& mm : known_cuda_minors(kb))
                if (const CudaMinor* c = kb.cuda(mm))
                    if (std::find(c->sm.begin(), c->sm.end(), arch->major()) != c->sm.end())
                        have.push_back(mm);
            std::sort(have.begin(), have.end(), [](const std::string& a, const std::string& b) {
                auto va = Version::parse(a), vb = Version::parse(b);
                return va && vb ? *va < *vb : a < b;
            });
            if (have.empty()) return;
            facts.emplace("arch_cuda",
                          have.size() == 1 ? have.front() : have.front() + " to " + have.back());
            return;
        }
        case K::GlibcDistros: {  // "GLIBC_2.34" -> the OSes whose glibc is >= 2.34
            auto need = Version::parse(in.rfind("GLIBC_", 0) == 0 ? in.substr(6) : in);
            if (!need) return;
            std::string have;
            for (const auto& id : kb.os_ids()) {
                const OsInfo* os = kb.os(id);
                auto v = os ? Version::parse(os->glibc) : std::nullopt;
                if (!v || *v < *need) continue;
                have += (have.empty() ? "" : ", ") + id + " (glibc " + os->glibc + ")";
            }
            facts.emplace("glibc_distros", have.empty() ? "none torchdock knows" : have);
            return;
        }
        case K::Provider:  // needs ErrorSignatures::providers: LogScanner::explanations
            return;
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

}  // namespace td::explain_detail
