#include "engine/registry.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/build/image_source.hpp"
#include "core/build/registry_policy.hpp"
#include "engine/files.hpp"
#include "engine/http.hpp"
#include "engine/registry_pull.hpp"
#include "util/sha256.hpp"
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
    Client(const ImageRef& r, const RegistryTimeouts& t) : ref(r), timeouts(t) {}
    const ImageRef& ref;
    const RegistryTimeouts& timeouts;
    // A loopback registry speaks plain http (as the Docker engine assumes); others https only.
    std::string protocols() const { return ref.plain_http() ? "http,https" : "https"; }

    // One request, following at most k_max_redirects redirects by hand, each checked
    // (registry::check_redirect); credentials are not carried to another host.
    // `sink`: the body of the final answer streamed to it (a blob), not kept.
    std::function<void(const std::string&)> sink;
    std::function<void()> reset_sink;
    std::string basic_auth;  // base64 "user:password" from the Docker client's config, or ""

    Result<HttpResponse> fetch(const std::string& method, const std::string& first_url,
                               const std::vector<std::string>& first_headers) const {
        std::string url = first_url;
        std::vector<std::string> headers = first_headers;
        for (long hop = 0;; ++hop) {
            if (reset_sink) reset_sink();
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
        if (sink && method == "GET") {
            req.max_body = 0;
            req.on_data = sink;  // every answer's body: reset_sink starts each one afresh
        }
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
        std::vector<std::string> auth;
        if (!basic_auth.empty()) auth.push_back("Authorization: Basic " + basic_auth);
        Client plain{ref, timeouts};
        auto r = plain.fetch("GET", url, auth);
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

// The Docker client's login for `host` ($DOCKER_CONFIG/config.json, else
// ~/.docker/config.json: "auths" -> host -> "auth", base64 of "user:password"), or "".
// Credential helpers are not run.
std::string docker_login(const std::string& host) {
    std::string dir;
    if (const char* d = std::getenv("DOCKER_CONFIG"); d && *d)
        dir = d;
    else if (const char* h = std::getenv("HOME"); h && *h)
        dir = std::string(h) + "/.docker";
    if (dir.empty()) return {};
    auto text = read_text_file(dir + "/config.json", std::size_t{1} << 20);
    if (!text) return {};
    auto j = nlohmann::json::parse(text.value(), nullptr, false);
    if (!j.is_object() || !j.contains("auths") || !j["auths"].is_object()) return {};
    for (const auto& key : {host, "https://" + host, "http://" + host}) {
        if (!j["auths"].contains(key) || !j["auths"][key].is_object()) continue;
        std::string auth = j["auths"][key].value("auth", "");
        if (!auth.empty() &&
            auth.find_first_not_of(
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") ==
                std::string::npos)
            return auth;
    }
    return {};
}

// The Authorization header a 401's challenge asks for: a Bearer token from its realm (with
// the login, when there is one), or the login itself for a Basic challenge.
Result<std::string> authorization_for(const Client& client, const std::string& challenge) {
    auto c = registry::parse_challenge(challenge);
    if (c["scheme"] == "basic") {
        if (client.basic_auth.empty())
            return Error{ErrorKind::Environment,
                         client.ref.api_host() +
                             " asks for a login (Basic) and the Docker client's "
                             "config.json has none for it: run `docker login " +
                             client.ref.registry + "`"};
        return "Authorization: Basic " + client.basic_auth;
    }
    auto token = client.bearer_token(challenge);
    if (!token) return token.error();
    return "Authorization: Bearer " + token.value();
}

// GET (or HEAD) with the one 401 round the challenge asks for.
Result<HttpResponse> authorized(const Client& client, const std::string& method,
                                const std::string& url, std::vector<std::string> headers) {
    auto r = client.fetch(method, url, headers);
    if (!r || r->status != 401) return r;
    auto auth = authorization_for(client, r->header("www-authenticate"));
    if (!auth) return auth.error();
    headers.push_back(auth.value());
    return client.fetch(method, url, headers);
}

std::string base_url(const ImageRef& ref) {
    return std::string(ref.plain_http() ? "http://" : "https://") + ref.api_host() + "/v2/" +
           ref.repository;
}

RegistryTimeouts pull_timeouts(std::chrono::milliseconds total) {
    RegistryTimeouts t;
    t.request = total;
    t.deadline = Clock::now() + total;
    return t;
}

Result<std::pair<std::string, std::string>> get_manifest(const Client& client,
                                                         const std::string& reference) {
    std::string url = base_url(client.ref) + "/manifests/" + reference;
    auto g = authorized(client, "GET", url, {k_accept});
    if (!g) return g.error();
    if (g->status != 200)
        return Error{ErrorKind::Environment,
                     "GET " + url + ": " + registry::error_text(g->status, g->body)};
    registry::ManifestAnswer m;
    m.content_type = g->header("content-type");
    m.body = g->body;
    m.truncated = g->truncated;
    m.digest_headers = g->header_values("docker-content-digest");
    auto v = registry::verify_manifest(m);
    if (!v.problem.empty()) return Error{ErrorKind::Environment, "GET " + url + ": " + v.problem};
    if (starts_with(reference, "sha256:") && v.digest != reference)
        return Error{ErrorKind::Environment, "GET " + url + ": the manifest hashes to " + v.digest};
    return std::pair{v.media_type, std::move(g->body)};
}

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

namespace td::engine {

Result<PulledImage> resolve_registry_image(const ImageRef& ref, const std::string& platform,
                                           std::chrono::milliseconds timeout) {
    auto timeouts = pull_timeouts(timeout);
    Client client{ref, timeouts};
    client.basic_auth = docker_login(ref.registry);
    auto top = get_manifest(client, ref.digest.empty() ? ref.tag : ref.digest);
    if (!top) return top.error();
    std::string body = std::move(top->second);
    if (is_index_media(top->first)) {
        auto index = parse_index(body);
        if (!index) return Error{ErrorKind::Environment, ref.str() + ": " + index.error().message};
        auto picked = pick_manifest(index.value(), "", platform);
        if (!picked)
            return Error{ErrorKind::Environment, ref.str() + ": " + picked.error().message};
        auto m = get_manifest(client, picked->digest);
        if (!m) return m.error();
        body = std::move(m->second);
    }
    auto manifest = parse_manifest(body);
    if (!manifest)
        return Error{ErrorKind::Environment, ref.str() + ": " + manifest.error().message};
    PulledImage out;
    out.config_digest = manifest->config.digest;
    std::string url = base_url(ref) + "/blobs/" + out.config_digest;
    auto config = authorized(client, "GET", url, {});
    if (!config) return config.error();
    if (config->status != 200 || config->truncated)
        return Error{ErrorKind::Environment,
                     "GET " + url + ": " + registry::error_text(config->status, config->body)};
    if ("sha256:" + sha256_hex(config->body) != out.config_digest)
        return Error{ErrorKind::Environment,
                     "GET " + url + ": the configuration does not hash to its digest"};
    out.config = std::move(config->body);
    for (const auto& l : manifest->layers) out.layer_digests.push_back(l.digest);
    return out;
}

Status fetch_registry_blob(const ImageRef& ref, const std::string& digest,
                           const std::filesystem::path& dest, std::chrono::milliseconds timeout) {
    auto timeouts = pull_timeouts(timeout);
    Client client{ref, timeouts};
    client.basic_auth = docker_login(ref.registry);
    int fd = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return Error{ErrorKind::Io, dest.string() + ": " + std::strerror(errno)};
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    Sha256Stream hash;
    bool write_failed = false;
    client.reset_sink = [&] {
        hash = Sha256Stream{};
        write_failed = ::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0;
    };
    client.sink = [&](const std::string& chunk) {
        hash.update(chunk);
        if (::write(fd, chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size()))
            write_failed = true;
    };
    std::string url = base_url(ref) + "/blobs/" + digest;
    auto r = authorized(client, "GET", url, {});
    if (!r) return r.error();
    if (r->status != 200)
        return Error{ErrorKind::Environment,
                     "GET " + url + ": the registry answered " + std::to_string(r->status)};
    if (write_failed) return Error{ErrorKind::Io, dest.string() + ": " + std::strerror(errno)};
    std::string got = "sha256:" + hash.hex();
    if (got != digest)
        return Error{ErrorKind::Environment, "GET " + url + ": the blob hashes to " + got +
                                                 " (a corrupt or substituted blob)"};
    return ok_status();
}

}  // namespace td::engine
