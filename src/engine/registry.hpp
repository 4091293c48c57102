#pragma once
// A client of the OCI distribution API, enough to pin tags to digests:
// HEAD/GET /v2/<name>/manifests/<tag> accepting OCI indexes, Docker manifest lists and
// single manifests, with the anonymous Bearer-token challenge Docker Hub and nvcr.io use.
// What is accepted (media types, body shape and size, digests, token realms, tokens) is
// decided by core/build/registry_policy; this file only talks. https only, except to a
// loopback registry; at most 5 redirects; bodies are not read past 4 MiB.
#include <chrono>
#include <map>
#include <string>

#include "core/build/image_ref.hpp"
#include "core/render/lockfile.hpp"

namespace td::engine {

// The registry's answer (core/render/lockfile.hpp judges it) plus the manifest's media type.
struct DigestAnswer : RegistryAnswer {
    std::string media_type;  // Found: the manifest's media type (index or single manifest)
    // Found, when asked for: the platforms an index lists, each with its manifest's digest
    // (registry::index_platforms); empty for a single manifest.
    std::map<std::string, std::string> platforms;
};

struct RegistryTimeouts {
    std::chrono::milliseconds connect{10000};
    std::chrono::milliseconds request{30000};  // each request
    // No request runs past this point (lock's --timeout); a request that would start
    // after it is not made. The answer is then Kind::TimedOut.
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// Resolves `ref` (tag) to its manifest digest at ref.api_host(); with `platforms`, an index
// is read too, for the platforms it lists. Messages are one line, with registry text
// escaped and cut.
DigestAnswer resolve_digest(const ImageRef& ref, const RegistryTimeouts& timeouts = {},
                            bool platforms = false);

}  // namespace td::engine
