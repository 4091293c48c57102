#pragma once
// What torchdock accepts from an OCI registry, decided from strings alone (engine/registry
// does the talking): which answers are manifests, which token realms may be followed,
// which tokens may be sent, and how registry text is shown to a person.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace td::registry {

// Registries refuse manifests over 4 MiB (distribution's limit); so does torchdock, and it
// stops reading there.
inline constexpr std::size_t k_max_manifest_bytes = std::size_t{4} << 20;
// Registry text shown to a person is cut to this many characters.
inline constexpr std::size_t k_max_shown = 200;

// Registry-supplied text made safe for a terminal or a log: one line, control characters
// (C0, DEL, C1) escaped as \n, \r, \t, \xNN or \u00NN, bytes that are not UTF-8 escaped as
// \xNN, cut to `max` characters with "..." appended when cut. The result is valid UTF-8.
std::string shown(std::string_view text, std::size_t max = k_max_shown);
// The same in double quotes, with '"' and '\' escaped as well.
std::string shown_quoted(std::string_view text, std::size_t max = k_max_shown);

// The canonical (lowercase, parameters dropped) media type if `content_type` names one of
// the four manifest types torchdock locks (OCI index, OCI manifest, Docker manifest list,
// Docker manifest v2); empty otherwise.
std::string manifest_media_type(std::string_view content_type);

// Empty when `body` is a manifest of `media_type` (one of the four): at most
// k_max_manifest_bytes, a JSON object nested at most 64 deep with "schemaVersion": 2, a
// "mediaType" (if present) equal to `media_type`, and the shape of its kind ("manifests"
// descriptors for an index or list; "config" and "layers" for a manifest). Otherwise what
// is wrong, for a message.
std::string check_manifest_body(std::string_view media_type, std::string_view body);

// Where a redirect from `url` to `location` (a Location header: absolute, or a path on the
// same host) leads; "" when it cannot be read.
std::string resolve_location(std::string_view url, std::string_view location);
// Empty when a registry answer may redirect to `target`: https anywhere, plain http only
// from a loopback registry to a loopback host; else why not, for a message.
std::string check_redirect(std::string_view target, bool plain_http_registry);

// Whether a canonical media type is an OCI index or a Docker manifest list.
bool is_index_media_type(std::string_view media_type);
// The platforms an index (or Docker manifest list) `body` lists, as "os/arch" or
// "os/arch/variant" ("linux/arm64" for arm64's v8), each with its manifest's digest; entries
// without a platform, or with "unknown" (BuildKit's attestation manifests), are left out.
// Empty for another body.
std::map<std::string, std::string> index_platforms(std::string_view body);

// The digest headers (Docker-Content-Digest, every value the registry sent, maybe none)
// and the body the registry answered with.
struct ManifestAnswer {
    std::string content_type;
    std::string body;
    bool truncated = false;  // the body went past k_max_manifest_bytes and was not read on
    std::vector<std::string> digest_headers;
};
struct ManifestVerdict {
    std::string digest;      // "sha256:..." of the body, when accepted
    std::string media_type;  // canonical, when accepted
    std::string problem;     // non-empty: refused, and why (already safe to show)
};
// A GET answer is locked only if it is a manifest (above) and every digest header equals
// the SHA-256 of the body.
ManifestVerdict verify_manifest(const ManifestAnswer& answer);

// The one digest the headers agree on: empty when none was sent; `problem` set when they
// disagree or one is not sha256:<64 hex>.
struct DigestHeader {
    std::string digest;
    std::string problem;
};
DigestHeader agreed_digest(const std::vector<std::string>& values);

// Empty when a Bearer token realm may be fetched: an https URL, or http when the registry
// itself is plain http (a loopback registry). Never file://, dict://, gopher:// or others.
std::string check_token_realm(std::string_view realm, bool plain_http_registry);

// Empty when a token may be sent as "Authorization: Bearer <token>": 1 to 16384 visible
// ASCII characters. A CR LF in it would otherwise add request headers. Messages read after
// the token service's name ("returned a token with ...").
std::string check_bearer_token(std::string_view token);

// The token in a token service's answer ({"token": "..."} or {"access_token": "..."}),
// checked with check_bearer_token; `problem` says why there is none (as above).
struct TokenAnswer {
    std::string token;
    std::string problem;
};
TokenAnswer token_from_answer(std::string_view body);

// WWW-Authenticate: Bearer realm="...",service="...",scope="...". "scheme" is lowercased;
// empty map for an empty header.
std::map<std::string, std::string> parse_challenge(std::string_view header);
// Why a 401 cannot be answered, for a challenge that is not a usable Bearer one.
std::string unusable_challenge_message(std::string_view header);

// The registry's own words for a failed answer, safe to show: the "errors" of an OCI
// error body ("MANIFEST_UNKNOWN: manifest unknown"), else "HTTP <status>: <start of body>".
std::string error_text(long status, std::string_view body);
// A 429 answer: its words plus Retry-After when the registry sent one.
std::string rate_limit_text(std::string_view body, std::string_view retry_after);

}  // namespace td::registry
