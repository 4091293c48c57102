#include "core/sbom/cyclonedx.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/pypi/wheel_name.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

// ordered_json: key order is part of the bytes, and the bytes must not depend on a map's.
using ordered_json = nlohmann::ordered_json;
using Kind = SbomComponent::Kind;

// Percent-encodes all but RFC 3986 unreserved characters: a superset of what purl requires
// in names, versions and qualifier values ('+' of a PEP 440 local version becomes %2B).
std::string pct(std::string_view s) { return url_encode(s); }

struct ImageRef {
    std::string repository;  // without tag or digest
    std::string tag;
};

ImageRef split_image_ref(std::string_view ref) {
    if (auto at = ref.find('@'); at != std::string_view::npos) ref = ref.substr(0, at);
    // A ':' after the last '/' is a tag; one before it is a registry port.
    std::size_t slash = ref.rfind('/');
    std::size_t colon = ref.rfind(':');
    if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash))
        return {std::string(ref.substr(0, colon)), std::string(ref.substr(colon + 1))};
    return {std::string(ref), ""};
}

std::string last_segment(const std::string& repository) {
    std::size_t slash = repository.rfind('/');
    return slash == std::string::npos ? repository : repository.substr(slash + 1);
}

std::string kind_word(Kind k) {
    switch (k) {
        case Kind::Python:
            return "python";
        case Kind::Apt:
            return "apt";
        case Kind::CudaLibrary:
            return "cuda-library";
        case Kind::GpuObject:
            return "gpu-object";
        case Kind::BaseImage:
            return "base-image";
    }
    return "component";
}

std::string component_type(Kind k) {
    switch (k) {
        case Kind::GpuObject:
            return "file";
        case Kind::BaseImage:
            return "container";
        default:
            return "library";
    }
}

ordered_json property(const std::string& name, const std::string& value) {
    return ordered_json{{"name", name}, {"value", value}};
}

// externalReferences[].url is an IRI reference: bytes an IRI cannot hold (controls, space,
// "<>\^`{|}) are percent-encoded; everything else, '%' included, is kept as the URL was given.
std::string iri(std::string_view url) {
    std::string out;
    for (unsigned char c : url) {
        if (c <= 0x20 || c == 0x7f ||
            std::string_view("\"<>\\^`{|}").find(static_cast<char>(c)) != std::string_view::npos) {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

bool is_http_url(const std::string& s) {
    return starts_with(s, "https://") || starts_with(s, "http://");
}

// The component as it appears in "components", without its bom-ref (assigned after sorting).
ordered_json component_body(const SbomComponent& c) {
    ordered_json j;
    j["type"] = component_type(c.kind);
    j["name"] = c.name;
    if (!c.version.empty()) j["version"] = c.version;
    if (!c.hashes.empty()) {
        std::set<std::pair<std::string, std::string>> unique;
        for (const auto& h : c.hashes) unique.emplace(h.alg, to_lower(h.hex));
        ordered_json hashes = ordered_json::array();
        for (const auto& [alg, hex] : unique) hashes.push_back({{"alg", alg}, {"content", hex}});
        j["hashes"] = std::move(hashes);
    }
    if (std::string purl = sbom_purl(c); !purl.empty()) j["purl"] = purl;
    ordered_json refs = ordered_json::array();
    if (!c.download_url.empty())
        refs.push_back({{"url", iri(c.download_url)}, {"type", "distribution"}});
    // An index given by name ("PyPI") has no URL to point at; it stays a property.
    if (is_http_url(c.index))
        refs.push_back(
            {{"url", iri(c.index)}, {"comment", "package index"}, {"type", "distribution"}});
    if (!refs.empty()) j["externalReferences"] = std::move(refs);
    ordered_json props = ordered_json::array();
    if (!c.gpu_targets.empty())
        props.push_back(property("torchdock:gpu-targets", join(c.gpu_targets, " ")));
    if (!c.index.empty()) props.push_back(property("torchdock:index", c.index));
    if (!c.note.empty()) props.push_back(property("torchdock:note", c.note));
    if (!c.path.empty()) props.push_back(property("torchdock:path", c.path));
    if (!props.empty()) j["properties"] = std::move(props);
    return j;
}

// Refs are opaque to CycloneDX but read by people: the purl when there is one, else the
// kind and the file. Every part is percent-encoded, so the "#N" of a duplicate is unambiguous.
std::string base_ref(const SbomComponent& c) {
    if (std::string purl = sbom_purl(c); !purl.empty()) return purl;
    std::string ref = kind_word(c.kind) + ":" + pct(c.name);
    if (!c.version.empty()) ref += "@" + pct(c.version);
    if (c.kind == Kind::GpuObject && !c.path.empty()) ref += "?path=" + pct(c.path);
    return ref;
}

std::string uuid_from(std::string_view text) {
    std::string hex = sha256_hex(text).substr(0, 32);
    // RFC 4122 layout: version nibble 5 (name-based), variant bits 10xx.
    hex[12] = '5';
    static constexpr char k_variant[] = "89ab";
    hex[16] = k_variant[std::stoi(hex.substr(16, 1), nullptr, 16) & 3];
    return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
           hex.substr(16, 4) + "-" + hex.substr(20);
}

struct Placed {
    const SbomComponent* component;
    ordered_json body;
    std::string sort_text;  // breaks ties of (kind, name, version) so input order never shows
    std::string ref;
};

}  // namespace

std::string sbom_purl(const SbomComponent& c) {
    switch (c.kind) {
        case Kind::Python: {
            std::string purl = "pkg:pypi/" + pct(pypi::normalize_project_name(c.name));
            if (!c.version.empty()) purl += "@" + pct(c.version);
            if (!c.download_url.empty()) purl += "?download_url=" + pct(c.download_url);
            return purl;
        }
        case Kind::Apt: {
            std::string vendor = starts_with(c.os_id, "ubuntu") ? "ubuntu" : "debian";
            std::string purl = "pkg:deb/" + vendor + "/" + pct(c.name);
            if (!c.version.empty()) purl += "@" + pct(c.version);
            if (!c.os_id.empty()) purl += "?distro=" + pct(c.os_id);
            return purl;
        }
        case Kind::BaseImage: {
            ImageRef ref = split_image_ref(c.name);
            std::string purl = "pkg:oci/" + pct(to_lower(last_segment(ref.repository)));
            if (!c.digest.empty()) purl += "@" + pct(c.digest);
            // Qualifiers in key order, as purl's canonical form has them.
            purl += "?repository_url=" + pct(ref.repository);
            if (!ref.tag.empty()) purl += "&tag=" + pct(ref.tag);
            return purl;
        }
        case Kind::CudaLibrary:
        case Kind::GpuObject:
            return "";
    }
    return "";
}

namespace {

// Characters as JSON Schema counts them (code points); bytes when `s` is not UTF-8, since the
// writer replaces each byte it cannot decode by one U+FFFD.
std::size_t schema_length(std::string_view s) {
    if (!is_valid_utf8(s)) return s.size();
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

bool schema_hash(const SbomHash& h) {
    static const std::set<std::string> algs = {
        "MD5",      "SHA-1",    "SHA-256",     "SHA-384",     "SHA-512",     "SHA3-256",
        "SHA3-384", "SHA3-512", "BLAKE2b-256", "BLAKE2b-384", "BLAKE2b-512", "BLAKE3"};
    if (!algs.count(h.alg)) return false;
    std::size_t n = h.hex.size();
    if (n != 32 && n != 40 && n != 64 && n != 96 && n != 128) return false;
    return std::all_of(h.hex.begin(), h.hex.end(),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

void add_note(std::string& note, const std::string& more) {
    note = note.empty() ? more : note + "; " + more;
}

// A version over the limit is cleared (left out), and the note says so.
void fit_version(std::string& version, const std::string& what, std::string& note,
                 std::vector<std::string>& changes) {
    std::size_t chars = schema_length(version);
    if (chars <= k_cyclonedx_version_max_chars) return;
    std::string said = "version left out: it is " + std::to_string(chars) +
                       " characters, over CycloneDX 1.6's limit of " +
                       std::to_string(k_cyclonedx_version_max_chars) + " (it begins " +
                       quote_value(version, 40) + ")";
    add_note(note, said);
    changes.push_back(what + ": " + said);
    version.clear();
}

}  // namespace

std::vector<std::string> fit_cyclonedx_limits(SbomInput& in) {
    std::vector<std::string> changes;
    std::string subject_note;
    fit_version(in.subject.version, "the subject " + terminal_text(in.subject.name, 80),
                subject_note, changes);
    if (!subject_note.empty()) in.subject.properties.emplace_back("torchdock:note", subject_note);
    for (auto& c : in.components) {
        std::string what = kind_word(c.kind) + " " + terminal_text(c.name, 80);
        fit_version(c.version, what, c.note, changes);
        std::vector<SbomHash> kept;
        for (auto& h : c.hashes) {
            if (schema_hash(h)) {
                kept.push_back(std::move(h));
                continue;
            }
            std::string said = "a " + terminal_text(h.alg, 20) + " hash of " +
                               std::to_string(h.hex.size()) +
                               " characters left out: CycloneDX 1.6 takes 32, 40, 64, 96 or 128 "
                               "hex digits of a named algorithm";
            add_note(c.note, said);
            changes.push_back(what + ": " + said);
        }
        c.hashes = std::move(kept);
    }
    return changes;
}

std::string cyclonedx_json(const SbomInput& original) {
    SbomInput in = original;
    (void)fit_cyclonedx_limits(in);
    std::vector<Placed> placed;
    placed.reserve(in.components.size());
    for (const auto& c : in.components) {
        ordered_json body = component_body(c);
        std::string sort_text = body.dump(-1, ' ', false, ordered_json::error_handler_t::replace) +
                                "\n" + join(c.depends_on, ",") + "\n" + join(c.required_by, ",");
        placed.push_back({&c, std::move(body), std::move(sort_text), ""});
    }
    std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
        const auto& x = *a.component;
        const auto& y = *b.component;
        return std::tie(x.kind, x.name, x.version, a.sort_text) <
               std::tie(y.kind, y.name, y.version, b.sort_text);
    });

    std::set<std::string> used_refs;
    auto unique_ref = [&used_refs](const std::string& base) {
        std::string ref = base;
        for (int n = 2; !used_refs.insert(ref).second; ++n) ref = base + "#" + std::to_string(n);
        return ref;
    };
    std::string subject_ref = unique_ref(
        (in.subject.kind.empty() ? "subject" : pct(in.subject.kind)) + ":" + pct(in.subject.name));
    for (auto& p : placed) p.ref = unique_ref(base_ref(*p.component));

    // Python components by normalised name (the lock's required_by may spell names as
    // their packages do).
    std::map<std::string, std::vector<std::size_t>> python_by_name;
    for (std::size_t i = 0; i < placed.size(); ++i)
        if (placed[i].component->kind == Kind::Python)
            python_by_name[pypi::normalize_project_name(placed[i].component->name)].push_back(i);
    std::vector<std::set<std::size_t>> depends(placed.size());
    std::vector<bool> required(placed.size(), false);
    for (std::size_t i = 0; i < placed.size(); ++i) {
        const auto& c = *placed[i].component;
        if (c.kind != Kind::Python) continue;
        for (const auto& requirer : c.required_by) {
            auto it = python_by_name.find(pypi::normalize_project_name(requirer));
            if (it == python_by_name.end()) continue;
            for (std::size_t r : it->second) {
                if (r == i) continue;
                depends[r].insert(i);
                required[i] = true;
            }
        }
        for (const auto& dependency : c.depends_on) {
            auto it = python_by_name.find(pypi::normalize_project_name(dependency));
            if (it == python_by_name.end()) continue;
            for (std::size_t d : it->second) {
                if (d == i) continue;
                depends[i].insert(d);
                required[d] = true;
            }
        }
    }

    ordered_json dependencies = ordered_json::array();
    ordered_json top = ordered_json::array();
    // A requirer outside the set would leave its package unreachable; the subject holds it.
    for (std::size_t i = 0; i < placed.size(); ++i)
        if (!required[i]) top.push_back(placed[i].ref);
    dependencies.push_back({{"ref", subject_ref}, {"dependsOn", std::move(top)}});
    for (std::size_t i = 0; i < placed.size(); ++i) {
        if (placed[i].component->kind != Kind::Python) continue;
        ordered_json on = ordered_json::array();
        for (std::size_t d : depends[i]) on.push_back(placed[d].ref);
        dependencies.push_back({{"ref", placed[i].ref}, {"dependsOn", std::move(on)}});
    }

    ordered_json components = ordered_json::array();
    for (auto& p : placed) {
        ordered_json c;
        c["bom-ref"] = p.ref;
        for (auto it = p.body.begin(); it != p.body.end(); ++it) c[it.key()] = std::move(*it);
        components.push_back(std::move(c));
    }

    ordered_json subject;
    subject["bom-ref"] = subject_ref;
    subject["type"] = "container";
    subject["name"] = in.subject.name;
    if (!in.subject.version.empty()) subject["version"] = in.subject.version;
    ordered_json subject_props = ordered_json::array();
    if (!in.subject.kind.empty())
        subject_props.push_back(property("torchdock:kind", in.subject.kind));
    for (const auto& [name, value] : in.subject.properties)
        subject_props.push_back(property(name, value));
    if (!subject_props.empty()) subject["properties"] = std::move(subject_props);

    ordered_json tool{{"type", "application"}, {"name", "torchdock"}};
    if (!in.tool_version.empty()) tool["version"] = in.tool_version;
    ordered_json metadata;
    if (!in.timestamp.empty()) metadata["timestamp"] = in.timestamp;
    metadata["tools"] = {{"components", ordered_json::array({std::move(tool)})}};
    metadata["component"] = std::move(subject);

    ordered_json bom;
    bom["$schema"] = "http://cyclonedx.org/schema/bom-1.6.schema.json";
    bom["bomFormat"] = "CycloneDX";
    bom["specVersion"] = "1.6";
    bom["serialNumber"] = "";
    bom["version"] = 1;
    bom["metadata"] = std::move(metadata);
    bom["components"] = std::move(components);
    bom["dependencies"] = std::move(dependencies);
    // Image files can hold any bytes; invalid UTF-8 is replaced rather than thrown on.
    auto text = [&bom] {
        return bom.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
    };
    bom["serialNumber"] = "urn:uuid:" + uuid_from(text());
    return text();
}

}  // namespace td
