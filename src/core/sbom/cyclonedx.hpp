#pragma once
// A CycloneDX 1.6 JSON software bill of materials for a variant or an image, from facts
// gathered elsewhere (the lock, the image's files). Pure: the same input gives the same
// bytes, so an SBOM can be committed, diffed and checked like the rendered tree.
#include <cstddef>
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

// CycloneDX 1.6's own limits on what torchdock writes (bom-1.6.schema.json): a version is
// at most 1024 characters (`definitions/version`); a hash's alg is one of the schema's names
// and its content 32, 40, 64, 96 or 128 hex digits (`definitions/hash-alg`, `hash-content`).
inline constexpr std::size_t k_cyclonedx_version_max_chars = 1024;

// Makes `in` fit those limits, so the SBOM is never schema-invalid whatever an image's
// METADATA says: a version over the limit is left out (component and purl) with a note
// (`torchdock:note`) giving its length and first characters; a hash the schema cannot hold
// is left out with a note. Returns one line per change, for the command to print.
std::vector<std::string> fit_cyclonedx_limits(SbomInput& in);

// CycloneDX 1.6 JSON text, pretty-printed, ending in a newline. `in` is fitted to the
// schema's limits first (fit_cyclonedx_limits; call it yourself to show what changed). Components
// are sorted, so the order of `in.components` does not matter; the serial number is a UUID derived
// from the SHA-256 of everything else. Dependencies invert each Python component's required_by
// (A.required_by names B => B depends on A); the subject depends on every component that
// nothing in the set requires.
std::string cyclonedx_json(const SbomInput& in);

}  // namespace td
