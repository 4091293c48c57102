#pragma once
// A client of the OCI distribution API, enough to pin tags to digests:
// HEAD/GET /v2/<name>/manifests/<tag> accepting OCI indexes, Docker manifest lists and
// single manifests, with the anonymous Bearer-token challenge Docker Hub and nvcr.io use.
#include <chrono>
#include <string>

#include "core/image_ref.hpp"

namespace td::engine {

struct DigestAnswer {
    enum class Kind { Found, NotFound, Failed };
    Kind kind = Kind::Failed;
    std::string digest;      // Found: "sha256:..."
    std::string media_type;  // Found: the manifest's media type (index or single manifest)
    std::string message;     // NotFound/Failed: what the registry (or the network) said
};

struct RegistryTimeouts {
    std::chrono::milliseconds connect{10000};
    std::chrono::milliseconds request{30000};
};

// Resolves `ref` (tag) to its manifest digest at ref.api_host().
DigestAnswer resolve_digest(const ImageRef& ref, const RegistryTimeouts& timeouts = {});

}  // namespace td::engine
