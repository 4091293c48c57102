// `torchdock kb refresh`: the one command that reads a package index; prints each fact
// that changed with its source, then writes data/torch.json and today's date into
// data/knowledge_base.json (or, with --check, only reports and exits 1 when the data
// disagrees with the index).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "core/knowledge/kb_stamp.hpp"
#include "engine/dir_lock.hpp"
#include "engine/extension_refresh.hpp"
#include "engine/files.hpp"
#include "engine/kb_refresh.hpp"
#include "engine/project_loader.hpp"
#include "engine/wheel_arch_reader.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace {

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// What reading one wheel's binaries cost, so a user sees why --arch-lists is slow.
void print_arch_scan(const std::string& wheel, const engine::WheelArchScan& scan) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "torchdock: arch list %s from %s in %s: %llu fatbin container%s; read %.1f of "
                  "%.1f MiB by range, inflated %.1f of %.1f MiB, %.1f s (%s)\n",
                  join(scan.list.entries, ";").c_str(), engine::k_torch_cuda_library, wheel.c_str(),
                  static_cast<unsigned long long>(scan.containers), scan.containers == 1 ? "" : "s",
                  mib(scan.stream.bytes_fetched), mib(scan.stream.compressed_size),
                  mib(scan.stream.inflated), mib(scan.stream.uncompressed_size), scan.seconds,
                  scan.stream.stopped_early ? "stopped where the containers end"
                                            : "read to the end, CRC-32 checked");
    std::cerr << line;
}

// Index text (file names, requirement text, curl's words about a URL) reaches the
// terminal only escaped: each line through terminal_text.
std::string shown(const std::string& text) {
    std::string out;
    auto lines = split(text, '\n');
    for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + terminal_text(lines[i]);
    return out;
}

int fail_shown(Error e) {
    e.message = shown(e.message);
    return fail(e);
}

}  // namespace

// `kb refresh --extensions`: data/extensions.json from the index.
int run_kb_refresh_extensions(const std::filesystem::path& data_dir, const KbRefreshOptions& opts,
                              const std::string& index_url, const std::string& index_label) {
    const char* file = "extensions.json";
    auto text = engine::read_text_file(data_dir / file);
    if (!text) return fail_shown(text.error());
    auto current = parse_extension_facts(text.value());
    if (!current) return fail_shown(current.error());
    auto start = std::chrono::steady_clock::now();
    auto result = engine::refresh_extension_facts(
        current.value(), index_url, index_label, opts.releases, [&](const std::string& what) {
            progress("kb refresh: reading " + what + " from " + terminal_text(index_label));
        });
    if (!result) return fail_shown(result.error());
    // Names from the index (wheel members, specifiers) on one line each, escaped.
    for (const auto& line : result->scans)
        std::cerr << "torchdock: " << terminal_text(line) << "\n";
    for (const auto& c : result->changes) std::cout << terminal_text(c) << "\n";
    for (const auto& r : result->refused)
        std::cerr << "torchdock: warning: refused what the index says of " << terminal_text(r)
                  << "\n";
    std::string updated = extension_facts_text(result->facts);
    // The last gate: the file is read back by the very loader every command uses.
    if (auto back = engine::load_knowledge_base_with(data_dir, file, updated); !back) {
        Error e = back.error();
        e.message = "the refreshed " + (data_dir / file).string() +
                    " would not load, so nothing was written: " + e.message;
        return fail_shown(e);
    }
    const int refused_exit = result->refused.empty() ? k_exit_ok : k_exit_check_failed;
    auto said_refused = [&] {
        if (!result->refused.empty())
            std::cerr << "torchdock: " << result->refused.size() << " release"
                      << (result->refused.size() == 1 ? " was" : "s were")
                      << " refused (see the warnings above); the rest of the file is "
                      << (opts.check ? "as checked" : "up to date") << "\n";
        return refused_exit;
    };
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    std::cerr << "torchdock: read the tracked extension releases from " << shown(index_label)
              << " (" << result->requests << " requests, " << result->bytes / 1024 << " KiB, "
              << secs << " s); " << result->changes.size() << " change"
              << (result->changes.size() == 1 ? "" : "s") << "\n";
    if (opts.check) {
        if (updated == text.value()) return said_refused();
        std::cerr << "torchdock: data/extensions.json disagrees with " << shown(index_label)
                  << "; run `torchdock kb refresh --extensions` to update it\n";
        return k_exit_check_failed;
    }
    if (updated == text.value()) return said_refused();
    auto held = engine::DirLock::acquire(data_dir, engine::k_data_lock_file,
                                         std::chrono::seconds(opts.lock_wait_s),
                                         [](const std::filesystem::path&) {});
    if (!held) return fail_shown(held.error());
    auto written = engine::write_files(
        data_dir,
        {{file, updated}, {k_kb_stamp_file, kb_stamp_text(now_text("%Y-%m-%d", /*utc=*/true))}});
    if (!written) return fail_shown(written.error());
    std::cerr << "torchdock: wrote " << (data_dir / file).string()
              << "; run `torchdock render` to check the manifests against it\n";
    return said_refused();
}

int run_kb_refresh(const CommonOptions& common, const KbRefreshOptions& opts) {
    if (opts.extensions && opts.arch_lists)
        return fail({ErrorKind::Usage,
                     "--arch-lists reads torch's arch lists; --extensions already reads the GPU "
                     "code of every object in the extension wheels: give one of them"});
    auto data_dir = engine::find_data_dir(common.data_dir);
    engine::RefreshOptions ro;
    bool pip_default = opts.index_url.empty();
    if (pip_default) {
        auto index = engine::pip_default_index("name the index with --index-url");
        if (!index) return fail(index.error());
        ro.index_url = index.value();
    } else {
        ro.index_url = opts.index_url;
    }
    ro.index_label = opts.index_label ? *opts.index_label
                                      : std::string(pip_default ? "PyPI" : "the package index");
    if (opts.extensions)
        return run_kb_refresh_extensions(data_dir, opts, ro.index_url, ro.index_label);
    auto text = engine::read_text_file(data_dir / "torch.json");
    if (!text) return fail_shown(text.error());
    ro.releases = opts.releases;
    ro.jobs = opts.jobs;
    ro.on_progress = [&ro](const std::string& what) {
        progress("kb refresh: reading " + what + " from " + terminal_text(ro.index_label));
    };
    std::optional<engine::FatbinArchReader> arch_reader;
    if (opts.arch_lists) arch_reader.emplace(ro.index_label);
    auto start = std::chrono::steady_clock::now();
    auto result =
        engine::refresh_torch_data(text.value(), ro, arch_reader ? &*arch_reader : nullptr);
    if (!result) {
        auto e = result.error();
        if (e.kind == ErrorKind::Environment)
            e.message +=
                " (kb refresh needs the package index; render, validate and the other "
                "commands work offline)";
        return fail_shown(e);
    }
    for (const auto& release : result->facts)
        for (const auto& note : release.notes)
            std::cerr << "torchdock: torch " << shown(release.version) << ": " << shown(note)
                      << "\n";
    // Writing: the facts are applied again to the file as it is under the data directory's
    // lock, so a run that wrote meanwhile keeps its update (read-modify-write under flock).
    std::optional<engine::DirLock> lock;
    if (!opts.check) {
        auto held = engine::DirLock::acquire(
            data_dir, engine::k_data_lock_file, std::chrono::seconds(opts.lock_wait_s),
            [](const std::filesystem::path& p) {
                std::cerr << "torchdock: waiting for the lock " << shown(p.string())
                          << " (another kb refresh is writing this data directory)\n";
            });
        if (!held) return fail_shown(held.error());
        lock.emplace(std::move(held.value()));
        auto now = engine::read_text_file(data_dir / "torch.json");
        if (!now) return fail_shown(now.error());
        if (now.value() != text.value()) {
            auto again = pypi::update_torch_data(now.value(), result->facts);
            if (!again) return fail_shown(again.error());
            result->update = std::move(again.value());
            text = std::move(now);
        }
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& changes = result->update.changes;
    std::string last;
    for (const auto& c : changes) {
        if (c.release != last) {
            std::cout << "torch " << shown(c.release) << (c.new_release ? " (new release)" : "")
                      << "\n";
            last = c.release;
        }
        std::cout << "  " << shown(c.path) << ": " << shown(c.before) << " -> " << shown(c.after)
                  << "\n"
                  << "      source: " << shown(c.source) << "\n";
    }
    for (const auto& s : result->skipped) std::cerr << "torchdock: skipped " << shown(s) << "\n";
    if (arch_reader)
        for (const auto& [wheel, scan] : arch_reader->scans()) print_arch_scan(shown(wheel), scan);
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", seconds);
    std::cerr << "torchdock: read " << result->releases.size() << " torch release"
              << (result->releases.size() == 1 ? "" : "s") << " from " << shown(ro.index_label)
              << " (" << result->requests << " requests, " << result->bytes / 1024 << " KiB, "
              << secs << " s); " << changes.size() << " fact" << (changes.size() == 1 ? "" : "s")
              << " differ from " << (data_dir / "torch.json").string() << "\n";
    if (opts.check) {
        if (!changes.empty()) {
            std::cerr << "torchdock: the knowledge base disagrees with " << shown(ro.index_label)
                      << "; run `torchdock kb refresh` to update it\n";
            return k_exit_check_failed;
        }
        return k_exit_ok;
    }
    if (result->update.text != text.value()) {
        // The last gate, as for --extensions: the loader every command uses reads it back.
        if (auto back =
                engine::load_knowledge_base_with(data_dir, "torch.json", result->update.text);
            !back) {
            Error e = back.error();
            e.message = "the refreshed " + (data_dir / "torch.json").string() +
                        " would not load, so nothing was written: " + e.message;
            return fail_shown(e);
        }
        auto written = engine::write_files(
            data_dir, {{"torch.json", result->update.text},
                       {k_kb_stamp_file, kb_stamp_text(now_text("%Y-%m-%d", /*utc=*/true))}});
        if (!written) return fail_shown(written.error());
        std::cerr << "torchdock: wrote " << (data_dir / "torch.json").string()
                  << "; run `torchdock render` to regenerate the Dockerfiles\n";
    }
    return k_exit_ok;
}

}  // namespace td::app
