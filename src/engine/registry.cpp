#include "engine/registry.hpp"

#include <algorithm>

#include "core/build/registry_policy.hpp"
#include "engine/http.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const char* k_accept =
    "Accept: application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.oci.image.manifest.v1+json";

// Registries redirect manifest and blob fetches to storage or a CDN; a loop still ends. The
// redirects are followed here, not by curl, so each target is checked.
constexpr long k_max_redirects = 5;

struct Client {
    const ImageRef& ref;
    const RegistryTimeouts& timeouts;
    // A loopback registry speaks plain http (as the Docker engine assumes); others https only.
    std::string protocols() const { return ref.plain_http() ? "http,https" : "https"; }

    // One request, following at most k_max_redirects redirects by hand, each checked
    // (registry::check_redirect); credentials are not carried to another host.
    Result<HttpResponse> fetch(const std::string& method, const std::string& first_url,
                               const std::vector<std::string>& first_headers) const {
        std::string url = first_url;
        std::vector<std::string> headers = first_headers;
        for (long hop = 0;; ++hop) {
            auto r = fetch_once(method, url, headers);
            if (!r) return r;
            bool redirect = r->status == 301 || r->status == 302 || r->status == 303 ||
                            r->status == 307 || r->status == 308;
            if (!redirect) return r;
            if (hop == k_max_redirects)
                return Error{ErrorKind::Environment, method + " " + first_url + ": more than " +
                                                         std::to_string(k_max_redirects) +
                                                         " redirects"};
            std::string next = registry::resolve_location(url, r->header("location"));
            if (next.empty()) return r;  // a 3xx without a usable Location: the caller judges
            if (auto bad = registry::check_redirect(next, ref.plain_http()); !bad.empty())
                return Error{ErrorKind::Environment, method + " " + first_url + ": " + bad};
            if (host_of(next) != host_of(url))
                std::erase_if(headers, [](const std::string& h) {
                    return to_lower(h.substr(0, 14)) == "authorization:";
                });
            url = next;
        }
    }

    static std::string host_of(const std::string& url) {
        auto sep = url.find("://");
        if (sep == std::string::npos) return {};
        return to_lower(url.substr(sep + 3, url.find_first_of("/?#", sep + 3) - sep - 3));
    }

    Result<HttpResponse> fetch_once(const std::string& method, const std::string& url,
                                    const std::vector<std::string>& headers) const {
        auto now = Clock::now();
        if (now >= timeouts.deadline)
            return Error{ErrorKind::Timeout,
                         method + " " + url + " not sent: the time limit was used up"};
        auto left = std::chrono::duration_cast<milliseconds>(timeouts.deadline - now);
        HttpRequest req;
        req.method = method;
        req.url = url;
        req.headers = headers;
        req.timeouts.total = std::max(milliseconds{1}, std::min(timeouts.request, left));
        req.timeouts.connect = std::min(timeouts.connect, req.timeouts.total);
        req.max_body = registry::k_max_manifest_bytes;
        req.protocols = protocols();
        return http_request(req);
    }

    Result<std::string> bearer_token(const std::string& challenge) const {
        auto c = registry::parse_challenge(challenge);
        if (c["scheme"] != "bearer" || c["realm"].empty())
            return Error{ErrorKind::Environment, registry::unusable_challenge_message(challenge)};
        const std::string& realm = c["realm"];
        if (auto e = registry::check_token_realm(realm, ref.plain_http()); !e.empty())
            return Error{ErrorKind::Environment, e};
        std::string url = realm + (realm.find('?') == std::string::npos ? "?" : "&");
        if (!c["service"].empty()) url += "service=" + url_encode(c["service"]) + "&";
        url += "scope=" +
               url_encode(c.count("scope") ? c["scope"] : "repository:" + ref.repository + ":pull");
        auto r = fetch("GET", url, {});
        if (!r) return r.error();
        std::string where = "token service " + registry::shown_quoted(realm);
        if (r->status != 200)
            return Error{ErrorKind::Environment,
                         where + " refused: " + registry::error_text(r->status, r->body)};
        auto token = registry::token_from_answer(r->body);
        if (!token.problem.empty())
            return Error{ErrorKind::Environment, where + " " + token.problem};
        return token.token;
    }
};

}  // namespace

DigestAnswer resolve_digest(const ImageRef& ref, const RegistryTimeouts& timeouts, bool platforms) {
    DigestAnswer answer;
    Client client{ref, timeouts};
    std::string url = std::string(ref.plain_http() ? "http://" : "https://") + ref.api_host() +
                      "/v2/" + ref.repository + "/manifests/" +
                      (ref.tag.empty() ? ref.digest : ref.tag);
    std::vector<std::string> headers = {k_accept};
    // Every message is one line of printable text, whatever the registry sent.
    auto fail = [&](const Error& e) {
        answer.kind = e.kind == ErrorKind::Timeout ? DigestAnswer::Kind::TimedOut
                                                   : DigestAnswer::Kind::Failed;
        answer.message = registry::shown(e.message, 3 * registry::k_max_shown);
        return answer;
    };
    auto refuse = [&](const std::string& message) {
        return fail(Error{ErrorKind::Environment, message});
    };
    auto r = client.fetch("HEAD", url, headers);
    if (!r) return fail(r.error());
    if (r->status == 401) {
        auto token = client.bearer_token(r->header("www-authenticate"));
        if (!token) return fail(token.error());
        headers.push_back("Authorization: Bearer " + token.value());
        r = client.fetch("HEAD", url, headers);
        if (!r) return fail(r.error());
    }
    std::vector<std::string> digests;
    if (r->status == 200) {
        digests = r->header_values("docker-content-digest");
        auto d = registry::agreed_digest(digests);
        if (!d.problem.empty()) return refuse(d.problem);
        std::string media = registry::manifest_media_type(r->header("content-type"));
        // An index asked for its platforms is read with GET below.
        if (!d.digest.empty() && !media.empty() &&
            !(platforms && registry::is_index_media_type(media))) {
            answer.kind = DigestAnswer::Kind::Found;
            answer.digest = d.digest;
            answer.media_type = media;
            return answer;
        }
    }
    // HEAD answers carry no body: ask again with GET for the registry's words, or for the
    // manifest itself when HEAD named no digest or no manifest type, or for an index's
    // platforms.
    auto g = client.fetch("GET", url, headers);
    if (!g) return fail(g.error());
    if (g->status == 404) {
        answer.kind = DigestAnswer::Kind::NotFound;
        answer.message = registry::error_text(g->status, g->body);
        return answer;
    }
    if (g->status == 429)
        return refuse(registry::rate_limit_text(g->body, g->header("retry-after")));
    if (g->status != 200) return refuse(registry::error_text(g->status, g->body));
    registry::ManifestAnswer m;
    m.content_type = g->header("content-type");
    m.body = std::move(g->body);
    m.truncated = g->truncated;
    for (auto& d : g->header_values("docker-content-digest")) digests.push_back(d);
    m.digest_headers = digests;
    auto v = registry::verify_manifest(m);
    if (!v.problem.empty()) return refuse(v.problem);
    answer.kind = DigestAnswer::Kind::Found;
    answer.digest = v.digest;
    answer.media_type = v.media_type;
    if (platforms) answer.platforms = registry::index_platforms(m.body);
    return answer;
}

}  // namespace td::engine
