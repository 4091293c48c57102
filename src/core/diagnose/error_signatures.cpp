// Reading the signature files (data/error_signatures/*.json) into ErrorSignatures: every key
// checked, every template compiled, every fact a cause or fix names proven to be captured
// or derived, ids unique across files. Matching the signatures against a log is explain.cpp.
#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/diagnose/explain.hpp"
#include "core/diagnose/signature_fields.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

using json = nlohmann::json;
using namespace signature_fields;

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

// The facts a signature may name: those of the whole log (`global`) and its own (`local`).
struct KnownFacts {
    const std::set<std::string>& global;
    std::set<std::string> local;
    bool count(const std::string& n) const { return global.count(n) || local.count(n); }
    void insert(const std::string& n) { local.insert(n); }
};

template <class Known, class Guaranteed>
void check_template(const std::string& tmpl, const std::string& path, const Known& known,
                    const Guaranteed& guaranteed) {
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
                     const KnownFacts& known) {
    for (std::size_t i = 0; i < names.size(); ++i)
        if (!starts_with(names[i], "fp:") && !known.count(names[i]))
            fail(path + "[" + std::to_string(i) + "]", "unknown fact " + quote_value(names[i]));
}

// A vocabulary entry: "<vocabulary>/<name>", e.g. "cuda/cudaErrorNoDevice".
bool valid_vocabulary_id(const std::string& id) {
    auto slash = id.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == id.size() || id.size() > 80)
        return false;
    for (char c : id)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' &&
            c != '/')
            return false;
    return true;
}

bool valid_id(const std::string& id) {
    if (id.size() != 5 || !starts_with(id, "EX")) return false;
    for (std::size_t i = 2; i < 5; ++i)
        if (id[i] < '0' || id[i] > '9') return false;
    return true;
}

bool valid_source(const std::string& s, bool vocabulary, bool catalog = false) {
    if (starts_with(s, "https://") || starts_with(s, "PyPI ")) return true;
    // A catalog entry cites the tool's source it was generated from: "<tool> <version> <file>".
    if (catalog) return std::count(s.begin(), s.end(), ' ') >= 2;
    if (!vocabulary) return false;
    for (const char* p : {"Debian ", "CUDA toolkit ", "glibc ", "GCC "})
        if (starts_with(s, p)) return true;
    return false;
}

// A providers file: {"schema": 1, "tier": "providers", "providers": {"libGL.so.1": ["Debian
// libgl1 1.6.0-1 (dpkg -S)"], ...}}: what provides a soname, header or command.
void parse_providers(const json& doc, ErrorSignatures& out) {
    const json& p = need(doc, "$", "providers");
    if (!p.is_object()) fail("$.providers", "expected an object");
    for (auto it = p.begin(); it != p.end(); ++it) {
        std::string path = "$.providers." + it.key();
        if (!it->is_array() || it->empty()) fail(path, "expected a non-empty array of strings");
        for (const auto& v : *it) {
            if (!v.is_string() || !valid_source(v.get<std::string>(), true))
                fail(path,
                     "expected package citations (\"PyPI <name> <version>\", \"Debian ...\")");
            out.providers[it.key()].push_back(v.get<std::string>());
        }
    }
}

// One signature object of a file whose family is `family`.
// A catalog's "default": the cause and fix of its entries that have none of their own (the
// messages no meaning rule names), written once per file.
struct DefaultMeaning {
    std::string cause, fix;
};

ErrorSignature parse_signature(const json& s, const std::string& path, const std::string& family,
                               const std::string& tier, const DefaultMeaning* fallback) {
    const bool catalog = tier == "catalog";
    const bool vocabulary = catalog || tier == "vocabulary";
    if (!s.is_object()) fail(path, "expected an object");
    only_keys(s, path,
              {"id", "title", "rank", "patterns", "unless", "context", "requires", "supersedes",
               "derive", "cause", "fix", "checks", "source", "note"});
    ErrorSignature sig;
    sig.family = family;
    sig.vocabulary = vocabulary;
    sig.catalog = catalog;
    sig.id = need_string(s, path, "id");
    if (vocabulary && !valid_vocabulary_id(sig.id))
        fail(path + ".id", "expected \"<vocabulary>/<name>\", got " + quote_value(sig.id));
    if (!vocabulary && !valid_id(sig.id))
        fail(path + ".id", "expected \"EX\" and three digits, got " + quote_value(sig.id));
    sig.title = need_string(s, path, "title");
    const json& rank = need(s, path, "rank");
    if (!rank.is_number_integer() || rank.get<int>() < 0 || rank.get<int>() > 1000)
        fail(path + ".rank", "expected an integer 0..1000");
    sig.rank = rank.get<int>();
    sig.patterns = template_list(s, path, "patterns", true);
    sig.unless = template_list(s, path, "unless", false);
    sig.context = template_list(s, path, "context", false);
    sig.required = template_list(s, path, "requires", false);
    if (sig.required.size() > 32) fail(path + ".requires", "at most 32 templates");
    sig.supersedes = string_list(s, path, "supersedes", false, false);
    if (auto d = s.find("derive"); d != s.end()) {
        if (!d->is_array()) fail(path + ".derive", "expected an array");
        for (std::size_t k = 0; k < d->size(); ++k)
            sig.derive.push_back(
                parse_derivation((*d)[k], path + ".derive[" + std::to_string(k) + "]"));
    }
    const bool inherits = fallback && !s.contains("cause") && !s.contains("fix");
    sig.cause = inherits ? fallback->cause : need_string(s, path, "cause");
    sig.fix = inherits ? fallback->fix : need_string(s, path, "fix");
    // Vocabulary entries have no fingerprint checks: the meaning of a code is not a cause.
    const json& checks =
        vocabulary && !s.contains("checks") ? json::array() : need(s, path, "checks");
    if (!checks.is_array()) fail(path + ".checks", "expected an array");
    for (std::size_t k = 0; k < checks.size(); ++k)
        sig.checks.push_back(parse_check(checks[k], path + ".checks[" + std::to_string(k) + "]"));
    sig.source = string_list(s, path, "source", true, true);
    for (std::size_t k = 0; k < sig.source.size(); ++k)
        // A source is a document (https://) or a package named by its index, never by the
        // index's host: "PyPI nvidia-cudnn-cu12"; vocabularies also cite the toolkit or C
        // library they were generated from.
        if (!valid_source(sig.source[k], vocabulary, catalog))
            fail(path + ".source[" + std::to_string(k) + "]",
                 "expected an https:// URL or a package citation (\"PyPI <name>\")");
    if (auto note = s.find("note"); note != s.end() && !note->is_string())
        fail(path + ".note", "expected a string");
    return sig;
}

// Supersedes, and the facts templates and checks name, for the signature at `i`.
void check_references(const ErrorSignatures& all, std::size_t i,
                      const std::set<std::string>& fact_names, const std::string& path) {
    const ErrorSignature& sig = all.signatures[i];
    KnownFacts known{fact_names, {}};
    for (const auto& n : captured_names(sig.patterns)) known.insert(n);
    for (const auto& n : captured_names(sig.context)) known.insert(n);
    for (const auto& n : captured_names(sig.required)) known.insert(n);
    for (std::size_t k = 0; k < sig.supersedes.size(); ++k) {
        const ErrorSignature* other = all.find(sig.supersedes[k]);
        std::string p = path + ".supersedes[" + std::to_string(k) + "]";
        if (!other) fail(p, "unknown signature " + quote_value(sig.supersedes[k]));
        if (other->rank >= sig.rank) fail(p, sig.supersedes[k] + " must rank below " + sig.id);
        for (const auto& n : captured_names(other->patterns)) known.insert(n);
        for (const auto& n : captured_names(other->context)) known.insert(n);
    }
    for (std::size_t k = 0; k < sig.derive.size(); ++k) {
        check_fact_refs(sig.derive[k].from, path + ".derive[" + std::to_string(k) + "].from",
                        known);
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

}  // namespace

// ---- ErrorSignatures ------------------------------------------------------------------------

const ErrorSignature* ErrorSignatures::find(std::string_view id) const {
    for (const auto& s : signatures)
        if (s.id == id) return &s;
    return nullptr;
}

void ErrorSignatures::build_index() {
    templates.clear();
    anchors = AnchorIndex();
    using Kind = TemplateRef::Kind;
    auto add = [&](const LineTemplate& t, Kind kind, std::size_t sig, std::size_t index) {
        anchors.add(t.anchor(), static_cast<std::uint32_t>(templates.size()));
        templates.push_back(
            {kind, static_cast<std::uint32_t>(sig), static_cast<std::uint32_t>(index)});
    };
    for (std::size_t f = 0; f < facts.size(); ++f) add(facts[f], Kind::Fact, 0, f);
    for (std::size_t s = 0; s < signatures.size(); ++s) {
        for (std::size_t k = 0; k < signatures[s].patterns.size(); ++k)
            add(signatures[s].patterns[k], Kind::Pattern, s, k);
        for (std::size_t k = 0; k < signatures[s].context.size(); ++k)
            add(signatures[s].context[k], Kind::Context, s, k);
        for (std::size_t k = 0; k < signatures[s].required.size(); ++k)
            add(signatures[s].required[k], Kind::Required, s, k);
    }
    anchors.build();
}

Result<ErrorSignatures> ErrorSignatures::parse(const std::string& text) {
    return parse_files({{"error_signatures.json", text}});
}

Result<ErrorSignatures> ErrorSignatures::parse_files(
    const std::vector<std::pair<std::string, std::string>>& files) {
    ErrorSignatures out;
    std::vector<std::string> paths;  // "file: $.signatures[i]" of each signature, for errors
    std::map<std::string, std::string> first_at;  // id -> its path, for duplicate errors
    std::string file;
    try {
        for (const auto& [name, text] : files) {
            file = name;
            json doc = json::parse(text);
            if (!doc.is_object()) fail("$", "expected an object");
            only_keys(doc, "$",
                      {"schema", "about", "family", "facts", "signatures", "tier", "generated_from",
                       "generator", "providers", "default"});
            const json& schema = need(doc, "$", "schema");
            if (!schema.is_number_integer() || schema.get<int>() != 1)
                fail("$.schema", "unsupported schema (expected 1)");
            std::string tier = doc.contains("tier") ? need_string(doc, "$", "tier") : "signatures";
            if (tier != "signatures" && tier != "vocabulary" && tier != "catalog" &&
                tier != "providers")
                fail("$.tier",
                     "expected \"signatures\", \"vocabulary\", \"catalog\" or \"providers\"");
            if (tier == "providers") {
                parse_providers(doc, out);
                continue;
            }
            std::string family;
            if (doc.contains("family")) family = need_string(doc, "$", "family");
            for (auto& t : template_list(doc, "$", "facts", false))
                out.facts.push_back(std::move(t));
            std::optional<DefaultMeaning> fallback;
            if (auto d = doc.find("default"); d != doc.end()) {
                if (tier != "catalog") fail("$.default", "only a catalog has a default meaning");
                if (!d->is_object()) fail("$.default", "expected an object");
                only_keys(*d, "$.default", {"cause", "fix"});
                fallback = DefaultMeaning{need_string(*d, "$.default", "cause"),
                                          need_string(*d, "$.default", "fix")};
            }
            auto sigs = doc.find("signatures");
            if (sigs == doc.end()) continue;
            if (!sigs->is_array()) fail("$.signatures", "expected an array");
            for (std::size_t i = 0; i < sigs->size(); ++i) {
                std::string path = "$.signatures[" + std::to_string(i) + "]";
                ErrorSignature sig = parse_signature((*sigs)[i], path, family, tier,
                                                     fallback ? &*fallback : nullptr);
                auto [first, fresh] = first_at.emplace(sig.id, name + ": " + path);
                if (!fresh)
                    fail(path + ".id",
                         "duplicate id " + sig.id + " (first at " + first->second + ")");
                out.signatures.push_back(std::move(sig));
                paths.push_back(name + ": " + path);
            }
        }
        file.clear();
        if (out.signatures.empty()) fail("$.signatures", "expected at least one signature");

        std::set<std::string> fact_names = captured_names(out.facts);
        fact_names.insert("torch_cuda");  // derived from torch_version (derive_common)
        for (std::size_t i = 0; i < out.signatures.size(); ++i) {
            auto colon = paths[i].find(": ");
            file = paths[i].substr(0, colon);
            check_references(out, i, fact_names, paths[i].substr(colon + 2));
        }
    } catch (const FieldError& e) {
        return Error{ErrorKind::Config,
                     (file.empty() ? std::string("error signatures") : file) + ": " + e.message};
    } catch (const json::exception& e) {
        return Error{ErrorKind::Config, file + ": " + e.what()};
    }
    out.build_index();
    return out;
}

}  // namespace td
