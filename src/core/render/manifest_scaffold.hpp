#pragma once
// `torchdock init`: a manifest from a few choices, written the way a person would write it
// (keys in the order of the bundled manifests, a comment saying how it was made).
#include <optional>
#include <string>
#include <vector>

namespace td {

struct ScaffoldRequest {
    std::string name;                        // family name, also the file name
    std::vector<std::string> torch;          // ["2.7.1"]
    std::vector<std::string> cuda;           // ["cu128"] or ["cpu"]
    std::vector<std::string> os;             // ["ubuntu22.04"]
    std::vector<std::string> gpus;           // target GPUs; may be empty
    std::optional<std::string> base;         // default: nvidia-cuda on Ubuntu, os-pip elsewhere
    std::vector<std::string> flavor;         // default ["runtime"] where the base has flavors
    std::optional<std::string> python;       // default: the OS's Python (key left out)
    std::optional<std::string> wheel_index;  // "pytorch" | "pypi"; default: left out
    std::optional<std::string> image;        // default "torchdock/<name>"
    std::string command_line;                // how it was made, for the comment
};

// The manifest text. Nothing is checked here: the caller plans it like any manifest, so
// every value gets the same errors a hand-written one would.
std::string scaffold_manifest(const ScaffoldRequest& request);

}  // namespace td
