#pragma once
// Core metadata (the METADATA file of a wheel, RFC 822 style headers) and the
// requirements it lists (PEP 508: name, extras, version specifier, environment marker).
// Pure: parses text handed in, evaluates markers against an explicit environment.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/pypi/pep440.hpp"
#include "util/result.hpp"

namespace td::pypi {

struct Requirement {
    std::string name;  // normalised (PEP 503)
    std::vector<std::string> extras;
    SpecifierSet specifier;
    std::string marker;  // "" when none
    std::string text;    // the line as written (for citations)
};

// The environment a marker is evaluated in. `extra` is "" outside an extra.
struct MarkerEnvironment {
    std::string python_version = "3.12";  // "3.12"
    std::string extra;
    std::string sys_platform = "linux", platform_system = "Linux", platform_machine = "x86_64",
                os_name = "posix", implementation_name = "cpython",
                platform_python_implementation = "CPython";
};

struct CoreMetadata {
    std::string name, version, requires_python;
    std::vector<Requirement> requires_dist;
    // Requirements that apply in `env` (markers evaluated; a requirement whose marker
    // cannot be parsed is left out).
    std::vector<const Requirement*> applicable(const MarkerEnvironment& env) const;
    // The first applicable requirement on project `name` (normalised), if any.
    const Requirement* requirement_on(const std::string& name, const MarkerEnvironment& env) const;
};

// Headers end at the first empty line (the description body follows). Continuation lines
// (leading whitespace) extend the previous header. Requires-Dist lines that do not parse
// are an error naming the line.
Result<CoreMetadata> parse_core_metadata(std::string_view text);

Result<Requirement> parse_requirement(std::string_view line);

// Evaluates a PEP 508 marker ("platform_system == \"Linux\" and python_version < \"3.13\"");
// nullopt when it does not parse.
std::optional<bool> evaluate_marker(std::string_view marker, const MarkerEnvironment& env);

}  // namespace td::pypi
