#include "app/mirror_settings.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/build/settings.hpp"
#include "engine/files.hpp"
#include "util/strings.hpp"

namespace td::app {

Result<Mirrors> load_mirrors(const MirrorOptions& opts) {
    Mirrors mirrors;
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
    if (explicit_path || std::filesystem::exists(path)) {
        auto text = engine::read_text_file(path);
        if (!text) return Error{ErrorKind::Config, text.error().message};
        Diagnostics diags(path);
        Settings s = parse_settings(text.value(), diags);
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
        mirrors = s.mirrors;
    }
    for (const auto& m : opts.mirrors) {
        auto parsed = parse_mirror(m);
        if (!parsed) return parsed.error();
        mirrors[parsed->first] = parsed->second;
    }
    return mirrors;
}

}  // namespace td::app
