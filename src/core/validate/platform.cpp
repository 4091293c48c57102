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

namespace {

// OCI architecture names and the ELF machine names probe-env reports for them.
constexpr std::pair<const char*, const char*> k_arch_names[] = {
    {"amd64", "x86_64"}, {"arm64", "aarch64"},     {"riscv64", "riscv"},
    {"s390x", "s390"},   {"ppc64le", "ppc64"},     {"386", "i386"},
    {"arm", "arm"},      {"loong64", "loongarch"}, {"mips64le", "mips"}};

// "x86_64" from probe-env's "x86_64/64"; "" from "".
std::string machine_of_identity(const std::string& identity) {
    return identity.substr(0, identity.find('/'));
}

// The ELF machine of a probe-env identity object, following a `#!` script to its program.
std::string identity_machine(const nlohmann::json& id, std::string& file) {
    for (const nlohmann::json* at = &id; at && at->is_object();) {
        if (at->contains("elf") && (*at)["elf"].is_string()) {
            file = at->value("realpath", at->value("path", std::string()));
            if (file.empty()) file = at->value("path", std::string());
            return machine_of_identity((*at)["elf"].get<std::string>());
        }
        auto runs = at->find("runs");
        at = runs == at->end() ? nullptr : &*runs;
    }
    return {};
}

}  // namespace

std::string oci_arch_of_elf(const std::string& machine) {
    for (const auto& [oci, elf] : k_arch_names)
        if (machine == elf) return oci;
    return machine;
}

FilesPlatform files_platform(const nlohmann::json& env) {
    if (!env.is_object()) return {};
    std::string file;
    auto found = [&](const std::string& machine, const std::string& what) -> FilesPlatform {
        return {machine, file + " (" + what + ") is an " + machine + " ELF"};
    };
    if (auto py = env.find("python"); py != env.end() && py->is_object())
        for (const char* name : {"python3", "python"})
            if (auto p = py->find(name);
                p != py->end() && p->is_object() && p->contains("identity"))
                if (auto m = identity_machine((*p)["identity"], file); !m.empty())
                    return found(m, std::string("the `") + name + "` PATH runs");
    if (auto list = env.find("interpreters"); list != env.end() && list->is_array())
        for (const auto& i : *list)
            if (i.is_object() && i.contains("elf") && i["elf"].is_string()) {
                file = i.value("realpath", i.value("path", std::string()));
                return found(machine_of_identity(i["elf"].get<std::string>()), "an interpreter");
            }
    if (auto sh = env.find("shell"); sh != env.end())
        if (auto m = identity_machine(*sh, file); !m.empty()) return found(m, "its shell");
    return {};
}

std::string platform_claim_problem(const std::string& config_arch, const FilesPlatform& files) {
    if (config_arch.empty() || files.machine.empty()) return {};
    const std::string claimed = oci_arch(config_arch);
    const std::string actual = oci_arch_of_elf(files.machine);
    if (claimed == actual) return {};
    return "the image config says linux/" + claimed + ", but its files are built for linux/" +
           actual + " (" + files.evidence + ")";
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
