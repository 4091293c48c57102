// `torchdock diff` and `torchdock preflight`.
#include <algorithm>
#include <iostream>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "core/diagnose/explain.hpp"
#include "core/diagnose/fingerprint_diff.hpp"
#include "core/diagnose/preflight.hpp"
#include "core/json/json_text.hpp"
#include "core/validate/checks.hpp"
#include "engine/docker_api.hpp"
#include "engine/files.hpp"
#include "engine/interrupt.hpp"
#include "engine/probe_exec.hpp"
#include "engine/project_loader.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td::app {

namespace {

Result<nlohmann::json> read_fingerprint(const std::string& path) {
    auto text = engine::read_text_file(path);
    if (!text) return Error{ErrorKind::Config, text.error().message};
    std::string why;
    auto j = parse_json_bounded(text.value(), why);
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
    auto a = read_fingerprint(opts.a);
    if (!a) return fail(a.error());
    auto b = read_fingerprint(opts.b);
    if (!b) return fail(b.error());
    auto diffs = diff_fingerprints(a.value(), b.value());
    if (opts.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& d : diffs)
            out.push_back({{"path", d.path},
                           {"a", d.a},
                           {"b", d.b},
                           {"category", d.category},
                           {"weight", d.weight},
                           {"why", d.why}});
        std::cout << json_text(
            nlohmann::json{{"schema", 1}, {"a", opts.a}, {"b", opts.b}, {"differences", out}});
    } else if (diffs.empty()) {
        std::cout << "no differences\n";
    } else {
        std::vector<std::vector<std::string>> rows;
        for (std::size_t i = 0; i < diffs.size(); ++i) {
            const auto& d = diffs[i];
            auto clip = [](const std::string& s) {
                return s.size() > 40 ? s.substr(0, 37) + "..." : s;
            };
            rows.push_back(
                {std::to_string(i + 1), d.category, d.path, clip(d.a), clip(d.b), d.why});
        }
        std::cout << report::format_table({"RANK", "CATEGORY", "WHAT", "A", "B", "WHY IT MATTERS"},
                                          rows);
    }
    return diffs.empty() ? k_exit_ok : k_exit_check_failed;
}

int run_preflight(const CommonOptions& common, const PreflightOptions& opts) {
    auto data_dir = engine::find_data_dir(common.data_dir);
    auto kb = engine::load_knowledge_base(data_dir);
    if (!kb) return fail(kb.error());
    auto fc_text = engine::read_text_file(data_dir / "forward_compat.json");
    if (!fc_text) return fail({ErrorKind::Config, fc_text.error().message});
    auto fc = ForwardCompat::parse(fc_text.value());
    if (!fc) return fail(fc.error());

    std::string driver = opts.driver.value_or("");
    std::vector<std::string> gpus;
    for (const auto& g : opts.gpus)
        for (const auto& part : split(g, ','))
            if (!part.empty()) gpus.push_back(part);
    if (opts.host) {
        auto run =
            engine::run_probe_on_host({"cuda", "probe-cuda", {}, false, false, {}},
                                      opts.probes_dir ? std::filesystem::path(*opts.probes_dir)
                                                      : engine::default_probes_dir(),
                                      60);
        if (!run.usable())
            return fail(
                {ErrorKind::Environment, "--host: the cuda probe could not run: " + run.reason});
        if (run.data.contains("nvidia_driver") && run.data["nvidia_driver"].is_string())
            driver = run.data["nvidia_driver"];
        if (run.data.contains("devices"))
            for (const auto& d : run.data["devices"]) gpus.push_back(d.value("name", ""));
        if (driver.empty()) {
            print_error("--host: no NVIDIA driver on this host (" + run.reason + ")");
            return k_exit_environment;
        }
    }
    if (driver.empty() || gpus.empty()) {
        print_error("give --driver VERSION and --gpu MODEL[,MODEL...], or --host");
        return k_exit_config;
    }
    if (auto v = Version::parse(driver); !v || v->parts().size() < 2) {
        print_error("--driver " + quote_value(driver) +
                    " is not an NVIDIA driver version (like 535.104.05 or 570.124)");
        return k_exit_config;
    }
    auto overrides = parse_expect_overrides(opts.expect, preflight_expect_keys());
    if (!overrides) return fail(overrides.error());
    auto api = engine::DockerApi::from_environment();
    if (!api) return fail(api.error());
    if (auto st = api->ping(); !st) return fail(st.error());
    auto info = api->inspect_image(opts.image);
    if (!info) return fail(info.error());
    if (!info.value())
        return fail(
            {ErrorKind::Config, "no such image: " + opts.image + " (build or pull it first)"});
    Expectations expect = gather_expectations(opts.image, info.value()->labels, info.value()->env,
                                              kb.value(), overrides.value());

    ContainerRequirements requirements;
    for (const auto& kv : info.value()->env) {
        if (starts_with(kv, "NVIDIA_REQUIRE_CUDA=")) requirements.require_cuda = kv.substr(20);
        if (starts_with(kv, "NVIDIA_DISABLE_REQUIRE=") && kv.size() > 23)
            requirements.disable_require = true;
    }
    PreflightResult r = preflight(expect, driver, gpus, kb.value(), fc.value(), requirements);
    if (opts.json) {
        nlohmann::json targets = nlohmann::json::array();
        for (const auto& t : r.targets)
            targets.push_back({{"gpu", t.gpu}, {"cc", t.cc}, {"ok", t.ok}, {"reasons", t.reasons}});
        std::cout << json_text(nlohmann::json{{"schema", 1},
                                              {"image", opts.image},
                                              {"driver", driver},
                                              {"answer", r.answer},
                                              {"ok", r.ok},
                                              {"driver_ok", r.driver_ok},
                                              {"driver_verdict", r.driver_verdict},
                                              {"targets", targets},
                                              {"run_flags", r.run_flags},
                                              {"notes", r.notes}});
    } else {
        std::string answer = r.answer;
        for (auto& c : answer) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        // Image labels and names reach these lines: shown escaped, never acted on.
        std::cout << terminal_text(opts.image) << " on driver " << terminal_text(driver) << ": "
                  << answer << "\n";
        std::cout << "  driver: " << (r.driver_ok ? "yes" : "no") << " - "
                  << terminal_text(r.driver_verdict) << "\n";
        for (const auto& t : r.targets)
            std::cout << "  " << terminal_text(t.gpu) << (t.cc.empty() ? "" : " (" + t.cc + ")")
                      << ": " << (t.ok ? "yes" : "no")
                      << (t.reasons.empty() ? "" : " - " + terminal_text(join(t.reasons, "; ")))
                      << "\n";
        if (!r.run_flags.empty())
            std::cout << "  run with: docker run " << join(r.run_flags, " ") << " "
                      << terminal_text(opts.image) << "\n";
        for (const auto& n : r.notes) std::cout << "  note: " << terminal_text(n) << "\n";
    }
    // Only a checked yes is a pass; "unknown" is not.
    return r.answer == "yes" ? k_exit_ok : k_exit_check_failed;
}

int run_explain(const CommonOptions& common, const ExplainOptions& opts) {
    constexpr std::size_t k_block_bytes = 256 * 1024;  // read size: memory stays bounded
    auto data_dir = engine::find_data_dir(common.data_dir);
    auto kb = engine::load_knowledge_base(data_dir);
    if (!kb) return fail(kb.error());
    auto signatures = engine::load_error_signatures(data_dir);
    if (!signatures) return fail(signatures.error());
    std::optional<nlohmann::json> fingerprint;
    if (opts.fingerprint) {
        auto fp = read_fingerprint(*opts.fingerprint);
        if (!fp) return fail(fp.error());
        fingerprint = fp.value();
    }
    LogScanner scanner(signatures.value());
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
    auto found = scanner.explanations(fingerprint ? &*fingerprint : nullptr, kb.value());
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
                           {"verdict", e.verdict}});
        std::cout << json_text(
            nlohmann::json{{"schema", 1}, {"lines_read", scanner.lines()}, {"explanations", out}});
    } else {
        if (found.size() > 1)
            std::cout << found.size()
                      << " failures recognised, the most root-cause-like first:\n\n";
        for (const auto& e : found) {
            // Evidence lines and facts come from the log: shown escaped, never acted on.
            std::cout << e.id << "  " << e.title << "\n";
            for (const auto& line : e.evidence) std::cout << "  | " << terminal_text(line) << "\n";
            std::cout << "  cause: " << terminal_text(e.cause)
                      << "\n  fix:   " << terminal_text(e.fix) << "\n";
            if (!e.verdict.empty())
                std::cout << "  " << e.verdict << " (from " << *opts.fingerprint << ")\n";
            std::cout << "\n";
        }
    }
    if (found.empty()) {
        std::cerr << "torchdock: no known failure signature in this log (" << scanner.lines()
                  << " lines read); torchdock does not guess. Known signatures: "
                  << (data_dir / "error_signatures").string() << "/*.json\n";
        return k_exit_check_failed;
    }
    return k_exit_ok;
}

}  // namespace td::app
