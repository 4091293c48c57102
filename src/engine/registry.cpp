#include "engine/registry.hpp"

#include <nlohmann/json.hpp>

#include "core/render/grammar.hpp"
#include "engine/http.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace {

using nlohmann::json;

const char* k_accept =
    "Accept: application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.oci.image.manifest.v1+json";

// WWW-Authenticate: Bearer
// realm="https://auth.docker.io/token",service="registry.docker.io",scope="..."
std::map<std::string, std::string> parse_challenge(const std::string& header) {
    std::map<std::string, std::string> out;
    std::size_t i = header.find(' ');
    if (i == std::string::npos) return out;
    out["scheme"] = to_lower(header.substr(0, i));
    while (i < header.size()) {
        while (i < header.size() && (header[i] == ' ' || header[i] == ',')) ++i;
        auto eq = header.find('=', i);
        if (eq == std::string::npos) break;
        std::string key = header.substr(i, eq - i);
        std::string value;
        i = eq + 1;
        if (i < header.size() && header[i] == '"') {
            auto end = header.find('"', i + 1);
            value =
                header.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1);
            i = end == std::string::npos ? header.size() : end + 1;
        } else {
            auto end = header.find(',', i);
            value = header.substr(i, end == std::string::npos ? std::string::npos : end - i);
            i = end == std::string::npos ? header.size() : end;
        }
        out[key] = value;
    }
    return out;
}

// The registry's own words: {"errors":[{"code":"MANIFEST_UNKNOWN","message":"..."}]}.
std::string registry_message(const HttpResponse& r) {
    try {
        auto j = json::parse(r.body);
        std::vector<std::string> parts;
        for (const auto& e : j.at("errors"))
            parts.push_back(e.value("code", "") + ": " + e.value("message", ""));
        if (!parts.empty()) return join(parts, "; ");
    } catch (const json::exception&) {
    }
    std::string body = r.body.substr(0, 200);
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
    return body.empty() ? "HTTP " + std::to_string(r.status)
                        : "HTTP " + std::to_string(r.status) + ": " + body;
}

Result<HttpResponse> fetch(const std::string& method, const std::string& url,
                           const std::vector<std::string>& headers, const RegistryTimeouts& t) {
    HttpRequest req;
    req.method = method;
    req.url = url;
    req.headers = headers;
    req.timeouts.connect = t.connect;
    req.timeouts.total = t.request;
    return http_request(req);
}

Result<std::string> bearer_token(const std::string& challenge, const ImageRef& ref,
                                 const RegistryTimeouts& t) {
    auto c = parse_challenge(challenge);
    if (c["scheme"] != "bearer" || c["realm"].empty())
        return Error{ErrorKind::Environment, "registry asks for " +
                                                 (c["scheme"].empty() ? challenge : c["scheme"]) +
                                                 " authentication; torchdock pulls anonymously"};
    std::string url = c["realm"] + (c["realm"].find('?') == std::string::npos ? "?" : "&");
    if (!c["service"].empty()) url += "service=" + url_encode(c["service"]) + "&";
    url += "scope=" +
           url_encode(c.count("scope") ? c["scope"] : "repository:" + ref.repository + ":pull");
    auto r = fetch("GET", url, {}, t);
    if (!r) return r.error();
    if (r->status != 200)
        return Error{ErrorKind::Environment,
                     "token service " + c["realm"] + " refused: " + registry_message(r.value())};
    try {
        auto j = json::parse(r->body);
        std::string token = j.value("token", j.value("access_token", ""));
        if (token.empty())
            return Error{ErrorKind::Environment,
                         "token service " + c["realm"] + " returned no token"};
        return token;
    } catch (const json::exception& e) {
        return Error{ErrorKind::Environment, "token service " + c["realm"] + ": unreadable answer"};
    }
}

}  // namespace

DigestAnswer resolve_digest(const ImageRef& ref, const RegistryTimeouts& timeouts) {
    DigestAnswer answer;
    std::string url = std::string(ref.plain_http() ? "http://" : "https://") + ref.api_host() +
                      "/v2/" + ref.repository + "/manifests/" +
                      (ref.tag.empty() ? ref.digest : ref.tag);
    std::vector<std::string> headers = {k_accept};
    auto fail = [&](const std::string& message) {
        answer.kind = DigestAnswer::Kind::Failed;
        answer.message = message;
        return answer;
    };
    auto r = fetch("HEAD", url, headers, timeouts);
    if (!r) return fail(r.error().message);
    if (r->status == 401) {
        auto token = bearer_token(r->header("www-authenticate"), ref, timeouts);
        if (!token) return fail(token.error().message);
        headers.push_back("Authorization: Bearer " + token.value());
        r = fetch("HEAD", url, headers, timeouts);
        if (!r) return fail(r.error().message);
    }
    std::string digest = r->header("docker-content-digest");
    std::string media_type = r->header("content-type");
    if (r->status != 200 || digest.empty()) {
        // HEAD answers carry no body: ask again with GET for the registry's message, or
        // for the manifest itself when the digest header is missing.
        auto g = fetch("GET", url, headers, timeouts);
        if (!g) return fail(g.error().message);
        if (g->status == 404) {
            answer.kind = DigestAnswer::Kind::NotFound;
            answer.message = registry_message(g.value());
            return answer;
        }
        if (g->status == 429)
            return fail("rate limited (HTTP 429): " + registry_message(g.value()));
        if (g->status != 200) return fail(registry_message(g.value()));
        digest = g->header("docker-content-digest");
        if (digest.empty()) digest = "sha256:" + sha256_hex(g->body);
        media_type = g->header("content-type");
    }
    if (!grammar::check_digest(digest).empty())
        return fail("registry returned an unusable digest " + quote_value(digest));
    answer.kind = DigestAnswer::Kind::Found;
    answer.digest = digest;
    answer.media_type = media_type.substr(0, media_type.find(';'));
    return answer;
}

}  // namespace td::engine
