// `torchdock kb refresh`: the one command that reads a package index; prints each fact
// that changed with its source, then writes data/torch.json (or, with --check, only
// reports and exits 1 when the data disagrees with the index).
#include <chrono>
#include <cstdio>
#include <iostream>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "engine/files.hpp"
#include "engine/kb_refresh.hpp"
#include "engine/project_loader.hpp"
#include "util/strings.hpp"

namespace td::app {

int run_kb_refresh(const CommonOptions& common, const KbRefreshOptions& opts) {
    auto data_dir = engine::find_data_dir(common.data_dir);
    auto text = engine::read_text_file(data_dir / "torch.json");
    if (!text) return fail(text.error());
    engine::RefreshOptions ro;
    ro.index_url = opts.index_url;
    ro.index_label = opts.index_label ? *opts.index_label
                                      : (opts.index_url == engine::k_default_index_url
                                             ? std::string("PyPI")
                                             : std::string("the package index"));
    ro.releases = opts.releases;
    ro.jobs = opts.jobs;
    auto start = std::chrono::steady_clock::now();
    auto result = engine::refresh_torch_data(text.value(), ro);
    if (!result) {
        auto e = result.error();
        if (e.kind == ErrorKind::Environment)
            e.message +=
                " (kb refresh needs the package index; render, validate and the other "
                "commands work offline)";
        return fail(e);
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& changes = result->update.changes;
    std::string last;
    for (const auto& c : changes) {
        if (c.release != last) {
            std::cout << "torch " << c.release << (c.new_release ? " (new release)" : "") << "\n";
            last = c.release;
        }
        std::cout << "  " << c.path << ": " << c.before << " -> " << c.after << "\n"
                  << "      source: " << c.source << "\n";
    }
    for (const auto& s : result->skipped) std::cerr << "torchdock: skipped " << s << "\n";
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", seconds);
    std::cerr << "torchdock: read " << result->releases.size() << " torch release"
              << (result->releases.size() == 1 ? "" : "s") << " from " << ro.index_label << " ("
              << result->requests << " requests, " << result->bytes / 1024 << " KiB, " << secs
              << " s); " << changes.size() << " fact" << (changes.size() == 1 ? "" : "s")
              << " differ from " << (data_dir / "torch.json").string() << "\n";
    if (opts.check) {
        if (!changes.empty()) {
            std::cerr << "torchdock: the knowledge base disagrees with " << ro.index_label
                      << "; run `torchdock kb refresh` to update it\n";
            return k_exit_check_failed;
        }
        return k_exit_ok;
    }
    if (result->update.text != text.value()) {
        auto written = engine::write_files(data_dir, {{"torch.json", result->update.text}});
        if (!written) return fail(written.error());
        std::cerr << "torchdock: wrote " << (data_dir / "torch.json").string()
                  << "; run `torchdock render` to regenerate the Dockerfiles\n";
    }
    return k_exit_ok;
}

}  // namespace td::app
