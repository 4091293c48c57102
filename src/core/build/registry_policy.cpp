#include "core/build/registry_policy.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/build/image_ref.hpp"
#include "core/grammar/grammar.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td::registry {
namespace {

using json = nlohmann::json;

constexpr std::string_view k_oci_index = "application/vnd.oci.image.index.v1+json";
constexpr std::string_view k_oci_manifest = "application/vnd.oci.image.manifest.v1+json";
constexpr std::string_view k_docker_list =
    "application/vnd.docker.distribution.manifest.list.v2+json";
constexpr std::string_view k_docker_manifest =
    "application/vnd.docker.distribution.manifest.v2+json";

// Whether JSON text nests at most `max` arrays and objects deep (strings skipped), so a
// hostile body cannot make the parser build millions of nested values.
bool nesting_within(std::string_view s, int max) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max) return false;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return true;
}

bool is_string_member(const json& j, const char* key) {
    return j.contains(key) && j.at(key).is_string();
}

// A content descriptor: {"mediaType": "...", "digest": "...", "size": N, ...}.
std::string check_descriptor(const json& d, const std::string& where) {
    if (!d.is_object()) return where + " is not an object";
    if (!is_string_member(d, "mediaType")) return where + " has no \"mediaType\" string";
    if (!is_string_member(d, "digest")) return where + " has no \"digest\" string";
    if (!d.contains("size") || !d.at("size").is_number_integer())
        return where + " has no integer \"size\"";
    return {};
}

}  // namespace

std::string shown(std::string_view text, std::size_t max) { return terminal_text(text, max); }

std::string shown_quoted(std::string_view text, std::size_t max) { return quote_value(text, max); }

std::string manifest_media_type(std::string_view content_type) {
    std::string t = to_lower(content_type.substr(0, content_type.find(';')));
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.erase(0, 1);
    for (std::string_view known : {k_oci_index, k_oci_manifest, k_docker_list, k_docker_manifest})
        if (t == known) return t;
    return {};
}

bool is_index_media_type(std::string_view media_type) {
    return media_type == k_oci_index || media_type == k_docker_list;
}

std::map<std::string, std::string> index_platforms(std::string_view body) {
    std::map<std::string, std::string> out;
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("manifests") || !j.at("manifests").is_array()) return out;
    for (const auto& m : j.at("manifests")) {
        if (!m.is_object() || !m.contains("platform") || !m.contains("digest")) continue;
        const json& p = m.at("platform");
        auto text = [&](const char* key) {
            return p.is_object() && p.contains(key) && p.at(key).is_string()
                       ? p.at(key).get<std::string>()
                       : std::string();
        };
        std::string os = text("os"), arch = text("architecture"), variant = text("variant");
        // arm64's one variant is v8, which registries may write or leave out (containerd
        // normalizes "arm64/v8" to "arm64").
        if (arch == "arm64" && variant == "v8") variant.clear();
        if (os.empty() || arch.empty() || os == "unknown" || arch == "unknown" ||
            !m.at("digest").is_string())
            continue;
        out.emplace(os + "/" + arch + (variant.empty() ? "" : "/" + variant),
                    m.at("digest").get<std::string>());
    }
    return out;
}

std::string check_manifest_body(std::string_view media_type, std::string_view body) {
    if (body.size() > k_max_manifest_bytes) return "larger than 4 MiB";
    if (!nesting_within(body, 64)) return "JSON nested deeper than 64 levels";
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return "not JSON (or not UTF-8)";
    if (!j.is_object()) return "not a JSON object";
    if (!j.contains("schemaVersion") || !j.at("schemaVersion").is_number_integer() ||
        j.at("schemaVersion").get<long long>() != 2)
        return "\"schemaVersion\" is not 2";
    if (j.contains("mediaType")) {
        const json& m = j.at("mediaType");
        if (!m.is_string()) return "\"mediaType\" is not a string";
        if (m.get<std::string>() != media_type)
            return "its \"mediaType\" " + shown_quoted(m.get<std::string>()) +
                   " differs from its Content-Type";
    }
    if (media_type == k_oci_index || media_type == k_docker_list) {
        if (!j.contains("manifests") || !j.at("manifests").is_array())
            return "an index without a \"manifests\" array";
        const auto& list = j.at("manifests");
        for (std::size_t i = 0; i < list.size(); ++i)
            if (auto e = check_descriptor(list[i], "manifests[" + std::to_string(i) + "]");
                !e.empty())
                return e;
        return {};
    }
    if (media_type == k_oci_manifest || media_type == k_docker_manifest) {
        if (!j.contains("config")) return "a manifest without \"config\"";
        if (auto e = check_descriptor(j.at("config"), "config"); !e.empty()) return e;
        if (!j.contains("layers") || !j.at("layers").is_array())
            return "a manifest without a \"layers\" array";
        return {};
    }
    return "media type " + shown_quoted(media_type) + " is not a manifest type";
}

DigestHeader agreed_digest(const std::vector<std::string>& values) {
    DigestHeader out;
    for (const auto& v : values)
        if (!grammar::check_digest(v).empty())
            return {{}, "registry returned an unusable digest " + shown_quoted(v)};
    for (const auto& v : values) {
        if (out.digest.empty()) out.digest = v;
        if (v != out.digest)
            return {{},
                    "registry sent Docker-Content-Digest headers that disagree (" +
                        shown(out.digest) + " and " + shown(v) + ")"};
    }
    return out;
}

ManifestVerdict verify_manifest(const ManifestAnswer& a) {
    ManifestVerdict v;
    std::string media = manifest_media_type(a.content_type);
    if (media.empty()) {
        v.problem = "the registry answered 200 with Content-Type " +
                    shown_quoted(a.content_type, 80) +
                    ", which is not an OCI or Docker manifest (a proxy or captive portal page?)";
        return v;
    }
    if (a.truncated || a.body.size() > k_max_manifest_bytes) {
        v.problem =
            "the registry's answer is larger than 4 MiB, the most a manifest may be; "
            "torchdock stopped reading";
        return v;
    }
    if (auto e = check_manifest_body(media, a.body); !e.empty()) {
        v.problem = "the registry's answer is not a valid " + media + ": " + e;
        return v;
    }
    std::string body_digest = "sha256:" + sha256_hex(a.body);
    DigestHeader header = agreed_digest(a.digest_headers);
    if (!header.problem.empty()) {
        v.problem = header.problem;
        return v;
    }
    if (!header.digest.empty() && header.digest != body_digest) {
        v.problem = "the Docker-Content-Digest header " + header.digest +
                    " does not match the SHA-256 of the manifest (" + body_digest + ")";
        return v;
    }
    v.digest = body_digest;
    v.media_type = media;
    return v;
}

std::string check_token_realm(std::string_view realm, bool plain_http_registry) {
    if (realm.empty()) return "the registry's Bearer challenge names no token realm";
    const std::string expected =
        " (torchdock fetches tokens over https only; http only for a loopback registry)";
    for (char c : realm) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7F)
            return "token realm " + shown_quoted(realm) + " is not an https URL" + expected;
    }
    auto sep = realm.find("://");
    std::string scheme = sep == std::string_view::npos ? "" : to_lower(realm.substr(0, sep));
    bool allowed = scheme == "https" || (scheme == "http" && plain_http_registry);
    if (!allowed) return "token realm " + shown_quoted(realm) + " is not https" + expected;
    std::string_view rest = realm.substr(sep + 3);
    if (rest.empty() || rest.front() == '/' || rest.front() == '?' || rest.front() == '#')
        return "token realm " + shown_quoted(realm) + " names no host";
    // Plain http stays on this machine: a loopback registry cannot send the token request
    // in the clear to another host.
    std::string host(rest.substr(0, rest.find_first_of("/?#")));
    if (scheme == "http" && !is_loopback_host(host))
        return "token realm " + shown_quoted(realm) + " is plain http to another host" + expected;
    return {};
}

std::string resolve_location(std::string_view url, std::string_view location) {
    if (location.empty()) return {};
    if (location.find("://") != std::string_view::npos) return std::string(location);
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos || location.front() != '/') return {};
    auto path_start = url.find('/', scheme_end + 3);
    return std::string(url.substr(0, path_start)) + std::string(location);
}

std::string check_redirect(std::string_view target, bool plain_http_registry) {
    auto sep = target.find("://");
    std::string scheme = sep == std::string_view::npos ? "" : to_lower(target.substr(0, sep));
    std::string host =
        sep == std::string_view::npos
            ? ""
            : std::string(target.substr(sep + 3, target.find_first_of("/?#", sep + 3) - sep - 3));
    if (host.empty()) return "a redirect to " + shown_quoted(target) + " refused: it names no host";
    if (scheme == "https") return {};
    if (scheme == "http" && plain_http_registry && is_loopback_host(host)) return {};
    return "a redirect to " + shown_quoted(target) +
           " refused (redirects go over https; plain http only between loopback hosts)";
}

std::string check_bearer_token(std::string_view token) {
    if (token.empty()) return "returned no token";
    if (token.size() > 16384) return "returned a token over 16384 characters; refused";
    for (std::size_t i = 0; i < token.size(); ++i) {
        auto u = static_cast<unsigned char>(token[i]);
        if (u <= 0x20 || u >= 0x7F)
            return "returned a token with " + shown_quoted(std::string_view(&token[i], 1)) +
                   " at offset " + std::to_string(i) +
                   " (only visible ASCII is sent as a request header); refused";
    }
    return {};
}

TokenAnswer token_from_answer(std::string_view body) {
    json j;
    if (body.size() <= k_max_manifest_bytes && nesting_within(body, 64))
        j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return {{}, "answered with something that is not a JSON object"};
    std::string token;
    for (const char* key : {"token", "access_token"})
        if (token.empty() && is_string_member(j, key)) token = j.at(key).get<std::string>();
    if (auto e = check_bearer_token(token); !e.empty()) return {{}, e};
    return {token, {}};
}

std::map<std::string, std::string> parse_challenge(std::string_view header) {
    std::map<std::string, std::string> out;
    while (!header.empty() && (header.front() == ' ' || header.front() == '\t'))
        header.remove_prefix(1);
    if (header.empty()) return out;
    std::size_t i = header.find(' ');
    out["scheme"] = to_lower(header.substr(0, i));
    while (i < header.size()) {
        while (i < header.size() && (header[i] == ' ' || header[i] == ',')) ++i;
        auto eq = header.find('=', i);
        if (eq == std::string_view::npos) break;
        std::string key = to_lower(header.substr(i, eq - i));
        std::string_view value;
        i = eq + 1;
        if (i < header.size() && header[i] == '"') {
            auto end = header.find('"', i + 1);
            value = header.substr(i + 1, end == std::string_view::npos ? end : end - i - 1);
            i = end == std::string_view::npos ? header.size() : end + 1;
        } else {
            auto end = header.find(',', i);
            value = header.substr(i, end == std::string_view::npos ? end : end - i);
            i = end == std::string_view::npos ? header.size() : end;
        }
        out[key] = std::string(value);
    }
    return out;
}

std::string unusable_challenge_message(std::string_view header) {
    auto c = parse_challenge(header);
    if (c.empty())
        return "the registry answered 401 with no WWW-Authenticate challenge; torchdock pulls "
               "anonymously and has no credentials to offer";
    if (c["scheme"] != "bearer")
        return "the registry asks for " + shown_quoted(c["scheme"], 40) +
               " authentication; torchdock pulls anonymously";
    return "the registry's Bearer challenge names no token realm: " + shown_quoted(header);
}

std::string error_text(long status, std::string_view body) {
    std::string head = "HTTP " + std::to_string(status);
    if (body.size() <= k_max_manifest_bytes && nesting_within(body, 64)) {
        json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
        if (j.is_object() && j.contains("errors") && j.at("errors").is_array()) {
            std::vector<std::string> parts;
            for (const auto& e : j.at("errors")) {
                if (!e.is_object()) continue;
                auto text = [&](const char* key) {
                    return is_string_member(e, key) ? e.at(key).get<std::string>() : "";
                };
                std::string code = text("code"), message = text("message");
                if (!code.empty() || !message.empty()) parts.push_back(code + ": " + message);
            }
            if (!parts.empty()) return shown(join(parts, "; "));
        }
    }
    std::string_view start = body.substr(0, 4 * k_max_shown);
    while (!start.empty() && (start.back() == '\n' || start.back() == '\r')) start.remove_suffix(1);
    return start.empty() ? head : head + ": " + shown(start);
}

std::string rate_limit_text(std::string_view body, std::string_view retry_after) {
    std::string retry = retry_after.empty() ? "" : ", Retry-After: " + shown(retry_after, 40);
    return "rate limited (HTTP 429" + retry + "): " + error_text(429, body);
}

}  // namespace td::registry
