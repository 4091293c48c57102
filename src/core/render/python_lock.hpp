#pragma once
// A variant's whole Python set, hash-locked: what `torchdock lock` asks uv to resolve (the
// inputs), what uv answered (every package with its version and file hashes), the
// requirements file the Dockerfile installs with `pip install --require-hashes --no-deps`,
// and what moved between two resolutions (`lock --check`). Pure.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "core/render/platforms.hpp"
#include "core/render/variant.hpp"
#include "util/result.hpp"

namespace td {

struct LockedPackage {
    std::string name;                 // normalized: "nvidia-cudnn-cu12"
    std::string version;              // "9.10.2.21", "2.8.0+cu126"
    std::vector<std::string> hashes;  // "sha256:<64 hex>", every file of that release
    // The locked packages that required this one (uv's `# via` lines), normalized and
    // sorted; a package the inputs ask for may have none.
    std::vector<std::string> required_by = {};
    // A wheel by URL ("name @ URL" in uv's output; an extension's release wheel): its
    // address, else "" for a package from an index.
    std::string url = {};
    bool operator==(const LockedPackage&) const = default;
};

// What a lock was resolved from. A lock applies to a variant only while these are equal:
// a manifest that changes a pin, the Python or the OS makes its lock stale.
struct PythonLockInputs {
    std::vector<std::string> requirements;  // "torch==2.9.1", "jupyterlab==4.3.4"
    std::string python;                     // "3.11"
    std::string platform;                   // uv's --python-platform: "x86_64-manylinux_2_36"
    std::string torch_index;  // the PyTorch wheel index directory ("cu126"); "" = PyPI only
    bool operator==(const PythonLockInputs&) const = default;
};

struct PythonLock {
    PythonLockInputs inputs;
    std::vector<LockedPackage> packages;  // sorted by name
    // The packages' required_by were recorded (every lock torchdock writes now); false for a
    // lock written before, which render refuses (it cannot tell a package nothing requested).
    bool graph = false;
};

// A wheel the lock inputs fix by URL and sha256 ("name @ URL#sha256=HEX").
struct WheelByUrl {
    std::string name, url, sha256;
};

// The wheels by URL among `inputs.requirements`, in their order. uv only echoes the URL's
// `#sha256=` fragment back, so these are hashed by torchdock itself at lock and lock --check.
std::vector<WheelByUrl> wheels_by_url(const PythonLockInputs& inputs);

// "" when `computed` (the sha256, hex, torchdock computed over the file it downloaded from
// w.url, `bytes` long) is the sha256 the manifest fixes; else the refusal, naming the URL,
// the manifest's hash and the computed one.
std::string wheel_hash_mismatch(const WheelByUrl& w, const std::string& computed,
                                unsigned long long bytes);

// "torch==2.9.1" -> {"torch", "2.9.1"}: the normalized name and the pinned version; extras
// ("pkg[extra]==1") dropped; a wheel or archive by URL ("name @ URL") -> {name, ""}.
std::pair<std::string, std::string> requirement_pin(std::string_view req);

// A lock input: an exact pin ("torch==2.9.1") or a wheel by URL with its sha256
// ("flash-attn @ https://host/flash_attn-2.8.1-....whl#sha256=<64 hex>"). "" when accepted.
std::string check_lock_requirement(std::string_view s);

// The pins pip installs for torch: torch, torchvision, torchaudio, with the wheel variant's
// local tag on the PyTorch wheel index ("torch==2.8.0+cu126"), without it from PyPI.
std::vector<std::string> torch_requirements(const Variant& v);

// The platform a lock resolves wheels for on an OS with `glibc` ("2.36"): the newest
// manylinux platform uv 0.13.8 accepts that the glibc runs, for `machine` ("x86_64" or
// "aarch64": "x86_64-manylinux_2_36"); "" when the glibc is not "2.N" or older than
// manylinux2014's 2.17.
std::string uv_platform_for_glibc(const std::string& glibc, const std::string& machine = "x86_64");

// The inputs of a variant's lock; empty with `why_not` set when the variant cannot be
// hash-locked (its base brings torch and the Python packages around it).
struct LockPlan {
    std::optional<PythonLockInputs> inputs;
    std::string why_not;
};
// The inputs of its Python set for `platform` (a build platform, render/platforms.hpp).
LockPlan python_lock_plan(const Variant& v, const KnowledgeBase& kb,
                          const std::string& platform = k_default_platform);
// The inputs of the build stage's lock of a variant with extensions built from source (its
// source_build's requirements, for the same Python and platform); empty without why_not
// when the variant builds nothing from source or its build stage installs nothing with pip.
LockPlan build_lock_plan(const Variant& v, const KnowledgeBase& kb);

// Parses `uv pip compile --generate-hashes` output: "name==version \" lines followed by
// "--hash=sha256:..." lines, then uv's annotation of who required the package ("# via torch",
// or "# via" and one "#   name" line each; "-r FILE" is the inputs and is not recorded), which
// becomes its required_by. Other comments and blank lines are skipped. Anything else (a
// marker, a URL, an editable, a package without hashes, an annotation that names no package)
// is refused, naming the line: what reaches the Dockerfile's build context is checked here.
Result<std::vector<LockedPackage>> parse_uv_requirements(std::string_view text);

// Whether `packages` is what `inputs` asked for: every requirement's package present at
// exactly its pinned version (PEP 440 equality, local label included), no package twice.
// "" when it is; otherwise what is wrong, in words.
std::string check_lock_covers(const PythonLockInputs& inputs,
                              const std::vector<LockedPackage>& packages);

// The packages of a lock that are outside the closure of its inputs: not reachable from a
// package the inputs ask for by following required_by (each names a locked package that
// required it), or naming in required_by a package the lock does not hold. Empty when every
// locked package was requested.
struct OutsideClosure {
    std::string name;  // the locked package
    std::string why;   // in words, naming it
};
std::vector<OutsideClosure> check_lock_closure(const PythonLockInputs& inputs,
                                               const std::vector<LockedPackage>& packages);

// The requirements file of a locked variant (requirements.lock.txt next to its Dockerfile),
// or with `build` of its build stage (requirements.build.lock.txt); `platform` names the
// platform of one set of a variant built for several.
std::string render_requirements_file(const Variant& v, const std::string& lock_path,
                                     const PythonLock& lock, bool build = false,
                                     const std::string& platform = "");

// What moved from a lock to a fresh resolution, per package.
struct PackageChange {
    enum class Kind { Moved, Gone, New, FilesChanged } kind;
    std::string name, locked_version, fresh_version;
    std::size_t locked_hashes = 0, fresh_hashes = 0;
    // "sympy 1.14.0 -> 1.15.0", "gone: bar 2.1", "new: foo 1.0",
    // "numpy 2.4.6: its files changed (2 hashes -> 3)"
    std::string describe() const;
};
std::vector<PackageChange> diff_locked_packages(const std::vector<LockedPackage>& locked,
                                                const std::vector<LockedPackage>& fresh);

}  // namespace td
