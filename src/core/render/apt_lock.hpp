#pragma once
// A variant's Debian/Ubuntu packages resolved to exact versions by the base image's own
// package index: `torchdock lock` runs `apt-get install --simulate` inside the pinned base
// (engine/apt_resolver) and this reads what apt would install; render then pins every one
// of them, so two builds from one lock install the same versions (or fail where the
// archive no longer has one, which `lock --check` reports as moved). Pure.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace td {

// What an apt lock was resolved from; it applies to a variant only while these are equal.
struct AptLockInputs {
    std::string base;  // "debian:bookworm@sha256:<64 hex>"
    std::vector<std::string>
        packages;  // the manifest's for this OS: "curl", "git=1:2.39.5-0+deb12u2"
    bool operator==(const AptLockInputs&) const = default;
};

struct AptLock {
    AptLockInputs inputs;
    // Every package apt installs for the inputs, dependencies included: name -> version.
    std::map<std::string, std::string> resolved;
    // Requested packages the base already has: name -> its version (apt installs nothing).
    std::map<std::string, std::string> present;
};

// Reads `apt-get install --simulate` output: "Inst NAME [OLD] (VERSION ARCHIVE [ARCH])" and
// "NAME is already the newest version (VERSION)." lines. Every requested package must be in
// one of them; names and versions are grammar-checked, as they reach a Dockerfile. Errors
// name the line, or the package apt did not resolve (with apt's own "E:" lines).
Result<AptLock> parse_apt_simulation(std::string_view text, const AptLockInputs& inputs);

// The Dockerfile that resolves `packages` inside `base_from` (what FROM names: the base by
// digest, through a registry mirror if one is set) and leaves apt's answer in a file
// `apt-resolution.txt` as the only output of the build.
inline constexpr const char* k_apt_resolution_file = "apt-resolution.txt";
std::string apt_resolution_dockerfile(const std::string& base_from,
                                      const std::vector<std::string>& packages);

// Whether any of `packages` ("curl", "git=1:2.39.5-0+deb12u2") is named without a version.
bool has_unpinned(const std::vector<std::string>& packages);

// What render installs from a lock: every resolved package as NAME=VERSION, sorted.
std::vector<std::string> apt_locked_pins(const AptLock& lock);

// "curl 7.88.1-10+deb12u12 -> 7.88.1-10+deb12u14", "new: libfoo 1.0", "gone: libbar 2.0".
std::vector<std::string> diff_apt_locks(const AptLock& locked, const AptLock& fresh);

}  // namespace td
