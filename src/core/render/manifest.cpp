#include "core/render/manifest.hpp"

#include <algorithm>

#include "core/grammar/grammar.hpp"
#include "core/json/json_reader.hpp"
#include "core/render/platforms.hpp"
#include "core/validate/waivers.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

struct BaseKindName {
    BaseKind kind;
    const char* name;
};
constexpr BaseKindName k_base_kinds[] = {
    {BaseKind::NvidiaCuda, "nvidia-cuda"}, {BaseKind::NvidiaCudaCudnn, "nvidia-cuda-cudnn"},
    {BaseKind::Pytorch, "pytorch"},        {BaseKind::Ngc, "ngc"},
    {BaseKind::OsPip, "os-pip"},           {BaseKind::DebianTorch, "debian-torch"},
};

const std::vector<std::string> k_top_keys = {
    "schema",      "name",        "description", "image",       "base",   "matrix",
    "python",      "torchvision", "torchaudio",  "pip",         "apt",    "openmpi",
    "jupyter",     "user",        "env",         "target_gpus", "expect", "validate",
    "wheel_index", "waivers",     "extensions",  "platforms"};
const std::vector<std::string> k_matrix_keys = {"torch", "cuda", "flavor", "os", "ngc", "exclude"};
const std::vector<std::string> k_axis_keys = {"torch", "cuda", "flavor", "os", "ngc"};
const std::vector<std::string> k_precisions = {"fp32", "tf32", "fp16", "bf16", "fp8"};

// Which matrix axes each base kind takes, and which it requires.
struct AxisRule {
    std::vector<std::string> allowed;
    std::vector<std::string> required;
};
AxisRule axes_for(BaseKind kind) {
    switch (kind) {
        case BaseKind::NvidiaCuda:
        case BaseKind::NvidiaCudaCudnn:
            return {{"torch", "cuda", "flavor", "os"}, {"torch", "cuda", "flavor", "os"}};
        case BaseKind::Pytorch:
            return {{"torch", "cuda", "flavor"}, {"torch", "cuda", "flavor"}};
        case BaseKind::Ngc:
            return {{"ngc"}, {"ngc"}};
        case BaseKind::OsPip:
            return {{"torch", "cuda", "os"}, {"torch", "cuda", "os"}};
        case BaseKind::DebianTorch:
            return {{"os"}, {"os"}};
    }
    return {};
}

std::string check_torch_version(std::string_view s) {
    if (!Version::parse(s) || Version::parse(s)->parts().size() != 3)
        return "torch version " + quote_value(s) + " is not X.Y.Z (like \"2.4.1\")";
    return {};
}
std::string check_cuda_variant(std::string_view s) {
    if (s == "cpu") return {};
    if (s.size() >= 5 && s.size() <= 6 && s.starts_with("cu")) {
        bool digits = true;
        for (char c : s.substr(2)) digits = digits && c >= '0' && c <= '9';
        if (digits) return {};
    }
    return "CUDA variant " + quote_value(s) +
           " is not a wheel variant name (like \"cu121\", \"cu130\" or \"cpu\")";
}
std::string check_flavor(std::string_view s) {
    if (s == "runtime" || s == "devel") return {};
    return "flavor " + quote_value(s) + " is not \"runtime\" or \"devel\"";
}
std::string check_os(std::string_view s) {
    if (s.size() > 20) return "OS " + quote_value(s) + " is too long";
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.'))
            return "OS " + quote_value(s) + " is not like \"ubuntu22.04\" or \"debian12\"";
    if (s.empty()) return "empty OS";
    return {};
}
std::string check_ngc_release(std::string_view s) {
    if (s.size() == 5 && s[2] == '.') {
        bool ok = true;
        for (std::size_t i : {0, 1, 3, 4}) ok = ok && s[i] >= '0' && s[i] <= '9';
        if (ok) return {};
    }
    return "NGC release " + quote_value(s) + " is not YY.MM (like \"24.05\")";
}
std::string check_gpu_name(std::string_view s) {
    return grammar::check_plain_text(s, 64).empty() && !s.empty()
               ? std::string()
               : "GPU model " + quote_value(s) + " is not a model name like \"H100\"";
}

std::function<std::string(std::string_view)> axis_checker(const std::string& axis) {
    if (axis == "torch") return check_torch_version;
    if (axis == "cuda") return check_cuda_variant;
    if (axis == "flavor") return check_flavor;
    if (axis == "os") return check_os;
    return check_ngc_release;
}

class ManifestParser {
  public:
    ManifestParser(Manifest& m, Diagnostics& diags) : m_m(m), m_r(diags, m.positions) {}

    void parse(const JsonValue& root) {
        if (!m_r.check_object(root, "$", k_top_keys, {"schema", "name", "image", "base", "matrix"}))
            return;
        check_schema_one(m_r, root, "");
        text_field(root, "name", m_m.name, grammar::check_family_name);
        text_field(root, "description", m_m.description,
                   [](std::string_view s) { return grammar::check_plain_text(s, 300); });
        text_field(root, "image", m_m.image, grammar::check_image_repository);
        bool base_ok = false;
        if (auto* v = root.find("base")) {
            if (auto s = m_r.choice(*v, "$.base", base_kind_names())) {
                for (const auto& b : k_base_kinds)
                    if (*s == b.name) m_m.base = b.kind;
                base_ok = true;
            }
        }
        if (auto* v = root.find("wheel_index"))
            if (auto s = m_r.choice(*v, "$.wheel_index", {"pytorch", "pypi"}))
                m_m.wheel_index = *s == "pypi" ? WheelIndex::Pypi : WheelIndex::Pytorch;
        if (auto* v = root.find("matrix")) parse_matrix(*v, base_ok);
        if (auto* v = root.find("platforms"))
            if (auto p = m_r.string_list(*v, "$.platforms", check_build_platform); !p.empty())
                m_m.platforms = std::move(p);
        if (auto* v = root.find("python")) {
            if (auto s = m_r.string(*v, "$.python")) {
                if (auto e = grammar::check_python_minor(*s); !e.empty())
                    m_r.error(*v, "$.python", e);
                else
                    m_m.python = *s;
            }
        }
        bool_field(root, "torchvision", m_m.torchvision);
        bool_field(root, "torchaudio", m_m.torchaudio);
        if (auto* v = root.find("pip"))
            m_m.pip = m_r.string_list(*v, "$.pip", grammar::check_pip_requirement, true);
        if (auto* v = root.find("apt")) parse_apt(*v);
        optional_text(root, "openmpi", m_m.openmpi, grammar::check_debian_version);
        optional_text(root, "jupyter", m_m.jupyter, grammar::check_pep440_version);
        if (auto* v = root.find("user")) parse_user(*v);
        if (auto* v = root.find("env")) parse_env(*v);
        if (auto* v = root.find("target_gpus"))
            m_m.target_gpus = m_r.string_list(*v, "$.target_gpus", check_gpu_name, true);
        if (auto* v = root.find("extensions")) m_m.extensions = parse_extensions(m_r, *v);
        if (auto* v = root.find("expect")) parse_expect(*v);
        if (auto* v = root.find("validate")) parse_validate(*v);
        if (auto* v = root.find("waivers")) parse_waivers(*v);
        check_base_rules(root);
    }

  private:
    Manifest& m_m;
    JsonReader m_r;

    void text_field(const JsonValue& obj, const char* key, std::string& out,
                    const std::function<std::string(std::string_view)>& check) {
        auto* v = obj.find(key);
        if (!v) return;
        std::string path = std::string("$.") + key;
        auto s = m_r.string(*v, path);
        if (!s) return;
        if (auto e = check(*s); !e.empty()) return m_r.error(*v, path, e);
        out = *s;
    }
    void optional_text(const JsonValue& obj, const char* key, std::optional<std::string>& out,
                       const std::function<std::string(std::string_view)>& check) {
        std::string tmp;
        if (!obj.find(key)) return;
        std::size_t before = m_r.diags().count();
        text_field(obj, key, tmp, check);
        if (m_r.diags().count() == before) out = tmp;
    }
    void bool_field(const JsonValue& obj, const char* key, bool& out) {
        if (auto* v = obj.find(key))
            if (auto b = m_r.boolean(*v, std::string("$.") + key)) out = *b;
    }

    std::vector<std::string>* axis(const std::string& name) {
        if (name == "torch") return &m_m.torch;
        if (name == "cuda") return &m_m.cuda;
        if (name == "flavor") return &m_m.flavor;
        if (name == "os") return &m_m.os;
        return &m_m.ngc;
    }

    void parse_matrix(const JsonValue& v, bool base_ok) {
        if (!m_r.check_object(v, "$.matrix", k_matrix_keys)) return;
        AxisRule rule = axes_for(m_m.base);
        for (const auto& name : k_axis_keys) {
            const JsonValue* a = v.find(name);
            std::string path = "$.matrix." + name;
            bool allowed = false;
            for (const auto& x : rule.allowed) allowed = allowed || x == name;
            if (a && base_ok && !allowed) {
                m_r.error(*a, path,
                          "the \"" + name + "\" axis does not apply to base \"" +
                              base_kind_name(m_m.base) +
                              "\" (its axes: " + join(rule.allowed, ", ") + ")");
                continue;
            }
            if (!a) {
                bool required = false;
                for (const auto& x : rule.required) required = required || x == name;
                if (base_ok && required)
                    m_r.error(v, "$.matrix",
                              "missing axis \"" + name + "\" (base \"" + base_kind_name(m_m.base) +
                                  "\" needs " + join(rule.required, ", ") + ")");
                continue;
            }
            *axis(name) = m_r.string_list(*a, path, axis_checker(name));
        }
        if (auto* ex = v.find("exclude")) {
            if (!ex->is_array()) {
                m_r.error(*ex, "$.matrix.exclude", "expected an array of objects");
                return;
            }
            for (std::size_t i = 0; i < ex->items.size(); ++i) {
                const auto& item = ex->items[i];
                auto path = item_path("$.matrix.exclude", i);
                if (!m_r.check_object(item, path, k_axis_keys)) continue;
                if (item.members.empty())
                    m_r.error(item, path, "an empty exclude matches every variant");
                MatrixExclude rule_out;
                for (const auto& member : item.members) {
                    auto p = member_path(path, member.key);
                    auto s = m_r.string(member.value, p);
                    if (!s) continue;
                    auto* values = axis(member.key);
                    bool present = false;
                    for (const auto& x : *values) present = present || x == *s;
                    if (values->empty())
                        m_r.error(member.value, p,
                                  "matrix." + member.key + " is not an axis of this matrix");
                    else if (!present)
                        m_r.error(member.value, p,
                                  quote_value(*s) + " is not a value of matrix." + member.key +
                                      " (" + join(*values, ", ") + ")");
                    rule_out.fields[member.key] = *s;
                }
                m_m.exclude.push_back(rule_out);
            }
        }
    }

    // "apt": ["curl"] for every OS, or {"ubuntu22.04": [...], "ubuntu24.04": [...]} per OS of
    // the matrix (a pin that exists in one release's archive rarely exists in another's).
    void parse_apt(const JsonValue& v) {
        m_r.record("$.apt", v.pos);
        if (v.is_array()) {
            m_m.apt = m_r.string_list(v, "$.apt", grammar::check_apt_package, true);
            return;
        }
        if (!v.is_object())
            return m_r.error(v, "$.apt",
                             "expected a list of packages for every OS, or an object of lists "
                             "per OS of the matrix, like {\"ubuntu22.04\": [\"curl\"]}");
        for (const auto& member : v.members) {
            std::string p = member_path("$.apt", member.key);
            bool known = std::find(m_m.os.begin(), m_m.os.end(), member.key) != m_m.os.end();
            if (!known) {
                m_r.diags().add(
                    member.key_pos, p,
                    quote_value(member.key) + " is not an OS of this matrix (" +
                        (m_m.os.empty() ? std::string("it has no os axis") : join(m_m.os, ", ")) +
                        ")");
                continue;
            }
            m_m.apt_by_os[member.key] =
                m_r.string_list(member.value, p, grammar::check_apt_package, true);
        }
    }

    void parse_user(const JsonValue& v) {
        if (!m_r.check_object(v, "$.user", {"name", "uid", "gid"}, {"name"})) return;
        UserSpec u;
        bool ok = true;
        if (auto* n = v.find("name")) {
            auto s = m_r.string(*n, "$.user.name");
            if (s && grammar::check_user_name(*s).empty())
                u.name = *s;
            else {
                if (s) m_r.error(*n, "$.user.name", grammar::check_user_name(*s));
                ok = false;
            }
        }
        if (auto* n = v.find("uid")) {
            if (auto x = m_r.integer(*n, "$.user.uid", 1, 65533))
                u.uid = static_cast<int>(*x);
            else
                ok = false;
        }
        u.gid = u.uid;
        if (auto* n = v.find("gid")) {
            if (auto x = m_r.integer(*n, "$.user.gid", 1, 65533))
                u.gid = static_cast<int>(*x);
            else
                ok = false;
        }
        if (ok) m_m.user = u;
    }

    void parse_env(const JsonValue& v) {
        m_r.record("$.env", v.pos);
        if (!v.is_object()) return m_r.error(v, "$.env", "expected an object of NAME: \"value\"");
        for (const auto& member : v.members) {
            auto p = member_path("$.env", member.key);
            if (auto e = grammar::check_env_name(member.key); !e.empty()) {
                m_r.diags().add(member.key_pos, p, e);
                continue;
            }
            auto s = m_r.string(member.value, p);
            if (!s) continue;
            if (auto e = grammar::check_plain_text(*s, 4096); !e.empty()) {
                m_r.error(member.value, p, e);
                continue;
            }
            m_m.env.emplace_back(member.key, *s);
        }
    }

    void parse_expect(const JsonValue& v) {
        if (!m_r.check_object(v, "$.expect", {"cudnn_major", "nccl"})) return;
        if (auto* n = v.find("cudnn_major"))
            if (auto x = m_r.integer(*n, "$.expect.cudnn_major", 7, 20))
                m_m.expect_cudnn_major = static_cast<int>(*x);
        if (auto* n = v.find("nccl")) {
            if (auto s = m_r.string(*n, "$.expect.nccl")) {
                if (Version::parse(*s))
                    m_m.expect_nccl = *s;
                else
                    m_r.error(*n, "$.expect.nccl",
                              "NCCL version " + quote_value(*s) + " is not like \"2.21.5\"");
            }
        }
    }

    // Rendered as labels io.torchdock.waive.ID=reason, which validate applies: a check ID a
    // waiver may cover, and a reason of one printable line (core/validate/waivers).
    void parse_waivers(const JsonValue& v) {
        if (!v.is_object())
            return m_r.error(v, "$.waivers", "expected an object of ID: \"reason\"");
        for (const auto& member : v.members) {
            auto p = member_path("$.waivers", member.key);
            auto s = m_r.string(member.value, p);
            if (!s) continue;
            if (auto e = waiver_problem(member.key, *s); !e.empty())
                m_r.error(member.value, p, e);
            else
                m_m.waivers.emplace_back(member.key, *s);
        }
    }

    void parse_validate(const JsonValue& v) {
        if (!m_r.check_object(v, "$.validate",
                              {"gemm_tflops_min", "allreduce_busbw_min_gbps", "shm_min_mb"}))
            return;
        if (auto* g = v.find("gemm_tflops_min")) {
            if (m_r.check_object(*g, "$.validate.gemm_tflops_min", k_precisions))
                for (const auto& member : g->members)
                    if (auto x = m_r.number(member.value,
                                            member_path("$.validate.gemm_tflops_min", member.key),
                                            0, 100000))
                        m_m.validate.gemm_tflops_min[member.key] = *x;
        }
        if (auto* n = v.find("allreduce_busbw_min_gbps"))
            m_m.validate.allreduce_busbw_min_gbps =
                m_r.number(*n, "$.validate.allreduce_busbw_min_gbps", 0, 100000);
        if (auto* n = v.find("shm_min_mb"))
            if (auto x = m_r.integer(*n, "$.validate.shm_min_mb", 1, 1 << 24))
                m_m.validate.shm_min_mb = static_cast<int>(*x);
    }

    // Keys that make no sense for the chosen base kind are refused, not ignored.
    void check_base_rules(const JsonValue& root) {
        bool fixed_stack = m_m.base == BaseKind::Ngc || m_m.base == BaseKind::DebianTorch;
        if (m_m.base == BaseKind::Ngc) {
            for (const char* key : {"torchvision", "torchaudio"})
                if (auto* v = root.find(key))
                    m_r.error(
                        *v, std::string("$.") + key,
                        "an NGC image ships its own torchvision/torchaudio; leave this key out");
        }
        bool pip_torch = m_m.base == BaseKind::NvidiaCuda ||
                         m_m.base == BaseKind::NvidiaCudaCudnn || m_m.base == BaseKind::OsPip;
        if (auto* v = root.find("wheel_index"); v && !pip_torch)
            m_r.error(*v, "$.wheel_index",
                      std::string("base \"") + base_kind_name(m_m.base) +
                          "\" brings its own torch; wheel_index applies to the bases that "
                          "pip-install it (nvidia-cuda, nvidia-cuda-cudnn, os-pip)");
        if (auto* v = root.find("extensions"); v && !pip_torch && !m_m.extensions.empty())
            m_r.error(*v, "$.extensions",
                      std::string("base \"") + base_kind_name(m_m.base) +
                          "\" brings its own torch, which the extensions' pins cannot be "
                          "checked against; extensions apply to the bases that pip-install "
                          "torch (nvidia-cuda, nvidia-cuda-cudnn, os-pip)");
        if (m_m.base == BaseKind::DebianTorch && !m_m.target_gpus.empty())
            m_r.error(*root.find("target_gpus"), "$.target_gpus",
                      "debian-torch images are CPU-only (Debian's python3-torch has no CUDA); "
                      "target_gpus must be empty");
        if (fixed_stack && root.find("expect") && m_m.base == BaseKind::DebianTorch)
            m_r.error(*root.find("expect"), "$.expect",
                      "debian-torch images have no cuDNN or NCCL to expect");
    }
};

}  // namespace

const char* base_kind_name(BaseKind kind) {
    for (const auto& b : k_base_kinds)
        if (b.kind == kind) return b.name;
    return "?";
}

const std::vector<std::string>& base_kind_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& b : k_base_kinds) out.emplace_back(b.name);
        return out;
    }();
    return names;
}

std::vector<std::string> Manifest::apt_for(const std::string& os_id) const {
    std::vector<std::string> out = apt;
    if (auto it = apt_by_os.find(os_id); it != apt_by_os.end())
        out.insert(out.end(), it->second.begin(), it->second.end());
    return out;
}

SourcePos Manifest::pos_of(const std::string& path) const {
    // The nearest recorded ancestor: "$.matrix.cuda[2]" falls back to "$.matrix.cuda".
    std::string p = path;
    while (!p.empty()) {
        if (auto it = positions.find(p); it != positions.end()) return it->second;
        auto cut = p.find_last_of(".[");
        if (cut == std::string::npos) break;
        p.resize(cut);
    }
    return {};
}

std::optional<Manifest> parse_manifest(const std::string& file, std::string_view text,
                                       Diagnostics& diags) {
    // The path is written into the Dockerfile: a name with a newline and a FROM line would
    // replace the whole image.
    if (auto bad = grammar::check_manifest_path(file); !bad.empty()) {
        diags.add({0, 0}, "", bad);  // about the file, not a position in it
        return std::nullopt;
    }
    auto parsed = parse_document(text, diags);
    if (!parsed) return std::nullopt;
    Manifest m;
    m.file = file;
    m.sha256 = sha256_hex(text);
    ManifestParser(m, diags).parse(*parsed);
    if (!diags.empty()) return std::nullopt;
    return m;
}

}  // namespace td
