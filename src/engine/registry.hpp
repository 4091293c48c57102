#pragma once
// A client of the OCI distribution API, enough to pin tags to digests:
// HEAD/GET /v2/<name>/manifests/<tag> accepting OCI indexes, Docker manifest lists and
// single manifests, with the anonymous Bearer-token challenge Docker Hub and nvcr.io use.
#include <chrono>
#include <string>

#include "core/build/image_ref.hpp"
#include "core/render/lockfile.hpp"

namespace td::engine {

// The registry's answer (core/render/lockfile.hpp judges it) plus the manifest's media type.
struct DigestAnswer : RegistryAnswer {
    std::string media_type;  // Found: the manifest's media type (index or single manifest)
};

struct RegistryTimeouts {
    std::chrono::milliseconds connect{10000};
    std::chrono::milliseconds request{30000};
};

// Resolves `ref` (tag) to its manifest digest at ref.api_host().
DigestAnswer resolve_digest(const ImageRef& ref, const RegistryTimeouts& timeouts = {});

}  // namespace td::engine
