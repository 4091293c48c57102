#pragma once
// Strict grammars for every manifest string that reaches a Dockerfile. Each function
// returns an empty string when the value is accepted, or a message saying what is
// wrong and what would be accepted. Hand-written scanners (no std::regex): bounded
// time and stack on any input, including fuzzed input.
#include <string>
#include <string_view>

namespace td::grammar {

// PEP 508 distribution name + exact PEP 440 pin, nothing else: "numpy==1.26.4",
// "jax[cuda12]==0.4.30", "torch==2.4.1+cu121". No markers, URLs, spaces or ranges.
std::string check_pip_requirement(std::string_view s);
// PEP 508 distribution name alone.
std::string check_pip_name(std::string_view s);
// PEP 440 public version, optionally with a local label ("2.4.1", "1.0rc1", "2.4.1+cu121").
std::string check_pep440_version(std::string_view s);
// A wheel's address for pip and uv ("name @ URL"): https:// (http:// only to a loopback host:
// localhost, [::1], 127.x.y.z, as for package indexes), a host, a path of letters, digits and
// -._~%+/:=, ending in ".whl"; no credentials ('@'), query, fragment, spaces or quotes; at
// most 2048 characters.
std::string check_wheel_url(std::string_view s);
// A source archive's address (an extension built from source): as check_wheel_url, ending in
// ".tar.gz" or ".zip".
std::string check_sdist_url(std::string_view s);
// A file's SHA-256 as pip's --hash and PEP 691 write it: 64 lowercase hex digits.
std::string check_sha256_hex(std::string_view s);
// A PEP 440 version specifier set as Requires-Dist writes it: "==2.9.1", ">=2.3,<3";
// clauses of an operator and a version, joined by ','. Only the characters are checked.
std::string check_version_specifier(std::string_view s);
// A Python minor version as manifests and locks name it: "3.N" exactly.
std::string check_python_minor(std::string_view s);

// Debian package name + exact version: "git=1:2.39.5-0+deb12u1".
std::string check_apt_requirement(std::string_view s);
std::string check_debian_version(std::string_view s);
// A Debian package name alone ("curl", resolved to a version by `torchdock lock`) or with
// its exact version ("git=1:2.39.5-0+deb12u1").
std::string check_apt_package(std::string_view s);

// Image reference: [host[:port]/]path[:tag][@sha256:<64 hex>], lowercase path.
std::string check_image_reference(std::string_view s);
// Repository without tag or digest: [host[:port]/]path.
std::string check_image_repository(std::string_view s);
// Registry host: dot-separated labels of letters, digits and '-', optionally ":port" with
// a port from 1 to 65535.
std::string check_registry_host(std::string_view s);
// "sha256:" followed by 64 lowercase hex digits.
std::string check_digest(std::string_view s);

// Environment variable name: [A-Za-z_][A-Za-z0-9_]*
std::string check_env_name(std::string_view s);
// Printable UTF-8 text on one line: no control characters (tabs, newlines, C1 controls,
// U+2028/U+2029 included), no bidirectional or invisible format characters (U+061C, U+200B,
// U+200E/F, U+202A-U+202E, U+2060, U+2066-U+2069, U+FEFF), no bytes that are not UTF-8, at
// most `max` bytes.
std::string check_plain_text(std::string_view s, std::size_t max);

// A manifest's path as it reaches the Dockerfile header and the io.torchdock.manifest
// label: plain text, and a file name that is a family name plus ".json" ("debian-cpu.json").
std::string check_manifest_path(std::string_view path);

// POSIX-portable user/group name for useradd: [a-z_][a-z0-9_-]{0,31}
std::string check_user_name(std::string_view s);

// Variant name as rendered: [a-z0-9][a-z0-9.-]*, no "..", at most 200 characters; also a
// directory name, so it can never leave the tree it names a folder in.
std::string check_variant_name(std::string_view s);

// Family name, used in variant names and paths: [a-z0-9][a-z0-9-]{0,39}, no "--".
std::string check_family_name(std::string_view s);

}  // namespace td::grammar
