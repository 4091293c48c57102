// The knowledge base's lookups (a torch release, a CUDA minor, a GPU, an OS, an image), the
// answers derived from them (driver floors, the first torch for a Python or a CUDA) and the
// compute-capability helpers; parsing and validating the data files is knowledge_base.cpp.
#include <algorithm>

#include "core/knowledge/knowledge_base.hpp"
#include "util/strings.hpp"

namespace td {

bool is_torch_platform(const std::string& platform) { return platform == "linux/arm64"; }

const TorchPlatformBuild* TorchRelease::platform(const std::string& name) const {
    for (const auto& p : platforms)
        if (p.platform == name) return &p;
    return nullptr;
}

const TorchVariant* TorchPlatformBuild::default_build() const {
    for (const auto& v : variants)
        if (v.name == variant) return &v;
    return nullptr;
}

const TorchVariant* TorchRelease::variant(const std::string& name) const {
    for (const auto& v : variants)
        if (v.name == name) return &v;
    return nullptr;
}

std::vector<std::string> TorchRelease::variant_names() const {
    std::vector<std::string> out;
    for (const auto& v : variants) out.push_back(v.name);
    return out;
}

const TorchRelease* KnowledgeBase::torch(const std::string& version) const {
    for (const auto& t : m_torch)
        if (t.version == version) return &t;
    return nullptr;
}

const CudaMinor* KnowledgeBase::cuda(const std::string& major_minor) const {
    for (const auto& c : m_cuda)
        if (c.version == major_minor) return &c;
    return nullptr;
}

const GpuModel* KnowledgeBase::gpu(const std::string& name) const {
    auto it = m_gpu_by_name.find(to_lower(name));
    return it == m_gpu_by_name.end() ? nullptr : &m_gpus[it->second];
}

const OsInfo* KnowledgeBase::os(const std::string& id) const {
    for (const auto& o : m_os)
        if (o.id == id) return &o;
    return nullptr;
}

const NgcRelease* KnowledgeBase::ngc(const std::string& release) const {
    for (const auto& n : m_ngc)
        if (n.release == release) return &n;
    return nullptr;
}

const PytorchImageTag* KnowledgeBase::pytorch_image(const std::string& torch_version,
                                                    const std::string& cuda_mm) const {
    for (const auto& p : m_pytorch_images)
        if (p.torch == torch_version && p.cuda == cuda_mm) return &p;
    return nullptr;
}

const CudaImageRelease* KnowledgeBase::cuda_image(const std::string& major_minor,
                                                  const std::string& os_id, bool cudnn) const {
    const CudaImageRelease* best = nullptr;
    for (const auto& c : m_cuda_images) {
        if (c.cuda_major_minor != major_minor) continue;
        const auto& oses = cudnn ? c.cudnn_os : c.os;
        if (cudnn && c.cudnn_tag.empty()) continue;
        if (std::find(oses.begin(), oses.end(), os_id) == oses.end()) continue;
        if (!best || *Version::parse(best->cuda) < *Version::parse(c.cuda)) best = &c;
    }
    return best;
}

std::string KnowledgeBase::cudart_soname(const std::string& major) const {
    std::string m = major.substr(0, major.find('.'));
    for (const auto& c : m_cuda)
        if (c.version.substr(0, c.version.find('.')) == m) return c.cudart_soname;
    return {};
}

std::string KnowledgeBase::min_driver(const std::string& major_minor) const {
    const CudaMinor* c = cuda(major_minor);
    if (!c || c->releases.empty()) return {};
    return c->releases.back().min_driver;
}

bool KnowledgeBase::min_driver_unconfirmed(const std::string& major_minor) const {
    const CudaMinor* c = cuda(major_minor);
    return c && !c->releases.empty() && c->releases.back().unconfirmed;
}

std::string KnowledgeBase::min_driver_of_release(const std::string& release,
                                                 bool* unconfirmed) const {
    auto v = Version::parse(release);
    const CudaMinor* c = v ? cuda(v->major_minor()) : nullptr;
    if (unconfirmed) *unconfirmed = false;
    if (!c || c->releases.empty()) return {};
    const CudaRelease* hit = &c->releases.back();
    for (const auto& r : c->releases)
        if (r.version == release) hit = &r;
    if (unconfirmed) *unconfirmed = hit->unconfirmed;
    return hit->min_driver;
}

std::vector<std::string> KnowledgeBase::torch_versions() const {
    std::vector<std::string> out;
    for (const auto& t : m_torch) out.push_back(t.version);
    return out;
}

std::vector<std::string> KnowledgeBase::gpu_names() const {
    std::vector<std::string> out;
    for (const auto& g : m_gpus) out.push_back(g.model);
    return out;
}

std::vector<std::string> KnowledgeBase::os_ids() const {
    std::vector<std::string> out;
    for (const auto& o : m_os) out.push_back(o.id);
    return out;
}

std::vector<std::string> KnowledgeBase::ngc_releases() const {
    std::vector<std::string> out;
    for (const auto& n : m_ngc) out.push_back(n.release);
    return out;
}

std::optional<std::string> KnowledgeBase::first_torch_for_python(const std::string& py) const {
    auto want = Version::parse(py);
    if (!want) return std::nullopt;
    for (const auto& t : m_torch) {
        auto lo = Version::parse(t.python_min), hi = Version::parse(t.python_max);
        if (lo && hi && *lo <= *want && *want <= *hi) return t.version;
    }
    return std::nullopt;
}

std::optional<std::string> KnowledgeBase::first_torch_with_cuda_on(
    const std::string& platform, const std::string& cuda_major) const {
    std::optional<Version> first;
    for (const auto& t : m_torch) {
        const TorchPlatformBuild* b = t.platform(platform);
        const TorchVariant* build = b ? b->default_build() : nullptr;
        auto v = Version::parse(t.version);
        if (build && v && !build->cuda.empty() && split(build->cuda, '.')[0] == cuda_major &&
            (!first || *v < *first))
            first = v;
    }
    return first ? std::optional(first->str()) : std::nullopt;
}

std::optional<std::string> KnowledgeBase::first_cuda_for(const std::string& cc) const {
    for (const auto& c : m_cuda)
        if (sm_list_covers(c.sm, cc)) return c.version;
    return std::nullopt;
}

std::optional<std::string> KnowledgeBase::last_cuda_for(const std::string& cc) const {
    std::optional<std::string> last;
    for (const auto& c : m_cuda)
        if (sm_list_covers(c.sm, cc)) last = c.version;
    return last;
}

std::vector<std::string> KnowledgeBase::torch_with_variant(const std::string& variant) const {
    std::vector<std::string> out;
    for (const auto& t : m_torch)
        if (t.variant(variant)) out.push_back(t.version);
    return out;
}

std::string normalize_arch(const std::string& raw) {
    std::string a = raw;
    bool ptx = false;
    std::string lower = to_lower(a);
    if (starts_with(lower, "compute_")) {
        ptx = true;
        a = a.substr(8);
    } else if (starts_with(lower, "sm_")) {
        a = a.substr(3);
    } else if (a.find('.') != std::string::npos) {
        return a;
    }
    while (!a.empty() && !std::isdigit(static_cast<unsigned char>(a.back())))
        a.pop_back();  // 90a, 100f
    if (a.size() < 2 || !std::all_of(a.begin(), a.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        }))
        return raw;
    return a.substr(0, a.size() - 1) + "." + a.substr(a.size() - 1) + (ptx ? "+PTX" : "");
}

std::string sm_name(const std::string& cc) {
    std::string s = cc;
    s.erase(std::remove(s.begin(), s.end(), '.'), s.end());
    return "sm_" + s;
}

bool arch_list_covers(const std::vector<std::string>& arch_list, const std::string& cc) {
    int major = 0, minor = 0;
    if (!cc_parts(cc, major, minor)) return false;
    for (const auto& entry : arch_list) {
        bool ptx = ends_with(entry, "+PTX");
        int a_major = 0, a_minor = 0;
        if (!cc_parts(entry.substr(0, ptx ? entry.size() - 4 : entry.size()), a_major, a_minor))
            continue;
        if (a_major == major && a_minor <= minor) return true;
        if (ptx && (a_major < major || (a_major == major && a_minor <= minor))) return true;
    }
    return false;
}

bool sm_list_covers(const std::vector<int>& sm, const std::string& cc) {
    int major = 0, minor = 0;
    if (!cc_parts(cc, major, minor)) return false;
    for (int s : sm)
        if (s / 10 == major && s % 10 <= minor) return true;
    return false;
}

}  // namespace td
