#include "app/settings.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "app/console.hpp"
#include "engine/files.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace fs = std::filesystem;

std::optional<std::string> find_settings_file(const fs::path& start) {
    std::error_code ec;
    // torchdock.json in this directory or one above it, up to the repository's root.
    for (fs::path dir = fs::absolute(start, ec); !ec && !dir.empty(); dir = dir.parent_path()) {
        if (fs::is_regular_file(dir / "torchdock.json", ec))
            return (dir / "torchdock.json").string();
        if (fs::exists(dir / ".git", ec) || dir == dir.parent_path()) break;
    }
    // Then the user's own.
    fs::path config;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
        config = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        config = fs::path(home) / ".config";
    if (!config.empty() && fs::is_regular_file(config / "torchdock" / "torchdock.json", ec))
        return (config / "torchdock" / "torchdock.json").string();
    return std::nullopt;
}

Result<Settings> load_settings(const SettingsOptions& opts, const WaiverCheck& check_waiver) {
    Settings settings;
    std::optional<std::string> found;
    if (opts.config)
        found = *opts.config;
    else if (const char* env = std::getenv("TORCHDOCK_CONFIG"); env && *env)
        found = env;
    else
        found = find_settings_file(fs::current_path());
    if (found) {
        const std::string& path = *found;
        detail("settings from " + path);
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
    if (!settings.indexes.netrc.empty()) {
        std::error_code ec;
        if (!fs::is_regular_file(settings.indexes.netrc, ec))
            return Error{ErrorKind::Config, "the index credentials file " +
                                                quote_value(settings.indexes.netrc) +
                                                " (indexes.netrc or --index-netrc) is not a "
                                                "readable file"};
        settings.indexes.netrc = fs::absolute(settings.indexes.netrc).string();
        if (auto e = check_secret_file_path(settings.indexes.netrc); !e.empty())
            return Error{ErrorKind::Config,
                         "the index credentials file (indexes.netrc or --index-netrc): " + e};
    }
    return settings;
}

}  // namespace td::app
