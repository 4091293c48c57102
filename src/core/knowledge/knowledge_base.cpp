#include "core/knowledge/knowledge_base.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/grammar/grammar.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

// ordered_json keeps the order of the data files (wheel variants as published).
using ordered_json = nlohmann::ordered_json;

// Every string of the knowledge base that can reach a Dockerfile, a label or a report is
// checked when it is read: a bad value is an error naming its JSON path and the value.
[[noreturn]] void refuse(const std::string& path, const std::string& value,
                         const std::string& why) {
    throw std::invalid_argument(path + ": " + quote_value(value, 120) + " refused: " + why);
}

using Check = std::string (*)(std::string_view);

std::string check_text(std::string_view s) { return grammar::check_plain_text(s, 200); }

bool digits(std::string_view s) {
    return !s.empty() && s.size() <= 9 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "N.N" (a CUDA major.minor, a compute capability, a Python minor, a glibc version).
std::string check_major_minor(std::string_view s) {
    auto dot = s.find('.');
    if (dot == std::string_view::npos || !digits(s.substr(0, dot)) || !digits(s.substr(dot + 1)))
        return "not MAJOR.MINOR (digits, one dot: \"12.4\")";
    return {};
}

// "12.4.1", "11.8.0": dotted numbers, 2 to 4 parts.
std::string check_dotted(std::string_view s) {
    auto parts = split(std::string(s), '.');
    if (parts.size() < 2 || parts.size() > 4 ||
        !std::all_of(parts.begin(), parts.end(), [](const std::string& p) { return digits(p); }))
        return "not a dotted version (2 to 4 numbers: \"12.4.1\")";
    return {};
}

// A driver version ("550.54.15") or a driver branch ("580").
std::string check_driver(std::string_view s) {
    if (digits(s)) return {};
    auto parts = split(std::string(s), '.');
    if (parts.size() > 3 || !check_dotted(s).empty())
        return "not a driver version (\"550.54.15\") or branch (\"580\")";
    return {};
}

// A word inside an image tag or a name: [a-z0-9][a-z0-9._-]*, at most 64 characters
// ("ubuntu22.04", "cudnn9", "cu128", "devel", "24.05").
std::string check_tag_word(std::string_view s) {
    if (s.empty() || s.size() > 64) return "empty or longer than 64 characters";
    auto ok = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    };
    if (!ok(s[0]) || s[0] == '.' || s[0] == '_' || s[0] == '-' ||
        !std::all_of(s.begin(), s.end(), ok))
        return "not a tag word ([a-z0-9][a-z0-9._-]*)";
    return {};
}

// "libcudart.so.12"
std::string check_soname(std::string_view s) {
    auto ok = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-' || c == '+';
    };
    if (!starts_with(s, "lib") || s.size() > 64 || !std::all_of(s.begin(), s.end(), ok))
        return "not a library file name (lib[A-Za-z0-9._+-]*)";
    return {};
}

// An arch list entry: "8.0" or "9.0+PTX".
std::string check_arch_entry(std::string_view s) {
    std::string_view cc = ends_with(s, "+PTX") ? s.substr(0, s.size() - 4) : s;
    if (!check_major_minor(cc).empty()) return "not an arch list entry (\"8.0\" or \"9.0+PTX\")";
    return {};
}

// "3.13t"
std::string check_free_threaded(std::string_view s) {
    if (!ends_with(s, "t") || !grammar::check_python_minor(s.substr(0, s.size() - 1)).empty())
        return "not a free-threaded CPython version (\"3.13t\")";
    return {};
}

// A torch wheel variant: "cpu" or "cuNNN".
std::string check_variant(std::string_view s) {
    if (s == "cpu" || (starts_with(s, "cu") && s.size() <= 6 && digits(s.substr(2)))) return {};
    return "not a wheel variant (\"cpu\" or \"cu\" and digits: \"cu128\")";
}

std::string check_version(std::string_view s) { return grammar::check_pep440_version(s); }

// cuBLAS and the CUDA runtime may be recorded as the version range the cuda-toolkit
// meta-package names ("<=13.1.1.3,>=13.1.0.3"): they never reach a Dockerfile, and such a
// range is only digits, dots, commas and comparison operators.
std::string check_version_or_range(std::string_view s) {
    if (grammar::check_pep440_version(s).empty()) return {};
    bool ok = !s.empty() && s.size() <= 200 && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= '0' && c <= '9') || c == '.' || c == ',' || c == '<' || c == '>' || c == '=' ||
               c == '!' || c == '~' || c == '*';
    });
    for (const auto& clause : split(std::string(s), ','))
        if (clause.find_first_of("0123456789") == std::string::npos) ok = false;
    return ok ? std::string()
              : "not a PEP 440 version (\"12.8.90\") or a range of them "
                "(\"<=13.1.1.3,>=13.1.0.3\")";
}

std::string check_image(std::string_view s) { return grammar::check_image_reference(s); }

std::string check_debian(std::string_view s) { return grammar::check_debian_version(s); }

std::string check_apt_name(std::string_view s) {
    // A Debian package name: the name part of an apt requirement.
    return grammar::check_apt_requirement(std::string(s) + "=0");
}

// distro_torch: versions ("1.13.1", "1.13.0a0") and the package name ("python3-torch").
std::string check_distro_value(std::string_view s) {
    if (grammar::check_pep440_version(s).empty() || check_apt_name(s).empty()) return {};
    return "neither a PEP 440 version nor a Debian package name";
}

const ordered_json* member(const ordered_json& j, const char* key) {
    if (!j.is_object()) return nullptr;
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
}

std::string child(const std::string& path, const char* key) { return path + "." + key; }
std::string child(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

// A required string at `path` that passes `check`.
std::string str(const ordered_json& j, const char* key, const std::string& path, Check check) {
    const ordered_json* v = member(j, key);
    if (!v) throw std::invalid_argument(child(path, key) + ": missing");
    if (!v->is_string()) throw std::invalid_argument(child(path, key) + ": not a string");
    std::string s = v->get<std::string>();
    if (auto why = check(s); !why.empty()) refuse(child(path, key), s, why);
    return s;
}

// An optional string (absent or null: empty).
std::string str_or_empty(const ordered_json& j, const char* key, const std::string& path,
                         Check check) {
    const ordered_json* v = member(j, key);
    if (!v || v->is_null()) return {};
    return str(j, key, path, check);
}

std::vector<std::string> str_list(const ordered_json& j, const char* key, const std::string& path,
                                  Check check) {
    std::vector<std::string> out;
    const ordered_json* v = member(j, key);
    if (!v || v->is_null()) return out;
    if (!v->is_array()) throw std::invalid_argument(child(path, key) + ": not a list");
    for (std::size_t i = 0; i < v->size(); ++i) {
        const ordered_json& x = (*v)[i];
        std::string at = child(child(path, key), i);
        if (!x.is_string()) throw std::invalid_argument(at + ": not a string");
        std::string s = x.get<std::string>();
        if (auto why = check(s); !why.empty()) refuse(at, s, why);
        out.push_back(std::move(s));
    }
    return out;
}

const ordered_json& list_at(const ordered_json& j, const char* key, const std::string& path) {
    const ordered_json* v = member(j, key);
    if (!v || !v->is_array()) throw std::invalid_argument(child(path, key) + ": not a list");
    return *v;
}

const ordered_json& object_at(const ordered_json& j, const char* key, const std::string& path) {
    const ordered_json* v = member(j, key);
    if (!v || !v->is_object()) throw std::invalid_argument(child(path, key) + ": not an object");
    return *v;
}

bool flag(const ordered_json& j, const char* key, const std::string& path) {
    const ordered_json* v = member(j, key);
    if (!v || v->is_null()) return false;
    if (!v->is_boolean()) throw std::invalid_argument(child(path, key) + ": not true or false");
    return v->get<bool>();
}

void load_cuda(const ordered_json& doc, std::vector<CudaMinor>& out) {
    const ordered_json& list = list_at(doc, "cuda", "$");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const ordered_json& c = list[i];
        std::string at = child("$.cuda", i);
        CudaMinor m;
        m.version = str(c, "version", at, check_major_minor);
        const ordered_json& releases = list_at(c, "releases", at);
        for (std::size_t k = 0; k < releases.size(); ++k) {
            const ordered_json& r = releases[k];
            std::string rat = child(child(at, "releases"), k);
            m.releases.push_back({str(r, "version", rat, check_dotted),
                                  str(r, "min_driver_linux", rat, check_driver),
                                  flag(r, "unconfirmed", rat)});
        }
        m.minor_compat_min_driver = str(c, "minor_compat_min_driver_linux", at, check_driver);
        m.sm = c.at("sm").get<std::vector<int>>();
        m.cudart_soname = str(c, "cudart_soname", at, check_soname);
        out.push_back(std::move(m));
    }
}

void load_gpus(const ordered_json& doc, std::vector<GpuModel>& out) {
    const ordered_json& list = list_at(doc, "gpus", "$");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const ordered_json& g = list[i];
        std::string at = child("$.gpus", i);
        GpuModel m;
        m.model = str(g, "model", at, check_text);
        m.aliases = str_list(g, "aliases", at, check_text);
        m.cc = str(g, "cc", at, check_major_minor);
        m.datacenter = flag(g, "datacenter", at);
        if (auto it = g.find("peak_tflops"); it != g.end())
            for (const auto& [k, v] : it->items())
                if (v.is_number()) m.peak_tflops[k] = v.get<double>();
        out.push_back(std::move(m));
    }
}

// A release's (or a platform build's) "variants" object.
std::vector<TorchVariant> load_variants(const ordered_json& t, const std::string& at) {
    std::vector<TorchVariant> out;
    std::string vat = child(at, "variants");
    for (const auto& [name, v] : object_at(t, "variants", at).items()) {
        if (auto why = check_variant(name); !why.empty()) refuse(vat + " key", name, why);
        std::string nat = vat + "." + name;
        TorchVariant var;
        var.name = name;
        var.cuda = str_or_empty(v, "cuda", nat, check_major_minor);
        var.cuda_runtime = str_or_empty(v, "cuda_runtime", nat, check_version_or_range);
        var.cublas = str_or_empty(v, "cublas", nat, check_version_or_range);
        var.unconfirmed = flag(v, "unconfirmed", nat);
        var.cudnn = str_or_empty(v, "cudnn", nat, check_version);
        var.nccl = str_or_empty(v, "nccl", nat, check_version);
        var.arch_list = str_list(v, "arch_list", nat, check_arch_entry);
        out.push_back(std::move(var));
    }
    return out;
}

void load_torch(const ordered_json& doc, std::vector<TorchRelease>& out) {
    const ordered_json& list = list_at(doc, "torch", "$");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const ordered_json& t = list[i];
        std::string at = child("$.torch", i);
        TorchRelease r;
        r.version = str(t, "version", at, check_version);
        const ordered_json& py = object_at(t, "python", at);
        std::string pat = child(at, "python");
        r.python_min = str(py, "min", pat, grammar::check_python_minor);
        r.python_max = str(py, "max", pat, grammar::check_python_minor);
        r.python_free_threaded = str_list(py, "free_threaded", pat, check_free_threaded);
        r.glibc = str_or_empty(t, "glibc", at, check_major_minor);
        r.torchvision = str_or_empty(t, "torchvision", at, check_version);
        r.torchaudio = str_or_empty(t, "torchaudio", at, check_version);
        r.pypi_variant = str_or_empty(t, "default_variant", at, check_variant);
        r.variants = load_variants(t, at);
        if (auto it = t.find("platforms"); it != t.end()) {
            std::string plat = child(at, "platforms");
            if (!it->is_object()) refuse(plat, it->dump(), "not an object");
            for (const auto& [name, p] : it->items()) {
                if (!is_torch_platform(name))
                    refuse(plat + " key", name, "not a platform torch.json knows (linux/arm64)");
                std::string nat = plat + "." + name;
                if (!p.is_object()) refuse(nat, p.dump(), "not an object");
                TorchPlatformBuild b;
                b.platform = name;
                b.variant = str_or_empty(p, "default_variant", nat, check_variant);
                b.glibc = str_or_empty(p, "glibc", nat, check_major_minor);
                if (p.contains("variants")) b.variants = load_variants(p, nat);
                r.platforms.push_back(std::move(b));
            }
        }
        out.push_back(std::move(r));
    }
}

// The tags the renderer composes from these facts pass the image-reference grammar too.
void check_composed(const std::string& path, const std::string& ref) {
    if (auto why = grammar::check_image_reference(ref); !why.empty())
        refuse(path, ref, "the image reference it makes is not valid: " + why);
}

void load_images(const ordered_json& doc, std::vector<CudaImageRelease>& cuda,
                 std::vector<PytorchImageTag>& pytorch, std::vector<NgcRelease>& ngc) {
    const ordered_json& nv = object_at(doc, "nvidia_cuda", "$");
    const ordered_json& nv_list = list_at(nv, "releases", "$.nvidia_cuda");
    for (std::size_t i = 0; i < nv_list.size(); ++i) {
        const ordered_json& r = nv_list[i];
        std::string at = child("$.nvidia_cuda.releases", i);
        CudaImageRelease c;
        c.cuda = str(r, "cuda", at, check_dotted);
        auto version = Version::parse(c.cuda);
        if (!version) refuse(child(at, "cuda"), c.cuda, "not a version");
        c.cuda_major_minor = version->major_minor();
        c.os = str_list(r, "os", at, check_tag_word);
        c.cudnn_os = r.contains("cudnn_os") ? str_list(r, "cudnn_os", at, check_tag_word) : c.os;
        c.cudnn_tag = str_or_empty(r, "cudnn_tag", at, check_tag_word);
        c.cudnn = str_or_empty(r, "cudnn", at, check_version);
        for (const auto& os : c.os)
            check_composed(at, "nvidia/cuda:" + c.cuda + "-" +
                                   (c.cudnn_tag.empty() ? "" : c.cudnn_tag + "-") + "devel-" + os);
        cuda.push_back(std::move(c));
    }
    const ordered_json& pt = object_at(doc, "pytorch_pytorch", "$");
    const ordered_json& pt_list = list_at(pt, "tags", "$.pytorch_pytorch");
    for (std::size_t i = 0; i < pt_list.size(); ++i) {
        const ordered_json& t = pt_list[i];
        std::string at = child("$.pytorch_pytorch.tags", i);
        PytorchImageTag p;
        p.torch = str(t, "torch", at, check_version);
        p.cuda = str(t, "cuda", at, check_major_minor);
        p.cudnn_major = t.at("cudnn_major").get<int>();
        p.python = str_or_empty(t, "python", at, grammar::check_python_minor);
        p.flavors = str_list(t, "flavors", at, check_tag_word);
        for (const auto& f : p.flavors)
            check_composed(at, "pytorch/pytorch:" + p.torch + "-cuda" + p.cuda + "-cudnn" +
                                   std::to_string(p.cudnn_major) + "-" + f);
        pytorch.push_back(std::move(p));
    }
    const ordered_json& ng = object_at(doc, "ngc_pytorch", "$");
    const ordered_json& ng_list = list_at(ng, "releases", "$.ngc_pytorch");
    for (std::size_t i = 0; i < ng_list.size(); ++i) {
        const ordered_json& r = ng_list[i];
        std::string at = child("$.ngc_pytorch.releases", i);
        NgcRelease n;
        n.release = str(r, "release", at, check_tag_word);
        n.torch = str_or_empty(r, "torch", at, check_version);
        n.cuda = str_or_empty(r, "cuda", at, check_dotted);
        n.cudnn = str_or_empty(r, "cudnn", at, check_version);
        n.nccl = str_or_empty(r, "nccl", at, check_version);
        n.python = str_or_empty(r, "python", at, grammar::check_python_minor);
        n.ubuntu = str_or_empty(r, "ubuntu", at, check_major_minor);
        n.min_driver = str_or_empty(r, "min_driver_linux", at, check_driver);
        n.unconfirmed = flag(r, "unconfirmed", at);
        check_composed(child(at, "release"), "nvcr.io/nvidia/pytorch:" + n.release + "-py3");
        ngc.push_back(std::move(n));
    }
}

void load_os(const ordered_json& doc, std::vector<OsInfo>& out) {
    const ordered_json& list = list_at(doc, "os", "$");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const ordered_json& o = list[i];
        std::string at = child("$.os", i);
        OsInfo info;
        info.id = str(o, "id", at, check_tag_word);
        info.family = str(o, "family", at, check_tag_word);
        info.image = str(o, "image", at, check_image);
        info.python = str(o, "python", at, grammar::check_python_minor);
        info.glibc = str_or_empty(o, "glibc", at, check_major_minor);
        auto string_map = [&](const char* key, Check key_check, Check value_check) {
            std::map<std::string, std::string> m;
            std::string mat = child(at, key);
            for (const auto& [k, v] : object_at(o, key, at).items()) {
                if (auto why = key_check(k); !why.empty()) refuse(mat + " key", k, why);
                if (!v.is_string()) throw std::invalid_argument(mat + "." + k + ": not a string");
                std::string s = v.get<std::string>();
                if (auto why = value_check(s); !why.empty()) refuse(mat + "." + k, s, why);
                m[k] = s;
            }
            return m;
        };
        if (o.contains("apt_pins"))
            info.apt_pins = string_map("apt_pins", check_apt_name, check_debian);
        if (o.contains("distro_torch"))
            info.distro_torch = string_map("distro_torch", check_tag_word, check_distro_value);
        out.push_back(std::move(info));
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

std::string check_torch_fact(const std::string& path, const std::string& value) {
    // Another platform's build: the same facts as the release's own, but no Python range.
    const std::string platforms = "platforms.";
    if (starts_with(path, platforms)) {
        auto dot = path.find('.', platforms.size());
        std::string platform = path.substr(platforms.size(), dot - platforms.size());
        if (dot == std::string::npos || !is_torch_platform(platform))
            return "not a platform torch.json knows (" + quote_value(platform) +
                   "; known: linux/arm64)";
        std::string rest = path.substr(dot + 1);
        if (starts_with(rest, "python"))
            return "not a fact of a platform (" + quote_value(rest) + ")";
        return check_torch_fact(rest, value);
    }
    auto parts = split(path, '.');
    Check check = nullptr;
    bool nullable = false;
    if (path == "python.min" || path == "python.max") {
        check = grammar::check_python_minor;
    } else if (path == "python.free_threaded") {
        check = check_free_threaded;
    } else if (path == "glibc") {
        check = check_major_minor, nullable = true;
    } else if (path == "torchvision" || path == "torchaudio") {
        check = check_version, nullable = true;
    } else if (path == "default_variant") {
        check = check_variant, nullable = true;
    } else if (parts.size() == 3 && parts[0] == "variants") {
        if (auto why = check_variant(parts[1]); !why.empty())
            return "variant " + quote_value(parts[1]) + ": " + why;
        const std::string& key = parts[2];
        nullable = true;
        if (key == "cuda")
            check = check_major_minor;
        else if (key == "cuda_runtime" || key == "cublas")
            check = check_version_or_range;
        else if (key == "cudnn" || key == "nccl")
            check = check_version;
        else if (key == "arch_list")
            check = check_arch_entry;
    }
    if (!check) return "not a fact torch.json has (" + quote_value(path) + ")";
    if (value.empty()) return nullable ? std::string() : "empty";
    return check(value);
}

const std::vector<std::string>& KnowledgeBase::file_names() {
    static const std::vector<std::string> names = {"cuda.json",   "gpus.json", "torch.json",
                                                   "images.json", "os.json",   "extensions.json"};
    return names;
}

Result<KnowledgeBase> KnowledgeBase::parse(const std::map<std::string, std::string>& files) {
    KnowledgeBase kb;
    for (const auto& name : file_names()) {
        auto it = files.find(name);
        if (it == files.end() && name == "extensions.json") continue;  // no extension facts
        if (it == files.end())
            return Error{ErrorKind::Config, "knowledge base file " + name + " is missing"};
        if (name == "extensions.json") {
            auto facts = parse_extension_facts(it->second);
            if (!facts) return facts.error();
            kb.m_extensions = std::move(facts.value());
            continue;
        }
        try {
            ordered_json doc = ordered_json::parse(it->second);
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

}  // namespace td
