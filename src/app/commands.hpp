#pragma once
// The subcommands. Each returns an exit code; errors are printed once, here in app/.
#include <optional>
#include <string>
#include <vector>

#include "core/render/render_plan.hpp"

namespace td::app {

struct CommonOptions {
    std::optional<std::string> data_dir;
    std::string manifests_dir = "manifests";
};

struct RenderOptions {
    std::string out_dir = "dockerfiles";
    std::optional<std::string> only;
    bool check = false;
    std::optional<std::string> stdout_variant;
    std::optional<std::string> json;   // report flag: "-" stdout, else a file
    std::optional<std::string> sarif;  // manifest problems and warnings as SARIF 2.1.0
};

struct ListOptions {
    std::optional<std::string> json;
    bool wide = false;  // every column
};

// Registry mirrors and package indexes: flags over the settings file (app/settings.hpp).
struct SettingsOptions {
    std::vector<std::string> mirrors;  // "docker.io=127.0.0.1:5000"
    std::optional<std::string>
        config;  // settings file; default torchdock.json or $TORCHDOCK_CONFIG
    std::optional<std::string> pypi_index, torch_index, index_netrc;
};

struct BuildOptions {
    std::vector<std::string> patterns;  // variant names or globs; empty = all
    std::string dockerfiles_dir = "dockerfiles";
    int jobs = 1;
    bool no_cache = false;
    std::optional<std::string> push;      // registry host to push to
    std::optional<std::string> platform;  // --platform: a build platform (render/platforms.hpp)
    std::optional<std::string> json;
    std::string work_dir = ".torchdock/build";
    long long timeout_s = 2 * 3600;  // one build
    std::optional<std::string>
        ca_cert;  // default: $PIP_CERT, $REQUESTS_CA_BUNDLE, $SSL_CERT_FILE, system bundle
    std::vector<std::string> build_args;  // K=V, passed through to the build
    // --skip-render-check: build the tree as it is, not compared with what render writes
    // from the manifests; such builds get no index credentials (netrc).
    bool skip_render_check = false;
    SettingsOptions settings;
};

struct LockOptions {
    std::vector<std::string> families;  // empty = every manifest
    bool check = false;
    long long timeout_s = 120;  // overall deadline for every registry request; must be > 0
    std::optional<std::string> json;
    SettingsOptions settings;
};

struct ValidateOptions {
    std::vector<std::string> images;
    std::string gpus = "auto";  // auto | all | none | N
    bool require_gpu = false;
    bool files_only = false;  // --files-only: the files-only tier (core/validate/platform)
    std::optional<std::string> json, junit, markdown, sarif;  // report flags
    std::vector<std::string> expect;                          // key=value
    std::optional<std::string> probes_dir;                    // default: engine/install_layout.hpp
    int jobs = 2;
    long long probe_timeout_s = 180;
    std::optional<std::string> python;  // the interpreter to use (default: the image's own)
    std::vector<std::string> waive;     // ID=reason (core/validate/waivers.hpp)
    std::optional<std::string> config;  // settings file with "waivers" (app/settings.hpp)
    // --manifests named on the command line: the waivers of the manifest that renders an
    // image apply to it (never the image's own io.torchdock.waive.* labels).
    bool with_manifests = false;
};

struct DoctorOptions {
    bool host = false;
    std::optional<std::string> image;
    std::optional<std::string> json;  // write the fingerprint here
    std::optional<std::string> probes_dir;
    std::optional<std::string> python;  // the interpreter to use (default: the environment's own)
};

struct NodeCheckOptions {
    std::string image;
    std::optional<std::string> json;
    std::optional<std::string> node;  // the name in reports (default: SLURMD_NODENAME, hostname)
    long long deadline_s = 50;        // the whole check, Slurm's HealthCheckProgram has 60 s
    bool drain = false;               // scontrol drain this node when the verdict is drain
    std::vector<std::string> waive;   // ID=reason (core/validate/waivers.hpp)
    std::optional<std::string> probes_dir;
    std::optional<std::string> python;
};

struct FleetOptions {
    std::string image;
    std::optional<std::string> nodes;      // a Slurm hostlist: node[1-3],gpu7
    std::optional<std::string> partition;  // every node of a partition
    long long timeout_s = 180;             // srun as a whole
    long long deadline_s = 50;             // each node's node-check
    std::vector<std::string> waive;        // ID=reason, passed to each node-check
    std::optional<std::string> json, markdown, junit;
};

struct AllreduceOptions {
    std::string image;
    std::optional<std::string> nodes, partition;
    int tasks_per_node = 1;  // ranks per node (one per GPU on GPU nodes)
    std::string backend = "auto";
    std::string sizes = "4096,1048576,16777216";  // bytes
    int iters = 5;
    long long timeout_s = 60;  // the rendezvous and each collective
    std::optional<std::string> baseline;
    double tolerance = 0.2;
    std::optional<std::string> json, junit, nccl_tests_json;
    std::optional<std::string> python;
    std::optional<std::string> probes_dir;
};

struct DiffOptions {
    std::string a, b;  // fingerprint files (doctor --json)
    std::optional<std::string> json;
    bool all = false;                     // every difference, cosmetic included
    std::optional<std::size_t> top;       // at most N (default: core k_default_top)
    std::vector<std::string> only, hide;  // categories (core diff_categories())
};

struct PreflightOptions {
    std::string image;
    std::optional<std::string> driver;
    std::vector<std::string> gpus;  // models, comma lists allowed
    bool host = false;              // take driver and GPUs from this host's probes
    std::optional<std::string> probes_dir;
    std::optional<std::string> python;  // the image's python whose torch to audit
    bool no_kernel_audit = false;       // judge labels only: no probe runs in the image
    std::vector<std::string> expect;
    std::optional<std::string> json;
};

struct ExplainOptions {
    std::string log = "-";  // file, or - for standard input
    std::optional<std::string> fingerprint;
    std::optional<std::string> json;
};

// `cache list|prune`: the sandbox's image store (engine/image_store).
struct CacheOptions {
    std::optional<std::string> max_size;  // prune: keep at most this much ("0": remove all)
    std::optional<std::string> json;      // list: report flag
};

// `sbom VARIANT|IMAGE`: a CycloneDX 1.6 SBOM from a variant's lock or an image's files.
struct SbomOptions {
    std::string target;        // a rendered variant's name, else an image reference
    std::string output = "-";  // "-": stdout, else a file written atomically
    std::optional<std::string> probes_dir;
    std::optional<std::string> python;  // the image's python whose site directories to read
};

// `checks [ID]`: the reference pages (core/reference).
struct ChecksOptions {
    std::optional<std::string> id;
    std::optional<std::string> json, markdown;  // report flags
};

// `kb refresh`: data/torch.json from a package index (the only command that needs one).
struct KbRefreshOptions {
    bool check = false;                      // report only; exit 1 when the data disagrees
    std::vector<std::string> releases;       // empty: every release from the data's oldest on
    std::string index_url;                   // empty: pip's default index
    std::optional<std::string> index_label;  // how sources name the index ("PyPI")
    int jobs = 8;
    // Read each default build's arch list from torch/lib/libtorch_cuda.so (hundreds of MB
    // of range reads per release), off unless asked for.
    bool arch_lists = false;
    // Refresh data/extensions.json (the tracked releases of CUDA extension packages; with
    // `releases`, only those projects) instead of data/torch.json.
    bool extensions = false;
    // How long a writing run waits for another one's lock on the data directory.
    long long lock_wait_s = 120;
};

// `torchdock init NAME`: a manifest from a few choices (core/render/manifest_scaffold.hpp).
struct InitOptions {
    std::string name;
    std::vector<std::string> torch, cuda, os, gpus, flavor;  // comma lists allowed
    std::optional<std::string> base, python, wheel_index, image;
};

int run_init(const CommonOptions& common, const InitOptions& opts);
int run_render(const CommonOptions& common, const RenderOptions& opts);
int run_list(const CommonOptions& common, const ListOptions& opts);
int run_build(const CommonOptions& common, const BuildOptions& opts);
int run_lock(const CommonOptions& common, const LockOptions& opts);
int run_validate(const CommonOptions& common, const ValidateOptions& opts);
int run_node_check(const CommonOptions& common, const NodeCheckOptions& opts);
int run_fleet(const CommonOptions& common, const FleetOptions& opts);
int run_allreduce(const CommonOptions& common, const AllreduceOptions& opts);
int run_allreduce_rank(const CommonOptions& common, const AllreduceOptions& opts);
int run_doctor(const CommonOptions& common, const DoctorOptions& opts);
int run_diff(const DiffOptions& opts);
// Loads the knowledge base and manifests and plans the whole matrix. On failure prints
// every problem and returns nullopt with the exit code in `code`. With `sarif`, the
// problems and warnings are written there too, whether or not the plan stands.
std::optional<RenderPlan> plan_project(const CommonOptions& common, int& code, bool writes,
                                       const std::optional<std::string>& sarif = std::nullopt);

int run_preflight(const CommonOptions& common, const PreflightOptions& opts);
int run_sbom(const CommonOptions& common, const SbomOptions& opts);
int run_explain(const CommonOptions& common, const ExplainOptions& opts);
int run_checks(const CommonOptions& common, const ChecksOptions& opts);
int run_cache_list(const CacheOptions& opts);
int run_cache_prune(const CacheOptions& opts);
int run_kb_refresh(const CommonOptions& common, const KbRefreshOptions& opts);

}  // namespace td::app
