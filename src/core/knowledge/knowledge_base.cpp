#include "core/knowledge/knowledge_base.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "util/strings.hpp"

namespace td {
namespace {

// ordered_json keeps the order of the data files (wheel variants as published).
using json = nlohmann::ordered_json;

std::string str_or_empty(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    return it->get<std::string>();
}

std::vector<std::string> str_list(const json& j, const char* key) {
    std::vector<std::string> out;
    if (auto it = j.find(key); it != j.end() && it->is_array())
        for (const auto& x : *it) out.push_back(x.get<std::string>());
    return out;
}

void load_cuda(const json& doc, std::vector<CudaMinor>& out) {
    for (const auto& c : doc.at("cuda")) {
        CudaMinor m;
        m.version = c.at("version").get<std::string>();
        for (const auto& r : c.at("releases"))
            m.releases.push_back({r.at("version").get<std::string>(),
                                  r.at("min_driver_linux").get<std::string>(),
                                  r.value("unconfirmed", false)});
        m.minor_compat_min_driver = c.at("minor_compat_min_driver_linux").get<std::string>();
        m.sm = c.at("sm").get<std::vector<int>>();
        m.cudart_soname = c.at("cudart_soname").get<std::string>();
        out.push_back(std::move(m));
    }
}

void load_gpus(const json& doc, std::vector<GpuModel>& out) {
    for (const auto& g : doc.at("gpus")) {
        GpuModel m;
        m.model = g.at("model").get<std::string>();
        m.aliases = str_list(g, "aliases");
        m.cc = g.at("cc").get<std::string>();
        m.datacenter = g.value("datacenter", false);
        if (auto it = g.find("peak_tflops"); it != g.end())
            for (const auto& [k, v] : it->items())
                if (v.is_number()) m.peak_tflops[k] = v.get<double>();
        out.push_back(std::move(m));
    }
}

void load_torch(const json& doc, std::vector<TorchRelease>& out) {
    for (const auto& t : doc.at("torch")) {
        TorchRelease r;
        r.version = t.at("version").get<std::string>();
        r.python_min = t.at("python").at("min").get<std::string>();
        r.python_max = t.at("python").at("max").get<std::string>();
        r.python_free_threaded = str_list(t.at("python"), "free_threaded");
        r.glibc = str_or_empty(t, "glibc");
        r.torchvision = str_or_empty(t, "torchvision");
        r.torchaudio = str_or_empty(t, "torchaudio");
        r.pypi_variant = str_or_empty(t, "default_variant");
        for (const auto& [name, v] : t.at("variants").items()) {
            TorchVariant var;
            var.name = name;
            var.cuda = str_or_empty(v, "cuda");
            var.cuda_runtime = str_or_empty(v, "cuda_runtime");
            var.cublas = str_or_empty(v, "cublas");
            var.unconfirmed = v.value("unconfirmed", false);
            var.cudnn = str_or_empty(v, "cudnn");
            var.nccl = str_or_empty(v, "nccl");
            var.arch_list = str_list(v, "arch_list");
            r.variants.push_back(std::move(var));
        }
        out.push_back(std::move(r));
    }
}

void load_images(const json& doc, std::vector<CudaImageRelease>& cuda,
                 std::vector<PytorchImageTag>& pytorch, std::vector<NgcRelease>& ngc) {
    for (const auto& r : doc.at("nvidia_cuda").at("releases")) {
        CudaImageRelease c;
        c.cuda = r.at("cuda").get<std::string>();
        auto version = Version::parse(c.cuda);
        if (!version)
            throw std::invalid_argument("nvidia_cuda release " + c.cuda + " is not a version");
        c.cuda_major_minor = version->major_minor();
        c.os = str_list(r, "os");
        c.cudnn_os = r.contains("cudnn_os") ? str_list(r, "cudnn_os") : c.os;
        c.cudnn_tag = str_or_empty(r, "cudnn_tag");
        c.cudnn = str_or_empty(r, "cudnn");
        cuda.push_back(std::move(c));
    }
    for (const auto& t : doc.at("pytorch_pytorch").at("tags")) {
        PytorchImageTag p;
        p.torch = t.at("torch").get<std::string>();
        p.cuda = t.at("cuda").get<std::string>();
        p.cudnn_major = t.at("cudnn_major").get<int>();
        p.python = str_or_empty(t, "python");
        p.flavors = str_list(t, "flavors");
        pytorch.push_back(std::move(p));
    }
    for (const auto& r : doc.at("ngc_pytorch").at("releases")) {
        NgcRelease n;
        n.release = r.at("release").get<std::string>();
        n.torch = str_or_empty(r, "torch");
        n.cuda = str_or_empty(r, "cuda");
        n.cudnn = str_or_empty(r, "cudnn");
        n.nccl = str_or_empty(r, "nccl");
        n.python = str_or_empty(r, "python");
        n.ubuntu = str_or_empty(r, "ubuntu");
        n.min_driver = str_or_empty(r, "min_driver_linux");
        n.unconfirmed = r.value("unconfirmed", false);
        ngc.push_back(std::move(n));
    }
}

void load_os(const json& doc, std::vector<OsInfo>& out) {
    for (const auto& o : doc.at("os")) {
        OsInfo i;
        i.id = o.at("id").get<std::string>();
        i.family = o.at("family").get<std::string>();
        i.image = o.at("image").get<std::string>();
        i.python = o.at("python").get<std::string>();
        i.glibc = str_or_empty(o, "glibc");
        if (auto it = o.find("apt_pins"); it != o.end())
            i.apt_pins = it->get<std::map<std::string, std::string>>();
        if (auto it = o.find("distro_torch"); it != o.end())
            i.distro_torch = it->get<std::map<std::string, std::string>>();
        out.push_back(std::move(i));
    }
}

bool cc_parts(const std::string& cc, int& major, int& minor) {
    auto v = Version::parse(cc);
    if (!v || v->parts().size() != 2) return false;
    major = v->major();
    minor = v->minor();
    return true;
}

}  // namespace

const std::vector<std::string>& KnowledgeBase::file_names() {
    static const std::vector<std::string> names = {"cuda.json", "gpus.json", "torch.json",
                                                   "images.json", "os.json"};
    return names;
}

Result<KnowledgeBase> KnowledgeBase::parse(const std::map<std::string, std::string>& files) {
    KnowledgeBase kb;
    for (const auto& name : file_names()) {
        auto it = files.find(name);
        if (it == files.end())
            return Error{ErrorKind::Config, "knowledge base file " + name + " is missing"};
        try {
            json doc = json::parse(it->second);
            if (doc.value("schema", 0) != 1)
                return Error{ErrorKind::Config, name + ": unsupported knowledge base schema"};
            if (name == "cuda.json")
                load_cuda(doc, kb.m_cuda);
            else if (name == "gpus.json")
                load_gpus(doc, kb.m_gpus);
            else if (name == "torch.json")
                load_torch(doc, kb.m_torch);
            else if (name == "images.json")
                load_images(doc, kb.m_cuda_images, kb.m_pytorch_images, kb.m_ngc);
            else
                load_os(doc, kb.m_os);
        } catch (const std::exception& e) {
            return Error{ErrorKind::Config, "knowledge base file " + name + ": " + e.what()};
        }
    }
    for (std::size_t i = 0; i < kb.m_gpus.size(); ++i) {
        kb.m_gpu_by_name.emplace(to_lower(kb.m_gpus[i].model), i);
        for (const auto& a : kb.m_gpus[i].aliases) kb.m_gpu_by_name.emplace(to_lower(a), i);
    }
    return kb;
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
