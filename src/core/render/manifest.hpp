#pragma once
// The manifest model (schema 1) and its strict parser. A manifest describes one family
// of images; see README.md "Manifest format" for every key. Parsing reports every
// problem in the file in one pass; values that reach a Dockerfile are grammar-checked
// here, combinations are checked against the knowledge base in matrix.cpp.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json/diagnostics.hpp"

namespace td {

enum class BaseKind {
    NvidiaCuda,       // nvidia/cuda:<cuda>-<flavor>-<os> + torch pip wheels
    NvidiaCudaCudnn,  // nvidia/cuda:<cuda>-cudnn-<flavor>-<os> + torch pip wheels
    Pytorch,          // pytorch/pytorch:<torch>-cuda<x.y>-cudnn<N>-<flavor>
    Ngc,              // nvcr.io/nvidia/pytorch:<yy.mm>-py3
    OsPip,            // plain ubuntu/debian + torch pip wheels (CUDA from nvidia-* wheels)
    DebianTorch,      // Debian with the distribution's python3-torch (CPU only)
};

const char* base_kind_name(BaseKind kind);
const std::vector<std::string>& base_kind_names();

// Where torch's wheels come from (bases that pip-install torch).
enum class WheelIndex {
    Pytorch,  // the PyTorch wheel index: every CUDA variant, as torch==X.Y.Z+cuXYZ
    Pypi,     // PyPI: the release's default CUDA build only, as torch==X.Y.Z
};

struct UserSpec {
    std::string name;
    int uid = 1000;
    int gid = 1000;
};

struct ValidateThresholds {
    std::map<std::string, double> gemm_tflops_min;  // precision -> TFLOP/s
    std::optional<double> allreduce_busbw_min_gbps;
    std::optional<int> shm_min_mb;
};

// A CUDA extension package the image carries (manifest "extensions"). From the package
// index by default (version: exact, or absent for the release the knowledge base says fits
// each variant's torch), a wheel by URL whose sha256 the manifest fixes, or built from a
// source archive (URL and sha256) in a build stage with a CUDA toolkit.
struct ExtensionSpec {
    std::string name;                       // normalized (PEP 503): "xformers", "flash-attn"
    std::optional<std::string> version;     // index only
    std::string wheel_url, wheel_sha256;    // a wheel by URL; both or neither
    std::string source_url, source_sha256;  // a source archive; both or neither
    // Exact pins the source build needs beside torch and the toolkit ("setuptools==80.9.0",
    // "ninja==1.13.0"): it runs without build isolation, so nothing else is there.
    std::vector<std::string> build_requires;
    std::optional<int> max_jobs;  // the build's MAX_JOBS default (a build argument)
    std::string path;             // "$.extensions[0]" for messages
    bool from_url() const { return !wheel_url.empty(); }
    bool from_source() const { return !source_url.empty(); }
};

struct MatrixExclude {
    std::map<std::string, std::string> fields;  // axis -> value
};

struct Manifest {
    std::string file;    // the path used in messages and in the io.torchdock.manifest label
    std::string sha256;  // of the file's bytes
    int schema = 1;
    std::string name;
    std::string description;
    std::string image;  // repository for built images
    BaseKind base = BaseKind::OsPip;
    WheelIndex wheel_index = WheelIndex::Pytorch;  // "wheel_index": "pytorch" | "pypi"
    // The platforms every variant's image is built for (render/platforms.hpp), in the
    // manifest's order.
    std::vector<std::string> platforms = {"linux/amd64"};

    // Matrix axes; an axis that does not apply to the base kind is empty.
    std::vector<std::string> torch, cuda, flavor, os, ngc;
    std::vector<MatrixExclude> exclude;

    std::optional<std::string> python;
    bool torchvision = true;
    bool torchaudio = true;
    std::vector<std::string> pip;
    // Debian/Ubuntu packages: NAME=VERSION or NAME (pinned from the lock, see apt_lock.hpp).
    std::vector<std::string> apt;                               // for every OS of the matrix
    std::map<std::string, std::vector<std::string>> apt_by_os;  // os id -> its own
    // The packages of one OS: the common list, then that OS's own.
    std::vector<std::string> apt_for(const std::string& os_id) const;
    std::optional<std::string> openmpi;  // Debian version of openmpi-bin and libopenmpi-dev
    std::optional<std::string> jupyter;  // jupyterlab version
    std::optional<UserSpec> user;
    std::vector<std::pair<std::string, std::string>> env;
    std::vector<std::string> target_gpus;
    std::vector<ExtensionSpec> extensions;
    std::optional<int> expect_cudnn_major;
    std::optional<std::string> expect_nccl;
    ValidateThresholds validate;
    // Check ID -> reason: applied by `validate --manifests` to the images this manifest renders;
    // rendered as labels io.torchdock.waive.ID, which validate shows as claims only.
    std::vector<std::pair<std::string, std::string>> waivers;

    // Where each JSON path was written, for messages about combinations.
    std::map<std::string, SourcePos> positions;
    SourcePos pos_of(const std::string& path) const;
};

class JsonReader;
struct JsonValue;
// The "extensions" list (render/manifest_extensions.cpp): every item checked, problems
// recorded in the reader's diagnostics.
std::vector<ExtensionSpec> parse_extensions(JsonReader& r, const JsonValue& v);

// Parses and validates one manifest. `file` is used in messages; `text` is its content.
// Returns the manifest when `diags` stays empty.
std::optional<Manifest> parse_manifest(const std::string& file, std::string_view text,
                                       Diagnostics& diags);

}  // namespace td
