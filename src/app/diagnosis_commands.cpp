// `torchdock diff` and `torchdock explain`.
#include <algorithm>
#include <iostream>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "core/diagnose/diff_selection.hpp"
#include "core/diagnose/explain.hpp"
#include "core/json/json_text.hpp"
#include "engine/data_files.hpp"
#include "engine/files.hpp"
#include "engine/interrupt.hpp"
#include "engine/project_loader.hpp"
#include "report/diff_report.hpp"
#include "util/strings.hpp"

namespace td::app {

namespace {

Result<nlohmann::json> read_fingerprint(const std::string& path) {
    auto text = engine::read_text_file(path);
    if (!text) return Error{ErrorKind::Config, text.error().message};
    std::string why;
    // A fingerprint with a key twice is refused, as manifests are: which value is meant?
    auto j = parse_json_bounded(text.value(), why, 64, /*refuse_duplicate_keys=*/true);
    if (!j) return Error{ErrorKind::Config, terminal_text(path) + ": " + why};
    auto schema = j->is_object() ? j->find("schema") : j->end();
    if (!j->is_object() || schema == j->end() || *schema != 1)
        return Error{ErrorKind::Config, terminal_text(path) +
                                            ": not a torchdock fingerprint (schema 1; write "
                                            "one with `torchdock doctor --json`)"};
    return std::move(j.value());
}

}  // namespace

int run_diff(const DiffOptions& opts) {
    if (auto st = check_report_flags({{"--json", &opts.json}}); !st) return fail(st.error());
    auto selection = diff_selection(opts.all, opts.top, opts.only, opts.hide);
    if (!selection) return fail(selection.error());
    auto a = read_fingerprint(opts.a);
    if (!a) return fail(a.error());
    auto b = read_fingerprint(opts.b);
    if (!b) return fail(b.error());
    auto diffs = diff_fingerprints(a.value(), b.value());
    auto subject = [](const nlohmann::json& fp) {
        auto it = fp.find("subject");
        return it != fp.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    report::DiffSides sides{opts.a, opts.b, subject(a.value()), subject(b.value())};
    if (auto st = emit_report(opts.json, report::diff_json(diffs, sides)); !st)
        return fail(st.error());
    if (!to_stdout(opts.json))
        std::cout << report::diff_text(select_differences(diffs, selection.value()), sides);
    return diffs.empty() ? k_exit_ok : k_exit_check_failed;
}

int run_explain(const CommonOptions& common, const ExplainOptions& opts) {
    constexpr std::size_t k_block_bytes = 256 * 1024;  // read size: memory stays bounded
    if (auto st = check_report_flags({{"--json", &opts.json}}); !st) return fail(st.error());
    auto data = engine::load_data_files(common.data_dir, {.signatures = true});
    if (!data) return fail(data.error());
    const fs::path& data_dir = data->dir;
    std::optional<nlohmann::json> fingerprint;
    if (opts.fingerprint) {
        auto fp = read_fingerprint(*opts.fingerprint);
        if (!fp) return fail(fp.error());
        fingerprint = fp.value();
    }
    LogScanner scanner(*data->signatures);
    auto read = engine::read_blocks(opts.log, k_block_bytes,
                                    [&](std::string_view block) { scanner.feed(block); });
    if (!read) {
        if (engine::interrupted()) {
            print_error(read.error().message);
            return k_exit_interrupted;
        }
        return fail({ErrorKind::Config, read.error().message});
    }
    scanner.finish();
    auto found = scanner.explanations(fingerprint ? &*fingerprint : nullptr, data->kb);
    if (opts.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& e : found)
            out.push_back({{"id", e.id},
                           {"title", e.title},
                           {"family", e.family},
                           {"cause", e.cause},
                           {"fix", e.fix},
                           {"evidence", e.evidence},
                           {"facts", e.facts},
                           {"verdict", e.verdict},
                           {"vocabulary", e.vocabulary},
                           {"grade", e.grade()},
                           {"generic", e.generic}});
        nlohmann::json failures = nlohmann::json::array();
        if (found.empty())
            for (const auto& f : scanner.failure_lines())
                failures.push_back({{"line", f.line}, {"kind", f.kind}, {"text", f.text}});
        auto st = emit_report(
            opts.json,
            json_text(nlohmann::json{{"schema", 1},
                                     {"lines_read", scanner.lines()},
                                     {"grade", found.empty() ? "unknown" : found.front().grade()},
                                     {"explanations", out},
                                     {"unexplained_failures", failures}}));
        if (!st) return fail(st.error());
    }
    if (!to_stdout(opts.json)) {
        if (found.size() > 1)
            std::cout << found.size()
                      << " failures recognised, the most root-cause-like first:\n\n";
        for (const auto& e : found) {
            // Evidence lines and facts come from the log: shown escaped, never acted on.
            std::cout << e.id << "  " << e.title
                      << (e.generic ? "  (what " + e.family +
                                          " printed; no meaning or signature known for it)"
                          : e.catalog ? "  (meaning: what " + e.family +
                                            " says happened; no root-cause signature matched)"
                          : e.vocabulary ? "  (meaning of the code; no signature matched)"
                                         : std::string())
                      << "\n";
            for (const auto& line : e.evidence) std::cout << "  | " << terminal_text(line) << "\n";
            std::cout << "  cause: " << terminal_text(e.cause)
                      << "\n  fix:   " << terminal_text(e.fix) << "\n";
            if (!e.verdict.empty())
                std::cout << "  " << e.verdict << " (from " << *opts.fingerprint << ")\n";
            std::cout << "\n";
        }
    }
    if (found.empty()) {
        // Honest: the lines that read like failures, with their class, and no cause.
        auto failures = scanner.failure_lines();
        if (!to_stdout(opts.json) && !failures.empty()) {
            std::cout << "Lines that read like failures (not explained):\n";
            for (const auto& f : failures)
                std::cout << "  L" << f.line << " [" << f.kind << "] " << terminal_text(f.text)
                          << "\n";
        }
        std::cerr << "torchdock: no known failure signature, error code or tool message in this "
                     "log ("
                  << scanner.lines()
                  << " lines read); torchdock does not know the cause and does not guess. "
                     "Known: "
                  << (data_dir / "error_signatures").string() << "/*.json, "
                  << (data_dir / "vocabularies").string() << "/*.json, "
                  << (data_dir / "catalogs").string() << "/*.json\n";
        return k_exit_check_failed;
    }
    return k_exit_ok;
}

}  // namespace td::app
