#pragma once
// A CycloneDX 1.6 JSON software bill of materials for a variant or an image, from facts
// gathered elsewhere (the lock, the image's files). Pure: the same input gives the same
// bytes, so an SBOM can be committed, diffed and checked like the rendered tree.
#include <string>
#include <utility>
#include <vector>

namespace td {

struct SbomHash {
    std::string alg = "SHA-256";
    std::string hex;  // lowercase, 64 digits for SHA-256
};

struct SbomComponent {
    enum class Kind { Python, Apt, CudaLibrary, GpuObject, BaseImage } kind = Kind::Python;
    std::string name, version;  // version may be "" when unknown
    // Files of the release (python: every wheel hash the lock allows; apt: none).
    std::vector<SbomHash> hashes;
    std::string download_url;  // a wheel by URL, else ""
    std::string index;         // how sources name the index ("PyPI"), "" if n/a
    // Python: names of other Python components this one requires, beyond those whose
    // required_by already names it.
    std::vector<std::string> depends_on;
    std::vector<std::string> required_by;  // python: names of the locked packages that required it
    std::string path;                      // in the image: dist-info dir, library or object path
    std::vector<std::string> gpu_targets;  // GpuObject: "sm_80", "compute_90", ...
    std::string os_id;                     // Apt: "debian12" / "ubuntu2404" (purl distro qualifier)
    std::string digest;                    // BaseImage: "sha256:<hex>"
    std::string note;                      // free text, e.g. how the fact was read
};

struct SbomSubject {
    std::string name;     // variant name or image reference
    std::string version;  // image tag or image ID, may be ""
    std::string kind;     // "variant" or "image"
    std::vector<std::pair<std::string, std::string>> properties;  // {"torchdock:cuda", "12.8"}
};

struct SbomInput {
    SbomSubject subject;
    std::vector<SbomComponent> components;
    std::string tool_version;  // torchdock's version string
    std::string timestamp;     // "" leaves metadata.timestamp out, keeping the output deterministic
};

// The package URL of a component ("" for CUDA libraries and GPU objects, which have no
// purl type): pkg:pypi, pkg:deb/debian|ubuntu, pkg:oci.
std::string sbom_purl(const SbomComponent& c);

// CycloneDX 1.6 JSON text, pretty-printed, ending in a newline. Components are sorted, so
// the order of `in.components` does not matter; the serial number is a UUID derived from
// the SHA-256 of everything else. Dependencies invert each Python component's required_by
// (A.required_by names B => B depends on A); the subject depends on every component that
// nothing in the set requires.
std::string cyclonedx_json(const SbomInput& in);

}  // namespace td
