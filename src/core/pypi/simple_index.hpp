#pragma once
// The PEP 691 JSON form of a package index's project page
// (Accept: application/vnd.pypi.simple.v1+json): the files of every release with their
// hashes, and whether the index serves their core metadata separately (PEP 658/714).
// Pure: parses a response body.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/pypi/wheel_name.hpp"
#include "util/result.hpp"

namespace td::pypi {

struct IndexFile {
    std::string filename, url, sha256, requires_python, upload_time;
    long long size = -1;  // -1 when the index does not say
    bool yanked = false;
    bool metadata_served = false;    // PEP 658/714: <url>.metadata exists
    std::string metadata_sha256;     // its hash, when given
    std::optional<WheelName> wheel;  // set for wheels whose name parses
};

struct ProjectIndex {
    std::string name;
    std::vector<IndexFile> files;
    std::vector<std::string> versions;  // as the index lists them (PEP 700), may be empty

    // Non-yanked Linux wheels for `machine` of `version` (PEP 440 equality, so "13.0.3"
    // matches "13.0.3.0"; the local label counts, so "2.0.0" does not match "2.0.0+cu117"),
    // highest build tag only.
    std::vector<const IndexFile*> linux_wheels(const std::string& version,
                                               const std::string& machine = "x86_64") const;
    // Final (non-pre-release) versions that have at least one Linux x86_64 wheel, ascending.
    std::vector<std::string> release_versions() const;
};

// `url` is the page's own address: relative file URLs are resolved against it.
Result<ProjectIndex> parse_project_index(std::string_view json_text, const std::string& url);

// RFC 3986 reference resolution for the forms indexes use (absolute, //host, /path, path).
std::string resolve_url(const std::string& base, const std::string& ref);

}  // namespace td::pypi
