#include "core/render/apt_lock.hpp"

#include "core/grammar/grammar.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

std::string package_name(const std::string& requirement) {
    return requirement.substr(0, requirement.find('='));
}

// "Inst curl (7.88.1-10+deb12u14 Debian:12.12/stable [amd64])" and the upgrade form
// "Inst libc6 [2.36-9] (2.36-9+deb12u13 Debian-Security:12/stable-security [amd64])".
bool inst_line(std::string_view line, std::string& name, std::string& version) {
    if (!line.starts_with("Inst ")) return false;
    line.remove_prefix(5);
    auto sp = line.find(' ');
    if (sp == std::string_view::npos) return false;
    name = std::string(line.substr(0, sp));
    auto open = line.find('(', sp);
    if (open == std::string_view::npos) return false;
    auto end = line.find(' ', open);
    if (end == std::string_view::npos) return false;
    version = std::string(line.substr(open + 1, end - open - 1));
    return true;
}

// "curl is already the newest version (7.88.1-10+deb12u14)."
bool present_line(std::string_view line, std::string& name, std::string& version) {
    const std::string_view marker = " is already the newest version (";
    auto at = line.find(marker);
    if (at == std::string_view::npos || !line.ends_with(").")) return false;
    name = std::string(line.substr(0, at));
    version = std::string(line.substr(at + marker.size(), line.size() - 2 - at - marker.size()));
    return true;
}

}  // namespace

Result<AptLock> parse_apt_simulation(std::string_view text, const AptLockInputs& inputs) {
    AptLock lock;
    lock.inputs = inputs;
    std::vector<std::string> apt_errors;
    auto lines = split(std::string(text), '\n');
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string line = lines[i];
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::string name, version;
        bool inst = inst_line(line, name, version);
        if (!inst && !present_line(line, name, version)) {
            if (line.starts_with("E: ")) apt_errors.push_back(line.substr(0, 300));
            continue;
        }
        std::string pin = name + "=" + version;
        if (auto e = grammar::check_apt_requirement(pin); !e.empty())
            return Error{ErrorKind::Config, "apt's answer, line " + std::to_string(i + 1) + ": " +
                                                e + " (" + quote_value(line.substr(0, 160)) + ")"};
        (inst ? lock.resolved : lock.present)[name] = version;
    }
    std::vector<std::string> missing;
    for (const auto& req : inputs.packages) {
        std::string name = package_name(req);
        if (!lock.resolved.count(name) && !lock.present.count(name)) missing.push_back(req);
    }
    if (!missing.empty())
        return Error{ErrorKind::Config,
                     "apt in " + inputs.base + " did not resolve " + join(missing, ", ") +
                         (apt_errors.empty() ? std::string(" (it printed no error)")
                                             : ": " + join(apt_errors, "; "))};
    return lock;
}

std::string apt_resolution_dockerfile(const std::string& base_from,
                                      const std::vector<std::string>& packages) {
    // An archive that cannot be reached fails the build (the environment's problem); apt
    // refusing a package does not: its answer, "E:" lines included, is read as the verdict.
    std::string out =
        "# Written by `torchdock lock`: what apt in this base installs for the manifest's "
        "packages.\nFROM " +
        base_from +
        " AS resolve\nRUN apt-get update -qq \\\n && { apt-get install --simulate "
        "--no-install-recommends -y";
    for (const auto& p : packages) out += " \\\n      " + p;
    out += std::string(" >/") + k_apt_resolution_file +
           " 2>&1 || true; }\nFROM scratch\nCOPY --from=resolve /" + k_apt_resolution_file + " /\n";
    return out;
}

bool has_unpinned(const std::vector<std::string>& packages) {
    for (const auto& p : packages)
        if (p.find('=') == std::string::npos) return true;
    return false;
}

std::vector<std::string> apt_locked_pins(const AptLock& lock) {
    std::vector<std::string> out;
    for (const auto& [name, version] : lock.resolved) out.push_back(name + "=" + version);
    return out;
}

std::vector<std::string> diff_apt_locks(const AptLock& locked, const AptLock& fresh) {
    std::vector<std::string> out;
    for (const auto& [name, version] : locked.resolved) {
        auto it = fresh.resolved.find(name);
        if (it == fresh.resolved.end())
            out.push_back("gone: " + name + " " + version);
        else if (it->second != version)
            out.push_back(name + " " + version + " -> " + it->second);
    }
    for (const auto& [name, version] : fresh.resolved)
        if (!locked.resolved.count(name)) out.push_back("new: " + name + " " + version);
    return out;
}

}  // namespace td
