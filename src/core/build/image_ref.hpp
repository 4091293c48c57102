#pragma once
// Image references as registries see them ("debian:bookworm" is
// docker.io/library/debian:bookworm) and registry mirrors (docker.io -> 127.0.0.1:5000).
#include <map>
#include <optional>
#include <string>

#include "util/result.hpp"

namespace td {

struct ImageRef {
    std::string registry;    // "docker.io", "nvcr.io", "127.0.0.1:5000"
    std::string repository;  // "library/debian", "nvidia/cuda"
    std::string tag;         // may be empty when digest is set
    std::string digest;      // "sha256:..." or empty

    // Parses and validates (grammar::check_image_reference); a missing tag means "latest".
    static Result<ImageRef> parse(const std::string& text);
    // The name docker uses: "debian:bookworm" stays short for docker.io/library.
    std::string str() const;
    // Host to talk to for the distribution API ("registry-1.docker.io" for docker.io).
    std::string api_host() const;
    // Whether the API is plain http: loopback registries, as the Docker engine assumes.
    bool plain_http() const;
};

// registry host -> mirror host. Applying it keeps repository, tag and digest.
using Mirrors = std::map<std::string, std::string>;
// Whether "host[:port]" names this machine: localhost, [::1] or an IPv4 literal in
// 127.0.0.0/8 (not a DNS name that happens to start with "127.").
bool is_loopback_host(const std::string& host_port);

ImageRef apply_mirrors(const ImageRef& ref, const Mirrors& mirrors);

// Parses one "FROM=TO" mirror setting ("docker.io=127.0.0.1:5000").
Result<std::pair<std::string, std::string>> parse_mirror(const std::string& text);

}  // namespace td
