// Reading data/error_signatures.json into ErrorSignatures: every key checked, every template
// compiled, every fact a cause or fix names proven to be captured or derived. Matching the
// signatures against a log is explain.cpp.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/diagnose/explain.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

using json = nlohmann::json;

// The facts a derivation adds.
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
    }
    return {};
}

// ---- parsing ------------------------------------------------------------------------------

struct ParseError {
    std::string message;
};

[[noreturn]] void fail(const std::string& path, const std::string& message) {
    throw ParseError{path + ": " + message};
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
    };
    std::string kind = need_string(j, path, "kind");
    auto it = kinds.find(kind);
    if (it == kinds.end()) fail(path + ".kind", "unknown derivation " + quote_value(kind));
    Derivation d;
    d.kind = it->second;
    d.from = string_list(j, path, "from", true, true);
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

std::set<std::string> captured_names(const std::vector<LineTemplate>& ts) {
    std::set<std::string> out;
    for (const auto& t : ts)
        for (auto& n : t.names()) out.insert(std::move(n));
    return out;
}

// Names every trigger pattern captures (facts a mandatory placeholder may use).
std::set<std::string> guaranteed_names(const std::vector<LineTemplate>& patterns) {
    std::set<std::string> out;
    for (std::size_t i = 0; i < patterns.size(); ++i) {
        auto names = patterns[i].names();
        std::set<std::string> mine(names.begin(), names.end());
        if (i == 0) {
            out = mine;
        } else {
            std::set<std::string> both;
            std::set_intersection(out.begin(), out.end(), mine.begin(), mine.end(),
                                  std::inserter(both, both.end()));
            out = both;
        }
    }
    return out;
}

void check_template(const std::string& tmpl, const std::string& path,
                    const std::set<std::string>& known, const std::set<std::string>& guaranteed) {
    std::string problem;
    std::string err = scan_template(tmpl, [&](std::string_view name, int depth) {
        if (!problem.empty()) return;
        std::string n(name);
        if (!known.count(n))
            problem = "unknown fact " + quote_value(n);
        else if (depth == 0 && !guaranteed.count(n))
            problem =
                "fact " + quote_value(n) + " is not captured by every pattern; put it inside [[ ]]";
    });
    if (!err.empty()) fail(path, err);
    if (!problem.empty()) fail(path, problem);
}

void check_fact_refs(const std::vector<std::string>& names, const std::string& path,
                     const std::set<std::string>& known) {
    for (std::size_t i = 0; i < names.size(); ++i)
        if (!starts_with(names[i], "fp:") && !known.count(names[i]))
            fail(path + "[" + std::to_string(i) + "]", "unknown fact " + quote_value(names[i]));
}

bool valid_id(const std::string& id) {
    if (id.size() != 5 || !starts_with(id, "EX")) return false;
    for (std::size_t i = 2; i < 5; ++i)
        if (id[i] < '0' || id[i] > '9') return false;
    return true;
}

}  // namespace

// ---- ErrorSignatures ------------------------------------------------------------------------

const ErrorSignature* ErrorSignatures::find(std::string_view id) const {
    for (const auto& s : signatures)
        if (s.id == id) return &s;
    return nullptr;
}

Result<ErrorSignatures> ErrorSignatures::parse(const std::string& text) {
    ErrorSignatures out;
    try {
        json doc = json::parse(text);
        if (!doc.is_object()) fail("$", "expected an object");
        only_keys(doc, "$", {"schema", "about", "facts", "signatures"});
        const json& schema = need(doc, "$", "schema");
        if (!schema.is_number_integer() || schema.get<int>() != 1)
            fail("$.schema", "unsupported schema (expected 1)");
        out.facts = template_list(doc, "$", "facts", false);
        std::set<std::string> fact_names = captured_names(out.facts);
        fact_names.insert("torch_cuda");  // derived from torch_version (derive_common)

        const json& sigs = need(doc, "$", "signatures");
        if (!sigs.is_array() || sigs.empty()) fail("$.signatures", "expected a non-empty array");
        for (std::size_t i = 0; i < sigs.size(); ++i) {
            std::string path = "$.signatures[" + std::to_string(i) + "]";
            const json& s = sigs[i];
            if (!s.is_object()) fail(path, "expected an object");
            only_keys(s, path,
                      {"id", "title", "rank", "patterns", "context", "supersedes", "derive",
                       "cause", "fix", "checks", "source", "note"});
            ErrorSignature sig;
            sig.id = need_string(s, path, "id");
            if (!valid_id(sig.id))
                fail(path + ".id", "expected \"EX\" and three digits, got " + quote_value(sig.id));
            if (out.find(sig.id)) fail(path + ".id", "duplicate id " + sig.id);
            sig.title = need_string(s, path, "title");
            const json& rank = need(s, path, "rank");
            if (!rank.is_number_integer() || rank.get<int>() < 0 || rank.get<int>() > 1000)
                fail(path + ".rank", "expected an integer 0..1000");
            sig.rank = rank.get<int>();
            sig.patterns = template_list(s, path, "patterns", true);
            sig.context = template_list(s, path, "context", false);
            sig.supersedes = string_list(s, path, "supersedes", false, false);
            if (auto d = s.find("derive"); d != s.end()) {
                if (!d->is_array()) fail(path + ".derive", "expected an array");
                for (std::size_t k = 0; k < d->size(); ++k)
                    sig.derive.push_back(
                        parse_derivation((*d)[k], path + ".derive[" + std::to_string(k) + "]"));
            }
            sig.cause = need_string(s, path, "cause");
            sig.fix = need_string(s, path, "fix");
            const json& checks = need(s, path, "checks");
            if (!checks.is_array()) fail(path + ".checks", "expected an array");
            for (std::size_t k = 0; k < checks.size(); ++k)
                sig.checks.push_back(
                    parse_check(checks[k], path + ".checks[" + std::to_string(k) + "]"));
            sig.source = string_list(s, path, "source", true, true);
            // A source is a document (https://) or a package named by its index, never by
            // the index's host: "PyPI nvidia-cudnn-cu12".
            for (std::size_t k = 0; k < sig.source.size(); ++k)
                if (!starts_with(sig.source[k], "https://") && !starts_with(sig.source[k], "PyPI "))
                    fail(path + ".source[" + std::to_string(k) + "]",
                         "expected an https:// URL or a package citation (\"PyPI <name>\")");
            if (auto note = s.find("note"); note != s.end() && !note->is_string())
                fail(path + ".note", "expected a string");
            out.signatures.push_back(std::move(sig));
        }

        // Cross-references: supersedes, and the facts templates and checks name.
        for (std::size_t i = 0; i < out.signatures.size(); ++i) {
            const ErrorSignature& sig = out.signatures[i];
            std::string path = "$.signatures[" + std::to_string(i) + "]";
            std::set<std::string> known = fact_names;
            for (const auto& n : captured_names(sig.patterns)) known.insert(n);
            for (const auto& n : captured_names(sig.context)) known.insert(n);
            for (std::size_t k = 0; k < sig.supersedes.size(); ++k) {
                const ErrorSignature* other = out.find(sig.supersedes[k]);
                std::string p = path + ".supersedes[" + std::to_string(k) + "]";
                if (!other) fail(p, "unknown signature " + quote_value(sig.supersedes[k]));
                if (other->rank >= sig.rank)
                    fail(p, sig.supersedes[k] + " must rank below " + sig.id);
                for (const auto& n : captured_names(other->patterns)) known.insert(n);
                for (const auto& n : captured_names(other->context)) known.insert(n);
            }
            for (std::size_t k = 0; k < sig.derive.size(); ++k) {
                check_fact_refs(sig.derive[k].from,
                                path + ".derive[" + std::to_string(k) + "].from", known);
                for (const auto& n : derivation_outputs(sig.derive[k].kind)) known.insert(n);
            }
            std::set<std::string> guaranteed = guaranteed_names(sig.patterns);
            check_template(sig.cause, path + ".cause", known, guaranteed);
            check_template(sig.fix, path + ".fix", known, guaranteed);
            for (std::size_t k = 0; k < sig.checks.size(); ++k) {
                const SignatureCheck& c = sig.checks[k];
                std::string p = path + ".checks[" + std::to_string(k) + "]";
                if (!c.soname.empty()) check_template(c.soname, p + ".soname", known, known);
                check_fact_refs(c.from, p + ".from", known);
                check_fact_refs(c.against, p + ".against", known);
            }
        }
    } catch (const ParseError& e) {
        return Error{ErrorKind::Config, "error_signatures.json: " + e.message};
    } catch (const json::exception& e) {
        return Error{ErrorKind::Config, std::string("error_signatures.json: ") + e.what()};
    }
    return out;
}

}  // namespace td
