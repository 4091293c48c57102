#include "core/build/settings_trust.hpp"

#include "util/strings.hpp"

namespace td {

namespace {

std::string octal_mode(unsigned mode) {
    std::string out;
    for (int shift = 9; shift >= 0; shift -= 3)
        out += static_cast<char>('0' + ((mode >> shift) & 7));
    return out;
}

// "/a/b" -> "/a"; "/a" -> "/"; "/" -> "".
std::string parent_of(std::string_view dir) {
    if (dir == "/" || dir.empty()) return {};
    auto slash = dir.rfind('/');
    if (slash == std::string_view::npos) return {};
    return slash == 0 ? std::string("/") : std::string(dir.substr(0, slash));
}

}  // namespace

std::string settings_origin_name(SettingsOrigin origin) {
    switch (origin) {
        case SettingsOrigin::flag:
            return "--config";
        case SettingsOrigin::environment:
            return "$TORCHDOCK_CONFIG";
        case SettingsOrigin::user_config:
            return "your config directory";
        case SettingsOrigin::repository:
            return "the working tree";
    }
    return "";
}

bool may_name_host_files(SettingsOrigin origin) { return origin != SettingsOrigin::repository; }

std::vector<std::string> settings_search_dirs(
    std::string_view start, std::string_view home,
    const std::function<bool(const std::string& dir)>& is_repository_root) {
    std::string stop_home(home);
    while (stop_home.size() > 1 && stop_home.back() == '/') stop_home.pop_back();
    std::vector<std::string> dirs;
    for (std::string dir(start); !dir.empty(); dir = parent_of(dir)) {
        dirs.push_back(dir);
        if ((!stop_home.empty() && dir == stop_home) || is_repository_root(dir)) return dirs;
    }
    // Neither a repository root nor the home directory above: the working directory only.
    if (dirs.size() > 1) dirs.resize(1);
    return dirs;
}

std::string trust_problem(std::string_view path, const FileFacts& facts, unsigned user_uid) {
    if (facts.uid != user_uid && facts.uid != 0)
        return std::string(path) + " is owned by uid " + std::to_string(facts.uid) +
               ", not by you (uid " + std::to_string(user_uid) + ") or root";
    if (facts.mode & 022)
        return std::string(path) + " is writable by " +
               ((facts.mode & 002) ? (facts.mode & 020 ? "group and others" : "others")
                                   : "its group") +
               " (mode " + octal_mode(facts.mode) + (facts.mode & 01000 ? ", sticky" : "") + ")";
    return {};
}

bool path_within(std::string_view root, std::string_view path) {
    if (root.empty() || path.empty() || root.front() != '/' || path.front() != '/') return false;
    while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
    if (root == "/") return true;
    if (!path.starts_with(root)) return false;
    return path.size() == root.size() || path[root.size()] == '/';
}

std::string origin_problem(SettingsOrigin origin, const Settings& settings, std::string_view file) {
    if (may_name_host_files(origin) || settings.indexes.netrc.empty()) return {};
    return std::string(file) + ": $.indexes.netrc: the working tree's torchdock.json may not " +
           "name a credentials file (" + quote_value(settings.indexes.netrc) +
           "): a repository chooses no host secrets. Pass --index-netrc FILE, or set " +
           "indexes.netrc in your own settings ($XDG_CONFIG_HOME/torchdock/torchdock.json, " +
           "--config or $TORCHDOCK_CONFIG)";
}

std::string secret_file_problem(std::string_view what, std::string_view real_path,
                                const FileFacts& facts, unsigned user_uid) {
    const std::string name = std::string(what) + " " + quote_value(real_path);
    for (std::string_view pseudo : {"/proc", "/sys", "/dev"})
        if (path_within(pseudo, real_path))
            return name + " is under " + std::string(pseudo) +
                   ", not a file of credentials; name a regular file you own";
    if (facts.kind != FileFacts::Kind::regular)
        return name + " is not a regular file; name a regular file you own";
    if (facts.uid != user_uid)
        return name + " is owned by uid " + std::to_string(facts.uid) + ", not by you (uid " +
               std::to_string(user_uid) + "); name a file you own";
    if (facts.mode & 022)
        return name + " is writable by group or others (mode " + octal_mode(facts.mode) +
               "); chmod go-w it";
    return {};
}

}  // namespace td
