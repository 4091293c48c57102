#pragma once
// Wheel file names (PEP 427 / the binary distribution format):
// {distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}.whl,
// where each tag may be a '.'-separated set. Pure.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace td::pypi {

struct WheelName {
    std::string distribution;  // as in the file name ("torch", "cuda_toolkit")
    std::string version;       // "2.11.0", "2.0.0+cu117"
    int build = -1;            // the build tag's number, -1 when absent
    std::vector<std::string> python_tags, abi_tags, platform_tags;

    // A wheel that installs on Linux on `machine` ("x86_64", "aarch64": manylinux*_MACHINE,
    // linux_MACHINE, or "any").
    bool linux_for(const std::string& machine) const;
    bool linux_x86_64() const { return linux_for("x86_64"); }
    // The glibc a manylinux tag for `machine` needs ("2.28" for manylinux_2_28, "2.17" for
    // manylinux2014, "2.12" for manylinux2010, "2.5" for manylinux1); "" otherwise.
    std::string glibc_floor(const std::string& machine = "x86_64") const;
    // CPython versions the wheel is for: "3.12" for cp312, "3.13t" for a free-threaded
    // build (abi cp313t); "py3" wheels give {} (any Python 3).
    std::vector<std::string> cpython_versions() const;
};

std::optional<WheelName> parse_wheel_name(std::string_view file_name);

// PEP 503 name normalisation: lowercase, runs of -, _ and . become one '-'.
std::string normalize_project_name(std::string_view name);

}  // namespace td::pypi
