#include "app/settings.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "app/console.hpp"
#include "engine/file_facts.hpp"
#include "engine/files.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace fs = std::filesystem;

namespace {

// "/a/b/" -> "/a/b"; relative paths made absolute against the working directory.
std::string normal_dir(const fs::path& dir) {
    std::error_code ec;
    std::string s = fs::absolute(dir, ec).lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
}

Error untrusted(const std::string& file, const std::string& why) {
    return Error{ErrorKind::Config,
                 "refusing the settings file " + file + ": " + why +
                     ". torchdock reads a torchdock.json it finds only when the file and the "
                     "directories holding it are yours or root's and not writable by group or "
                     "others. If you trust it, name it: --config " +
                     file + " or TORCHDOCK_CONFIG=" + file};
}

// The file and `dirs` (the directories that hold it) judged for the invoking user.
Status judge_found(const std::string& file, const std::vector<std::string>& dirs) {
    const unsigned uid = engine::current_uid();
    if (auto why = trust_problem(file, engine::stat_facts(file), uid); !why.empty())
        return untrusted(file, why);
    for (const auto& dir : dirs)
        if (auto why = trust_problem(dir, engine::stat_facts(dir), uid); !why.empty())
            return untrusted(file, why);
    return ok_status();
}

std::string home_directory() {
    const char* home = std::getenv("HOME");
    if (!home || *home != '/') return {};
    if (auto real = engine::real_path(home)) return *real;
    return normal_dir(home);
}

// The netrc handed to builds and uv: from the user, a regular file the user owns.
Status check_netrc(std::string& netrc) {
    const std::string what = "the index credentials file (indexes.netrc or --index-netrc)";
    auto real = engine::real_path(netrc);
    if (!real)
        return Error{ErrorKind::Config,
                     what + " " + quote_value(netrc) + " is not a readable file"};
    if (auto e = secret_file_problem(what, *real, engine::stat_facts(*real), engine::current_uid());
        !e.empty())
        return Error{ErrorKind::Config, e};
    if (auto e = check_secret_file_path(*real); !e.empty())
        return Error{ErrorKind::Config, what + ": " + e};
    netrc = *real;
    return ok_status();
}

}  // namespace

Result<std::optional<SettingsFile>> find_settings_file(const fs::path& start) {
    std::error_code ec;
    const std::string from = normal_dir(start);
    auto dirs = settings_search_dirs(from, home_directory(), [](const std::string& dir) {
        std::error_code e;
        return fs::exists(fs::path(dir) / ".git", e);
    });
    for (std::size_t i = 0; i < dirs.size(); ++i) {
        const std::string file = (fs::path(dirs[i]) / "torchdock.json").string();
        // A FIFO, a device or a directory of that name is not a settings file: looked past.
        if (engine::stat_facts(file).kind != FileFacts::Kind::regular) continue;
        // The repository's file, inside the repository (not a symlink out of it).
        const std::string root = engine::real_path(dirs.back()).value_or(dirs.back());
        auto real = engine::real_path(file);
        if (!real || !path_within(root, *real))
            return untrusted(file,
                             "it resolves to " + real.value_or("nothing") + ", outside " + root);
        std::vector<std::string> holding(dirs.begin() + static_cast<std::ptrdiff_t>(i), dirs.end());
        if (auto st = judge_found(file, holding); !st) return st.error();
        return std::optional<SettingsFile>(SettingsFile{file, SettingsOrigin::repository});
    }
    // Then the user's own.
    fs::path config;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
        config = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        config = fs::path(home) / ".config";
    if (config.empty()) return std::optional<SettingsFile>();
    const fs::path file = config / "torchdock" / "torchdock.json";
    if (engine::stat_facts(file).kind != FileFacts::Kind::regular)
        return std::optional<SettingsFile>();
    if (auto st = judge_found(file.string(), {(config / "torchdock").string()}); !st)
        return st.error();
    return std::optional<SettingsFile>(SettingsFile{file.string(), SettingsOrigin::user_config});
}

Result<Settings> load_settings(const SettingsOptions& opts, const WaiverCheck& check_waiver) {
    Settings settings;
    std::optional<SettingsFile> found;
    if (opts.config) {
        found = SettingsFile{*opts.config, SettingsOrigin::flag};
    } else if (const char* env = std::getenv("TORCHDOCK_CONFIG"); env && *env) {
        found = SettingsFile{env, SettingsOrigin::environment};
    } else {
        auto searched = find_settings_file(fs::current_path());
        if (!searched) return searched.error();
        found = searched.value();
    }
    if (found) {
        const std::string& path = found->path;
        note("settings from " + path + " (" + settings_origin_name(found->origin) + ")");
        auto text = engine::read_text_file(path);
        if (!text) return Error{ErrorKind::Config, text.error().message};
        Diagnostics diags(path);
        settings = parse_settings(text.value(), diags, check_waiver);
        if (!diags.empty()) {
            std::vector<Diagnostic> all = diags.items();
            std::stable_sort(all.begin(), all.end(), [](const Diagnostic& a, const Diagnostic& b) {
                return std::pair(a.pos.line, a.pos.col) < std::pair(b.pos.line, b.pos.col);
            });
            std::vector<std::string> lines;
            for (const auto& d : all) lines.push_back(format_diagnostic(d));
            return Error{ErrorKind::Config, std::to_string(all.size()) +
                                                " problem(s) in the settings file:\n" +
                                                join(lines, "\n")};
        }
        if (auto e = origin_problem(found->origin, settings, path); !e.empty())
            return Error{ErrorKind::Config, e};
        settings.file = path;
        settings.users_own = may_name_host_files(found->origin);
    }
    for (const auto& m : opts.mirrors) {
        auto parsed = parse_mirror(m);
        if (!parsed) return parsed.error();
        settings.mirrors[parsed->first] = parsed->second;
    }
    for (auto [flag, value, out] :
         {std::tuple{"--pypi-index", &opts.pypi_index, &settings.indexes.pypi},
          std::tuple{"--torch-index", &opts.torch_index, &settings.indexes.pytorch}}) {
        if (!*value) continue;
        if (auto e = check_index_url(**value); !e.empty())
            return Error{ErrorKind::Usage, std::string(flag) + ": " + e};
        *out = **value;
    }
    if (opts.index_netrc) settings.indexes.netrc = *opts.index_netrc;
    if (!settings.indexes.netrc.empty())
        if (auto st = check_netrc(settings.indexes.netrc); !st) return st.error();
    return settings;
}

}  // namespace td::app
