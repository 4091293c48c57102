#include "app/settings.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "engine/files.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace fs = std::filesystem;

Result<Settings> load_settings(const SettingsOptions& opts, const WaiverCheck& check_waiver) {
    Settings settings;
    std::string path;
    bool explicit_path = true;
    if (opts.config)
        path = *opts.config;
    else if (const char* env = std::getenv("TORCHDOCK_CONFIG"); env && *env)
        path = env;
    else {
        path = "torchdock.json";
        explicit_path = false;
    }
    if (explicit_path || fs::exists(path)) {
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
