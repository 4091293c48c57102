// Field readers for the signature files (see signature_fields.hpp).
#include "core/diagnose/signature_fields.hpp"

#include <map>

#include "util/strings.hpp"

namespace td::signature_fields {

using json = nlohmann::json;

std::vector<std::string> derivation_outputs(Derivation::Kind k) {
    using K = Derivation::Kind;
    switch (k) {
        case K::SonameMajor:
            return {"major"};
        case K::MinDriverForCuda:
            return {"need_cuda", "min_driver", "compat_driver"};
        case K::CudaFromDriverApi:
            return {"found_cuda"};
        case K::TorchVariantsForSm:
            return {"sm_cc", "fits", "fits_none"};
        case K::TorchForCudnnMajor:
            return {"cudnn_torch"};
        case K::TorchVariantsForCuda:
            return {"cuda_variants"};
        case K::NewestTorchForDriver:
            return {"fitting_torch"};
        case K::OomSplit:
            return {"fragmented", "too_big"};
        case K::CudnnDotted:
            return {"compiled_dotted", "runtime_dotted"};
        case K::NvccForArch:
            return {"arch_cuda"};
        case K::Provider:
            return {"provider"};
        case K::GlibcDistros:
            return {"glibc_distros"};
    }
    return {};
}

[[noreturn]] void fail(const std::string& path, const std::string& message) {
    throw FieldError{path + ": " + message};
}

void only_keys(const json& obj, const std::string& path, std::initializer_list<const char*> keys) {
    for (const auto& [k, v] : obj.items()) {
        bool known = false;
        for (const char* key : keys)
            if (k == key) known = true;
        if (!known) {
            std::vector<std::string> names(keys.begin(), keys.end());
            auto guess = closest_match(k, names);
            fail(path + "." + k,
                 "unknown key" +
                     (guess ? ", did you mean " + quote_value(*guess) + "?" : std::string()));
        }
    }
}

const json& need(const json& obj, const std::string& path, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, std::string("missing key \"") + key + "\"");
    return *it;
}

std::string need_string(const json& obj, const std::string& path, const char* key) {
    const json& v = need(obj, path, key);
    if (!v.is_string() || v.get<std::string>().empty())
        fail(path + "." + key, "expected a non-empty string");
    return v.get<std::string>();
}

std::vector<std::string> string_list(const json& obj, const std::string& path, const char* key,
                                     bool required, bool non_empty) {
    auto it = obj.find(key);
    if (it == obj.end()) {
        if (required) fail(path, std::string("missing key \"") + key + "\"");
        return {};
    }
    std::string p = path + "." + key;
    if (!it->is_array()) fail(p, "expected an array of strings");
    if (non_empty && it->empty()) fail(p, "expected at least one entry");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < it->size(); ++i) {
        const json& e = (*it)[i];
        if (!e.is_string() || e.get<std::string>().empty())
            fail(p + "[" + std::to_string(i) + "]", "expected a non-empty string");
        out.push_back(e.get<std::string>());
    }
    return out;
}

std::vector<LineTemplate> template_list(const json& obj, const std::string& path, const char* key,
                                        bool required) {
    std::vector<LineTemplate> out;
    auto texts = string_list(obj, path, key, required, required);
    for (std::size_t i = 0; i < texts.size(); ++i) {
        auto t = LineTemplate::compile(texts[i]);
        if (!t) fail(path + "." + key + "[" + std::to_string(i) + "]", t.error().message);
        out.push_back(std::move(t.value()));
    }
    return out;
}

Derivation parse_derivation(const json& j, const std::string& path) {
    if (!j.is_object()) fail(path, "expected an object");
    only_keys(j, path, {"kind", "from"});
    static const std::map<std::string, Derivation::Kind> kinds = {
        {"soname_major", Derivation::Kind::SonameMajor},
        {"min_driver_for_cuda", Derivation::Kind::MinDriverForCuda},
        {"cuda_from_driver_api", Derivation::Kind::CudaFromDriverApi},
        {"torch_variants_for_sm", Derivation::Kind::TorchVariantsForSm},
        {"torch_for_cudnn_major", Derivation::Kind::TorchForCudnnMajor},
        {"torch_variants_for_cuda", Derivation::Kind::TorchVariantsForCuda},
        {"newest_torch_for_driver", Derivation::Kind::NewestTorchForDriver},
        {"oom_split", Derivation::Kind::OomSplit},
        {"cudnn_dotted", Derivation::Kind::CudnnDotted},
        {"nvcc_for_arch", Derivation::Kind::NvccForArch},
        {"provider", Derivation::Kind::Provider},
        {"glibc_distros", Derivation::Kind::GlibcDistros},
    };
    std::string kind = need_string(j, path, "kind");
    auto it = kinds.find(kind);
    if (it == kinds.end()) fail(path + ".kind", "unknown derivation " + quote_value(kind));
    Derivation d;
    d.kind = it->second;
    d.from = string_list(j, path, "from", true, true);
    if (d.kind == Derivation::Kind::CudnnDotted && d.from.size() != 2)
        fail(path + ".from", "expected the compiled and runtime version facts");
    if (d.kind == Derivation::Kind::OomSplit && d.from.size() != 2 && d.from.size() != 4)
        fail(path + ".from",
             "expected the requested and unallocated sizes (and optionally reserved, allocated)");
    return d;
}

SignatureCheck parse_check(const json& j, const std::string& path) {
    if (!j.is_object()) fail(path, "expected an object");
    using K = SignatureCheck::Kind;
    static const std::map<std::string, K> kinds = {
        {"unresolved_soname", K::UnresolvedSoname},
        {"driver_supports", K::DriverSupports},
        {"shm_min", K::ShmMin},
        {"gpu_arch", K::GpuArch},
        {"no_driver", K::NoDriver},
        {"datacenter_gpu", K::DatacenterGpu},
        {"cudnn_runtime", K::CudnnRuntime},
        {"major_differs", K::MajorDiffers},
    };
    std::string kind = need_string(j, path, "kind");
    auto it = kinds.find(kind);
    if (it == kinds.end()) fail(path + ".kind", "unknown check " + quote_value(kind));
    SignatureCheck c;
    c.kind = it->second;
    auto note = [&](const char* key) {
        auto n = j.find(key);
        if (n == j.end()) return std::string();
        if (!n->is_string()) fail(path + "." + key, "expected a string");
        return n->get<std::string>();
    };
    c.confirmed_note = note("confirmed_note");
    c.ruled_out_note = note("ruled_out_note");
    auto choice = [&](const char* key, const char* a, const char* b, const char* dflt) {
        auto v = j.find(key);
        std::string s =
            v == j.end() ? dflt : (v->is_string() ? v->get<std::string>() : std::string());
        if (s != a && s != b)
            fail(path + "." + key, std::string("expected \"") + a + "\" or \"" + b + "\"");
        return s == a;
    };
    switch (c.kind) {
        case K::UnresolvedSoname:
            only_keys(j, path, {"kind", "soname", "confirmed_note", "ruled_out_note"});
            c.soname = need_string(j, path, "soname");
            break;
        case K::DriverSupports:
            only_keys(j, path,
                      {"kind", "from", "compare", "absent", "confirmed_note", "ruled_out_note"});
            c.from = string_list(j, path, "from", true, true);
            c.compare_minor = !choice("compare", "major", "minor", "major");
            c.absent_confirms = choice("absent", "confirms", "unknown", "unknown");
            break;
        case K::ShmMin: {
            only_keys(j, path, {"kind", "min_bytes", "confirmed_note", "ruled_out_note"});
            const json& n = need(j, path, "min_bytes");
            if (!n.is_number_integer() || n.get<std::int64_t>() <= 0)
                fail(path + ".min_bytes", "expected a positive integer");
            c.min_bytes = n.get<std::int64_t>();
            break;
        }
        case K::GpuArch:
            only_keys(j, path, {"kind", "from", "confirmed_note", "ruled_out_note"});
            c.from = string_list(j, path, "from", true, true);
            break;
        case K::NoDriver:
            only_keys(j, path, {"kind", "absent", "present", "confirmed_note", "ruled_out_note"});
            c.absent_confirms = choice("absent", "confirms", "unknown", "confirms");
            c.present_rules_out = choice("present", "rules_out", "unknown", "rules_out");
            break;
        case K::DatacenterGpu:
            only_keys(j, path, {"kind", "confirmed_note", "ruled_out_note"});
            break;
        case K::CudnnRuntime:
            only_keys(j, path, {"kind", "from", "confirmed_note", "ruled_out_note"});
            c.from = string_list(j, path, "from", true, true);
            if (c.from.size() != 2)
                fail(path + ".from", "expected the compiled major and minor fact names");
            break;
        case K::MajorDiffers:
            only_keys(j, path, {"kind", "from", "against", "confirmed_note", "ruled_out_note"});
            c.from = string_list(j, path, "from", true, true);
            c.against = string_list(j, path, "against", true, true);
            break;
    }
    return c;
}

}  // namespace td::signature_fields
