#include "core/validate/platform.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace td {

std::string oci_arch(const std::string& name) {
    std::string n = to_lower(name);
    if (n == "x86_64" || n == "x86-64" || n == "amd64") return "amd64";
    if (n == "aarch64" || n == "arm64") return "arm64";
    return n;
}

std::string elf_machine_of(const std::string& arch) {
    std::string a = oci_arch(arch);
    if (a == "amd64") return "x86_64";
    if (a == "arm64") return "aarch64";
    return {};
}

std::optional<std::string> wheel_tag_machine(const std::string& tag) {
    auto parts = split(tag, '-');
    if (parts.size() != 3 || parts[2].empty()) return std::nullopt;
    // A compressed tag set ("manylinux_2_17_x86_64.manylinux2014_x86_64") names one machine.
    std::string platform = to_lower(split(parts[2], '.')[0]);
    if (platform == "any") return std::string();
    if (starts_with(platform, "macosx")) return std::string("macos");
    if (starts_with(platform, "win")) return std::string("windows");
    for (const char* m : {"x86_64", "aarch64", "i686", "ppc64le", "s390x", "armv7l", "riscv64"})
        if (ends_with(platform, std::string("_") + m)) return std::string(m);
    // NVIDIA tags its Arm server wheels sbsa (Server Base System Architecture): arm64.
    if (ends_with(platform, "_sbsa")) return std::string("aarch64");
    return platform;
}

std::string ReadingTier::name() const {
    switch (kind) {
        case Emulated:
            return "emulated";
        case FilesOnly:
            return "files-only";
        case Full:
            break;
    }
    return "full";
}

ReadingTier reading_tier(const std::string& image_arch, const std::string& engine_arch, bool forced,
                         bool emulated, bool probes_for_image) {
    if (forced)
        return {ReadingTier::FilesOnly,
                "--files-only: the image's files are read, none of its code is run"};
    std::string image = oci_arch(image_arch), engine = oci_arch(engine_arch);
    if (image.empty() || engine.empty() || image == engine) return {};
    const std::string on = "the image is linux/" + image + " and the engine runs linux/" + engine;
    const std::string elsewhere =
        ", so only the image's files are read (validate on a linux/" + image +
        " host, or where qemu-user emulates it, for the checks that run its code)";
    if (!emulated) return {ReadingTier::FilesOnly, on + " with no emulation for it" + elsewhere};
    if (!probes_for_image)
        return {ReadingTier::FilesOnly, on + "; this host emulates linux/" + image +
                                            " (binfmt qemu), but torchdock's linux/" + image +
                                            " probes were not built" + elsewhere};
    return {ReadingTier::Emulated,
            on +
                "; its code runs under qemu-user (this host's binfmt handler) with torchdock's "
                "linux/" +
                image + " probes: slower than native, and no GPU tier (a GPU is not emulated)"};
}

std::optional<std::string> probe_set_subdir(const std::string& image_arch,
                                            const std::string& engine_arch) {
    std::string image = oci_arch(image_arch), engine = oci_arch(engine_arch);
    if (image.empty() || engine.empty() || image == engine) return std::string();
    if (image == "arm64") return std::string("linux-arm64");
    return std::nullopt;
}

namespace {

std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string env_value(const std::vector<std::string>& environment, const std::string& name) {
    for (const auto& e : environment)
        if (starts_with(e, name + "=")) return e.substr(name.size() + 1);
    return {};
}

std::string parent(const std::string& p) {
    auto slash = p.find_last_of('/');
    return slash == std::string::npos || slash == 0 ? std::string("/") : p.substr(0, slash);
}

// "3.11" from "python3.11"; "" when the name has no minor.
std::string version_of_name(const std::string& file) {
    const std::string stem = "python";
    if (!starts_with(file, stem)) return {};
    std::string v = file.substr(stem.size());
    auto dot = v.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == v.size() ||
        v.find_first_not_of("0123456789.") != std::string::npos)
        return {};
    return v;
}

}  // namespace

std::vector<std::string> files_only_site_dirs(const std::string& path, const std::string& realpath,
                                              const std::vector<std::string>& environment) {
    std::vector<std::string> out;
    auto add = [&](const std::string& d) {
        if (!d.empty() && d[0] == '/' && std::find(out.begin(), out.end(), d) == out.end())
            out.push_back(d);
    };
    for (const auto& d : split(env_value(environment, "PYTHONPATH"), ':')) add(d);
    std::vector<std::string> versions;
    for (const auto& p : {realpath, path}) {
        std::string v = version_of_name(p.substr(p.find_last_of('/') + 1));
        if (!v.empty()) {
            versions.push_back(v);
            break;
        }
    }
    if (versions.empty())
        for (int minor = 14; minor >= 8; --minor) versions.push_back("3." + std::to_string(minor));
    const std::string venv = parent(parent(path));        // /app/.venv for /app/.venv/bin/python
    const std::string prefix = parent(parent(realpath));  // /usr for /usr/bin/python3.11
    const std::string home = env_value(environment, "HOME");
    for (const auto& v : versions) {
        const std::string py = "python" + v;
        if (venv != prefix) add(venv + "/lib/" + py + "/site-packages");
        add(prefix + "/lib/" + py + "/site-packages");
        add(prefix + "/lib64/" + py + "/site-packages");
        if (prefix == "/usr") {  // Debian and Ubuntu's python3 packages
            add("/usr/local/lib/" + py + "/dist-packages");
            add("/usr/lib/python3/dist-packages");
            add("/usr/lib/" + py + "/dist-packages");
        }
        if (!home.empty() && home != "/") add(home + "/.local/lib/" + py + "/site-packages");
    }
    return out;
}

TorchVersionFile parse_torch_version_py(const std::string& text) {
    TorchVersionFile out;
    // Lines like `__version__ = '2.11.0+cu130'` and `cuda: Optional[str] = '13.0'` (or None).
    auto value = [](const std::string& line) -> std::optional<std::string> {
        auto eq = line.find('=');
        if (eq == std::string::npos) return std::nullopt;
        std::string v = trim(line.substr(eq + 1));
        if (v == "None") return std::string();
        if (v.size() >= 2 && (v[0] == '\'' || v[0] == '"') && v.back() == v[0])
            return v.substr(1, v.size() - 2);
        return std::nullopt;
    };
    for (const auto& raw : split(text, '\n')) {
        std::string line = trim(raw);
        auto name_end = line.find_first_of(" :=");
        if (name_end == std::string::npos) continue;
        std::string name = line.substr(0, name_end);
        if (name != "__version__" && name != "cuda" && name != "hip") continue;
        auto v = value(line);
        if (!v) continue;
        if (name == "__version__") {
            out.version = *v;
            out.read = true;
        } else if (name == "cuda") {
            out.cuda = *v;
        } else {
            out.hip = *v;
        }
    }
    return out;
}

}  // namespace td
