#include "core/render/dockerfile.hpp"

#include <cstdio>

#include "core/grammar/grammar.hpp"
#include "core/render/apt_lock.hpp"
#include "core/render/image_labels.hpp"
#include "core/render/platforms.hpp"
#include "core/render/python_lock.hpp"
#include "core/render/render_plan.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

// Appends to one string; cheaper than an ostringstream for many small pieces.
struct Text {
    std::string s;
    bool index_args_declared = false;  // declare_index_args ran in this stage
    Text& operator<<(std::string_view x) {
        s += x;
        return *this;
    }
    Text& operator<<(char c) {
        s += c;
        return *this;
    }
};

constexpr const char* k_apt_cache_mounts =
    "RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \\\n"
    "    --mount=type=cache,target=/var/lib/apt,sharing=locked \\\n";
// A CA bundle for TLS-intercepting proxies and the credentials of a private index arrive as
// optional BuildKit secrets (`torchdock build --ca-cert`, the index_netrc setting), so pip
// uses them but they are never stored in a layer, a label or the build history.
constexpr const char* k_pip_mounts =
    "RUN --mount=type=cache,target=/root/.cache/pip \\\n"
    "    --mount=type=secret,id=pip-ca,target=/run/secrets/pip-ca \\\n"
    "    --mount=type=secret,id=pip-netrc,target=/run/secrets/pip-netrc \\\n";
constexpr const char* k_pip_secrets =
    "    if [ -s /run/secrets/pip-ca ]; then export PIP_CERT=/run/secrets/pip-ca; fi \\\n"
    " && if [ -s /run/secrets/pip-netrc ]; then export NETRC=/run/secrets/pip-netrc; fi \\\n";

constexpr const char* k_python_stage = "python-set";
constexpr const char* k_build_stage = "extension-build";
constexpr const char* k_wheel_dir = "/tmp/torchdock/wheels";
constexpr const char* k_cuda_home = "/opt/torchdock/cuda";

bool uses_venv(const Variant& v) { return !v.system_apt.empty(); }
bool uses_apt(const Variant& v) {
    return uses_venv(v) || !v.apt.empty() || v.manifest->openmpi.has_value();
}

// "apt-get install" of `pkgs`, one per line, inside a RUN with apt cache mounts.
void apt_install(Text& out, const std::vector<std::string>& pkgs, const std::string& then = {}) {
    out << k_apt_cache_mounts << "    apt-get update \\\n"
        << " && apt-get install -y --no-install-recommends \\\n";
    for (std::size_t i = 0; i < pkgs.size(); ++i)
        out << "      " << pkgs[i] << (i + 1 < pkgs.size() || !then.empty() ? " \\\n" : "\n");
    if (!then.empty()) out << then;
}

// The PyTorch wheel index is a build argument without a default: its URL (or a mirror's) is
// a setting of whoever builds, passed by `torchdock build`.
std::string torch_index_arg(const Variant& v) {
    return "\"${TORCH_INDEX_URL:?is not set: pass --build-arg TORCH_INDEX_URL=INDEX/" +
           v.wheel_variant +
           ", the PyTorch wheel index (torchdock build sets it from the indexes.pytorch "
           "setting)}\"";
}

// The index build arguments, declared right before the first RUN that runs pip: every RUN
// after an ARG depends on its value, so another mirror (`build --pypi-index`) rebuilds the
// pip layers and no apt layer before them.
void declare_index_args(Text& out, const Variant& v) {
    if (out.index_args_declared) return;
    out.index_args_declared = true;
    // pip reads PIP_INDEX_URL (a PyPI mirror) from the environment when it is passed.
    out << "ARG PIP_INDEX_URL\n";
    if (v.torch_source == Variant::TorchSource::PytorchIndex) out << "ARG TORCH_INDEX_URL\n";
}

void pip_install(Text& out, const Variant& v, const std::vector<std::string>& reqs,
                 const std::string& index_arg = {}) {
    declare_index_args(out, v);
    out << k_pip_mounts << k_pip_secrets << " && python -m pip install" << index_arg << " \\\n";
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        // Extras brackets would be a shell glob, "name @ URL#sha256=" has spaces and a '#';
        // the grammars allow no quote inside either.
        bool glob = reqs[i].find_first_of("[ #") != std::string::npos;
        out << "      " << (glob ? "'" + reqs[i] + "'" : reqs[i])
            << (i + 1 < reqs.size() ? " \\\n" : "\n");
    }
}

bool base_sets_require_cuda(const Variant& v) {
    BaseKind k = v.manifest->base;
    return k == BaseKind::NvidiaCuda || k == BaseKind::NvidiaCudaCudnn || k == BaseKind::Ngc;
}

void header(Text& out, const Variant& v) {
    const Manifest& m = *v.manifest;
    // No "# syntax=" line: it makes BuildKit pull a frontend image from Docker Hub, which
    // air-gapped builders cannot; the engine's built-in frontend supports RUN --mount.
    out << "# Rendered by torchdock from " << m.file << " (variant " << v.name << ").\n"
        << "# Do not edit: change the manifest and run `torchdock render`.\n"
        << "# Needs BuildKit (RUN --mount cache mounts): DOCKER_BUILDKIT=1 or docker buildx.\n";
    if (!default_platform_only(m))
        out << "# Platforms: " << join(m.platforms, ", ") << " (docker buildx build --platform "
            << join(m.platforms, ",") << ").\n";
    // With extensions built from source the image is three stages: its Python set, a build
    // stage from it, and the Python set again with the built wheels (source_build_stages).
    const char* stage = v.source_build ? " AS " : "";
    const char* stage_name = v.source_build ? k_python_stage : "";
    if (v.base_digest)
        out << "# base: " << v.base_ref << " (locked)\n"
            << "FROM " << v.base_ref.substr(0, v.base_ref.rfind(':')) << "@" << *v.base_digest
            << stage << stage_name << "\n";
    else
        out << "# base: " << v.base_ref << " (not locked: `torchdock lock` pins it by digest)\n"
            << "FROM " << v.base_ref << stage << stage_name << "\n";
    out << "\nSHELL [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"]\n"
        << "ARG DEBIAN_FRONTEND=noninteractive\n";
    out << "ENV PYTHONDONTWRITEBYTECODE=1 \\\n    PYTHONUNBUFFERED=1 \\\n"
        << "    PIP_DISABLE_PIP_VERSION_CHECK=1 \\\n    PIP_NO_INPUT=1";
    if (uses_venv(v)) out << " \\\n    VIRTUAL_ENV=/opt/venv \\\n    PATH=/opt/venv/bin:$PATH";
    out << "\n";
    if (!v.cuda.empty()) {
        // nvidia/cuda and NGC images set NVIDIA_REQUIRE_CUDA themselves, with the driver
        // branches that forward compatibility allows; only bases without it get one.
        bool base_sets_require = base_sets_require_cuda(v);
        out << "ENV NVIDIA_VISIBLE_DEVICES=all \\\n"
            << "    NVIDIA_DRIVER_CAPABILITIES=compute,utility";
        if (!base_sets_require) out << " \\\n    NVIDIA_REQUIRE_CUDA=\"cuda>=" << v.cuda << "\"";
        out << "\n";
    }
    if (!uses_apt(v)) return;
    out << "\n# Keep downloaded packages in the BuildKit cache mount, not in the image.\n"
        << "RUN rm -f /etc/apt/apt.conf.d/docker-clean \\\n"
        << " && echo 'Binary::apt::APT::Keep-Downloaded-Packages \"true\";' "
           "> /etc/apt/apt.conf.d/keep-cache\n";
}

void system_layer(Text& out, const Variant& v) {
    if (!uses_venv(v)) return;
    bool distro_torch = v.manifest->base == BaseKind::DebianTorch;
    out << "\n# Python " << v.python << " from " << v.os_id
        << (distro_torch ? " with the distribution's torch " + v.torch : std::string())
        << ", in a virtual environment at /opt/venv.\n";
    std::string then;
    if (!v.system_apt_pinned) {
        out << "# The OS Python is not pinned to a Debian version here: " << v.os_id
            << "'s updates pocket replaces old\n# versions, so a pin would break the build; "
               "its minor version is asserted instead.\n"
            << "# hadolint ignore=DL3008\n";
        auto mm = split(v.os_python_assert, '.');
        then = " && python3 -c 'import sys; assert sys.version_info[:2] == (" + mm[0] + ", " +
               mm[1] + "), sys.version' \\\n";
    }
    // With SOURCE_DATE_EPOCH the bytecode of the venv's own pip is hash-based, not stamped
    // with the build's time: the same in every build.
    then += std::string(" && SOURCE_DATE_EPOCH=0 python3 -m venv ") +
            (distro_torch ? "--system-site-packages " : "") + "/opt/venv\n";
    apt_install(out, v.system_apt, then);
}

// A version written into a comment line: as it is when it is a PEP 440 version (the
// knowledge base loader accepts nothing else), otherwise quoted and escaped exactly like a
// label value, so no value can end the comment and start an instruction.
std::string comment_version(const std::string& value) {
    if (value.empty()) return "?";
    return grammar::check_pep440_version(value).empty() ? value : dockerfile_quote(value);
}

std::string torch_description(const Variant& v) {
    std::string out = "PyTorch " + comment_version(v.torch) + " (" + v.wheel_variant + " wheels";
    if (v.torch_source == Variant::TorchSource::Pypi) out += " from PyPI";
    if (!v.cuda.empty())
        out += ": CUDA " + comment_version(v.cuda) + ", cuDNN " + comment_version(v.cudnn) +
               ", NCCL " + comment_version(v.nccl);
    return out + ")";
}

void torch_layer(Text& out, const Variant& v) {
    if (!v.pip_installs_torch()) return;
    out << "\n# " << torch_description(v) << ".\n";
    bool pypi = v.torch_source == Variant::TorchSource::Pypi;
    pip_install(out, v, torch_requirements(v), pypi ? "" : " --index-url " + torch_index_arg(v));
}

// The whole Python set from the lock (torch and everything under it, the manifest's pip list,
// JupyterLab), installed exactly as locked: no resolution at build time, every file checked
// against its hash. pip compiles bytecode with SOURCE_DATE_EPOCH set, so the .pyc files are
// hash-based and the same in every build.
void locked_python_layer(Text& out, const Variant& v) {
    const PythonLock& lock = *v.python_lock;
    out << "\n# The Python set hash-locked in " << v.python_lock_file << ": ";
    if (v.platform_locks.empty()) {
        out << std::to_string(lock.packages.size()) << " packages";
    } else {
        std::vector<std::string> counts;
        for (const auto& [platform, l] : v.platform_locks)
            counts.push_back(platform + ": " + std::to_string(l->packages.size()) + " packages");
        out << "one per platform (" << join(counts, ", ") << ")";
    }
    if (v.pip_installs_torch()) out << ", " << torch_description(v);
    out << ".\n";
    declare_index_args(out, v);
    std::string file = std::string("/tmp/torchdock/") + k_requirements_lock;
    if (!v.platform_locks.empty()) {
        // BuildKit sets TARGETARCH to the architecture of the platform being built.
        out << "ARG TARGETARCH\n" << k_pip_mounts;
        for (const auto& [platform, l] : v.platform_locks) {
            const std::string name = requirements_lock_for(platform);
            out << "    --mount=type=bind,source=" << name << ",target=/tmp/torchdock/" << name
                << " \\\n";
        }
        file = "\"/tmp/torchdock/" + requirements_lock_for("linux/${TARGETARCH}") + "\"";
        out << k_pip_secrets << " && if [ ! -f " << file
            << " ]; then echo \"torchdock: no Python set is locked for TARGETARCH=${TARGETARCH}; "
               "this Dockerfile builds "
            << join(v.manifest->platforms, ", ") << "\" >&2; exit 1; fi \\\n";
    } else {
        out << k_pip_mounts << "    --mount=type=bind,source=" << k_requirements_lock
            << ",target=" << file << " \\\n"
            << k_pip_secrets;
    }
    out << " && SOURCE_DATE_EPOCH=0 python -m pip install --require-hashes --no-deps";
    if (v.torch_source == Variant::TorchSource::PytorchIndex)
        out << " \\\n      --extra-index-url " << torch_index_arg(v);
    out << " \\\n      -r " << file << "\n";
}

// The Python packages on top of the system: unlocked, torch first (the largest layer, cached
// while the manifest's extras change), then the pip list and JupyterLab after the Debian
// extras they may need to build (OpenMPI for mpi4py). Locked, one layer after the extras.
void unlocked_torch_layer(Text& out, const Variant& v) {
    if (v.python_lock) return;
    if (v.pip_installs_anything() && !v.python_not_locked.empty())
        out << "\n# Python packages are pinned by version but not hash-locked: "
            << v.python_not_locked << ".\n";
    torch_layer(out, v);
}

// What the extensions are and what was checked of them (render/extensions.cpp), as comments.
void extensions_comment(Text& out, const Variant& v) {
    if (v.extensions.empty()) return;
    out << "\n# CUDA extensions:\n";
    for (const auto& e : v.extensions) {
        out << "#   " << e.name << " " << comment_version(e.version)
            << (e.from_source   ? " built from source (sha256-checked archive)"
                : e.url.empty() ? " from the package index"
                                : " (a wheel by URL)")
            << "\n";
        if (!e.facts_source.empty())
            out << "#     its torch pin and GPU code were checked against "
                << dockerfile_quote(e.facts_source) << "\n";
        for (const auto& note : e.notes) out << "#     " << dockerfile_quote(note) << "\n";
    }
}

void python_extras_layers(Text& out, const Variant& v) {
    extensions_comment(out, v);
    if (v.python_lock) return locked_python_layer(out, v);
    const Manifest& m = *v.manifest;
    if (!m.pip.empty()) {
        out << "\n# Extra Python packages from the manifest.\n";
        pip_install(out, v, m.pip);
    }
    if (m.jupyter) {
        out << "\n# JupyterLab.\n";
        pip_install(out, v, {"jupyterlab==" + *m.jupyter});
    }
    std::vector<std::string> reqs;
    for (const auto& e : v.extensions)
        if (!e.from_source) reqs.push_back(e.requirement);
    if (!reqs.empty()) {
        out << "\n# The CUDA extensions (a wheel by URL is checked against its sha256).\n";
        pip_install(out, v, reqs);
    }
}

// The Debian packages a source build needs beside the Python set: the C++ compiler nvcc
// drives (not pinned: hadolint DL3008 is waived for this stage only) and the headers of the
// image's Python, at the version of its python3 when that is pinned.
std::vector<std::string> build_stage_apt(const Variant& v) {
    std::vector<std::string> pkgs = {"g++"};
    for (const auto& p : v.system_apt) {
        if (p == "python3") pkgs.push_back("python3-dev");
        if (p.starts_with("python3=")) pkgs.push_back("python3-dev" + p.substr(7));
    }
    return pkgs;
}

// The build stage: FROM the Python set, with the CUDA toolkit (the base image's on a devel
// nvidia/cuda base; else the one pip installs, hash-locked with the build requirements when
// the lock has them), each extension's wheel built from its sha256-checked archive without
// build isolation for the target GPUs; then the Python set again with the wheels installed,
// as the final stage.
void source_build_stages(Text& out, const Variant& v) {
    if (!v.source_build) return;
    const SourceBuild& b = *v.source_build;
    const bool pip_toolkit = !b.home.empty();
    out << "\n# --- Build stage: the extensions built from source, with the CUDA " << b.cuda
        << " toolkit " << (pip_toolkit ? "from pip" : "of the base image") << "\n#     ("
        << dockerfile_quote(b.toolkit_source) << ").\n"
        << "FROM " << k_python_stage << " AS " << k_build_stage << "\n"
        << "ARG PIP_INDEX_URL\n"
        << "# MAX_JOBS: parallel compile jobs (torch's cpp_extension); a build argument.\n"
        << "ARG MAX_JOBS\n"
        << "# hadolint ignore=DL3008\n";
    out.index_args_declared = true;  // a new stage: the ARG line above declares it again
    apt_install(out, build_stage_apt(v));
    const std::string what =
        pip_toolkit ? "The toolkit and build requirements" : "The build requirements";
    if (v.build_lock) {
        out << "\n# " << what << " hash-locked in " << v.build_lock_file << ": "
            << std::to_string(v.build_lock->packages.size()) << " packages.\n"
            << k_pip_mounts << "    --mount=type=bind,source=" << k_build_requirements_lock
            << ",target=/tmp/torchdock/" << k_build_requirements_lock << " \\\n"
            << k_pip_secrets << " && python -m pip install --require-hashes --no-deps \\\n"
            << "      -r /tmp/torchdock/" << k_build_requirements_lock << "\n";
    } else if (!b.requirements.empty()) {
        out << "\n# " << what << ", pinned by version but not hash-locked: " << v.build_not_locked
            << ".\n";
        pip_install(out, v, b.requirements);
    }
    if (pip_toolkit) {
        // torch's cpp_extension takes the toolkit from CUDA_HOME (bin/nvcc, include, lib) and
        // links -lcudart, which the runtime wheel ships only by its soname.
        out << "\n# CUDA_HOME: the toolkit the wheels put under site-packages/" << b.home << ".\n"
            << "RUN home=\"$(python -c 'import sysconfig; "
               "print(sysconfig.get_paths()[\"purelib\"])')/"
            << b.home << "\" \\\n"
            << " && test -x \"$home/bin/nvcc\" \\\n"
            << " && ln -sf " << b.cudart_soname << " \"$home/lib/libcudart.so\" \\\n"
            << " && mkdir -p /opt/torchdock && ln -s \"$home\" " << k_cuda_home << "\n"
            << "ENV CUDA_HOME=" << k_cuda_home << "\n";
    } else {
        out << "\nENV CUDA_HOME=" << k_base_cuda_home << "\n";
    }
    // --no-cache-dir: pip's wheel cache keys a built wheel by the archive's URL and hash
    // alone, so it would hand back a wheel built for other target GPUs.
    for (const auto& e : v.extensions) {
        if (!e.from_source) continue;
        out << "\n# " << e.name << " " << comment_version(e.version) << " for TORCH_CUDA_ARCH_LIST "
            << b.arch_list << ".\n"
            << k_pip_mounts << k_pip_secrets << " && TORCH_CUDA_ARCH_LIST=\"" << b.arch_list
            << "\" MAX_JOBS=\"${MAX_JOBS:-"
            << (e.max_jobs ? std::to_string(*e.max_jobs) : std::string("$(nproc)")) << "}\" \\\n"
            << "    python -m pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir "
            << k_wheel_dir << " \\\n      '" << e.requirement << "'\n";
    }
    out << "\n# --- The image: the Python set and the wheels built above.\n"
        << "FROM " << k_python_stage << "\n"
        << "RUN --mount=type=bind,from=" << k_build_stage << ",source=" << k_wheel_dir
        << ",target=" << k_wheel_dir << " \\\n"
        << "    SOURCE_DATE_EPOCH=0 python -m pip install --no-cache-dir --no-deps --no-index \\\n"
        << "      " << k_wheel_dir << "/*.whl\n";
}

void extras_layers(Text& out, const Variant& v) {
    const Manifest& m = *v.manifest;
    if (v.apt_lock) {
        out << "\n# Extra Debian packages from the manifest (" << join(v.apt, ", ")
            << "), every package apt installs for them pinned as the lock resolved it in this "
               "base.\n";
        apt_install(out, apt_locked_pins(*v.apt_lock));
    } else if (!v.apt.empty()) {
        out << "\n# Extra Debian packages from the manifest.\n";
        if (has_unpinned(v.apt))
            out << "# Not pinned: " << v.apt_not_locked
                << "; `torchdock lock` resolves them in the pinned base.\n# hadolint "
                   "ignore=DL3008\n";
        apt_install(out, v.apt);
    }
    if (m.openmpi) {
        out << "\n# OpenMPI " << *m.openmpi << ".\n";
        apt_install(out, {"libopenmpi-dev=" + *m.openmpi, "openmpi-bin=" + *m.openmpi});
    }
}

void label(Text& out, const std::string& key, const std::string& value, bool last) {
    out << "      " << key << "=" << dockerfile_quote(value) << (last ? "\n" : " \\\n");
}

void footer(Text& out, const Variant& v) {
    const Manifest& m = *v.manifest;
    if (m.user) {
        const UserSpec& u = *m.user;
        const std::string uid = std::to_string(u.uid), gid = std::to_string(u.gid);
        // Ubuntu 24.04 based images ship a user "ubuntu" with uid/gid 1000; an account the
        // base image already has at the manifest's uid/gid is removed so the ids are the
        // manifest's.
        out << "\n# Non-root user " << u.name << " (" << uid << ":" << gid << ").\n"
            << "RUN if getent passwd " << uid << " >/dev/null; then userdel \"$(getent passwd "
            << uid << " | cut -d: -f1)\"; fi \\\n"
            << " && if getent group " << gid << " >/dev/null; then groupdel \"$(getent group "
            << gid << " | cut -d: -f1)\"; fi \\\n"
            << " && groupadd --gid " << gid << " " << u.name << " \\\n"
            << " && useradd --uid " << uid << " --gid " << gid
            << " --create-home --shell /bin/bash " << u.name << "\n"
            << "USER " << uid << ":" << gid << "\n"
            << "WORKDIR /home/" << u.name << "\n";
    }
    if (!m.env.empty()) {
        out << "\n";
        for (std::size_t i = 0; i < m.env.size(); ++i)
            out << (i ? "    " : "ENV ") << m.env[i].first << "="
                << dockerfile_quote(m.env[i].second) << (i + 1 < m.env.size() ? " \\\n" : "\n");
    }
    const auto labels = image_labels(v);
    if (python_set_label_withheld(v))
        out << "\n# No io.torchdock.python-set label: the platforms' locked sets pin different "
               "versions,\n# and one label serves every platform's image.";
    out << "\nLABEL ";
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (i == 0)
            out << labels[i].first << "=" << dockerfile_quote(labels[i].second) << " \\\n";
        else
            label(out, labels[i].first, labels[i].second, i + 1 == labels.size());
    }
}

}  // namespace

std::string format_number(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
}

std::string dockerfile_quote(const std::string& value) {
    // Values are checked by the grammars before they get here; a control character that
    // slipped through is still never written raw (a newline would end the instruction).
    std::string out = "\"";
    for (char c : value) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\\\x%02x", u);
            out += buf;
            continue;
        }
        if (c == '"' || c == '\\' || c == '$') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string render_dockerfile(const Variant& v) {
    Text out;
    out.s.reserve(4096);
    header(out, v);
    system_layer(out, v);
    unlocked_torch_layer(out, v);
    extras_layers(out, v);
    python_extras_layers(out, v);
    source_build_stages(out, v);
    footer(out, v);
    return std::move(out.s);
}

}  // namespace td
