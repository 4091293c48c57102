// `torchdock lock`: pin every base image tag of the manifests to its registry digest, and
// each variant's whole Python set to exact versions and file hashes (app/lock_python).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/lock_apt.hpp"
#include "app/lock_python.hpp"
#include "app/output.hpp"
#include "app/settings.hpp"
#include "core/build/image_ref.hpp"
#include "core/build/registry_policy.hpp"
#include "core/json/json_text.hpp"
#include "core/json/source_json.hpp"
#include "core/render/lockfile.hpp"
#include "core/render/platforms.hpp"
#include "core/render/render_plan.hpp"
#include "engine/files.hpp"
#include "engine/interrupt.hpp"
#include "engine/project_loader.hpp"
#include "engine/pypi_client.hpp"
#include "engine/registry.hpp"
#include "engine/uv_resolver.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace fs = std::filesystem;

namespace {

std::string short_digest(const std::string& d) { return d.size() > 19 ? d.substr(0, 19) : d; }

// The family a manifest text names, if it parses far enough to say.
std::optional<std::string> parse_family_name(const std::string& text) {
    auto parsed = parse_source_json(text);
    if (!parsed.errors.empty() || !parsed.value.is_object()) return std::nullopt;
    const JsonValue* name = parsed.value.find("name");
    if (!name || !name->is_string()) return std::nullopt;
    return name->text;
}

}  // namespace

int run_lock(const CommonOptions& common, const LockOptions& opts) {
    // Checked before any work: a bad flag is a usage error whatever the registry would say
    // (--timeout's range is checked by the flag parser).
    if (auto st = check_report_flags({{"--json", &opts.json}}); !st) return fail(st.error());
    engine::RegistryTimeouts timeouts;
    timeouts.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(opts.timeout_s);
    engine::install_interrupt_handlers();
    auto kb = engine::load_knowledge_base(engine::find_data_dir(common.data_dir));
    if (!kb) return fail(kb.error());
    auto sources = engine::load_manifests(common.manifests_dir);
    if (!sources) return fail(sources.error());
    auto settings = load_settings(opts.settings);
    if (!settings) return fail(settings.error());
    const Mirrors& mirrors = settings->mirrors;
    PythonLockRun python_run{kb.value(),        settings->indexes, "", "",
                             timeouts.deadline, opts.check,        {}};
    if (auto uv = engine::find_uv())
        python_run.uv = uv.value();
    else
        python_run.uv_missing = uv.error().message;
    // Whether a release that moved was yanked: asked of the PyPI index, once per release.
    std::optional<engine::PypiClient> pypi;
    python_run.yank_note = [&](const std::string& name, const std::string& version) {
        if (!pypi) {
            auto index = settings->indexes.pypi.empty()
                             ? engine::pip_default_index(
                                   "name the index with --pypi-index or the indexes.pypi setting")
                             : Result<std::string>(settings->indexes.pypi);
            if (!index) return std::string();
            pypi.emplace(index.value());
        }
        auto page = pypi->project(name);
        if (!page) return std::string();
        bool any = false, all_yanked = true;
        for (const auto& f : page->files)
            if (f.wheel && f.wheel->version == version) {
                any = true;
                all_yanked = all_yanked && f.yanked;
            }
        return any && all_yanked ? " (" + version + " is yanked on the index)" : std::string();
    };

    for (const auto& f : opts.families) {
        bool known = false;
        for (const auto& src : sources.value())
            if (auto m = parse_family_name(src.text)) known = known || *m == f;
        if (!known) {
            print_error("no manifest defines family " + quote_value(f));
            return k_exit_config;
        }
    }
    std::vector<std::vector<std::string>> rows, python_rows, apt_rows;
    int apt_drifted = 0, apt_not_locked = 0, apt_unresolved = 0;
    nlohmann::json images_json = nlohmann::json::array();
    int python_drifted = 0, python_unchecked = 0, not_locked = 0, conflicts = 0, python_failed = 0;
    int wheel_mismatches = 0;
    // Each wheel by URL is downloaded and hashed once a run, whatever sets ask for it.
    std::map<std::string, std::pair<std::string, std::string>> wheel_hashes;
    python_run.wheel_hashes = &wheel_hashes;
    // Lock files are written only after every manifest was resolved: an error, a bad
    // manifest or Ctrl-C part-way leaves every lock file as it was.
    std::map<std::string, std::string> pending;  // lock path -> content
    int drifted = 0;
    // Failures by class, for the exit code: a vanished tag, the environment, a time-out.
    int gone = 0, failed = 0, timed_out = 0;
    // Bases whose index lacks a platform the manifest builds for (a manifest problem).
    int no_platform = 0;
    for (const auto& src : sources.value()) {
        // Plan without the lock: the base references are what gets locked.
        ManifestSource unlocked{src.path, src.text, std::nullopt, std::nullopt};
        RenderPlan plan = plan_render({unlocked}, kb.value());
        if (!plan.problems.empty()) {
            for (const auto& d : plan.problems) std::cerr << format_diagnostic(d) << "\n";
            print_error(src.path + " has problems; nothing was locked");
            return k_exit_config;
        }
        if (plan.variants.empty()) continue;
        const std::string family = plan.variants.front().manifest->name;
        if (!opts.families.empty() &&
            std::find(opts.families.begin(), opts.families.end(), family) == opts.families.end())
            continue;
        std::set<std::string> refs;
        // The platforms each base is built for: its index must list them (platforms.hpp).
        std::map<std::string, std::set<std::string>> wanted;
        for (const auto& v : plan.variants) {
            refs.insert(v.base_ref);
            wanted[v.base_ref].insert(v.manifest->platforms.begin(), v.manifest->platforms.end());
        }
        progress("lock " + family + ": " + std::to_string(refs.size()) + " base image" +
                 (refs.size() == 1 ? "" : "s") + ", " + std::to_string(plan.variants.size()) +
                 " variant" + (plan.variants.size() == 1 ? "" : "s"));

        std::map<std::string, LockEntry> previous;
        LockFile previous_file;
        if (src.lock_text) {
            Diagnostics diags(*src.lock_path);
            previous_file = parse_lockfile(*src.lock_text, diags);
            for (const auto& [ref, digest] : previous_file.images) previous[ref] = {digest, ""};
            if (!diags.empty()) {
                for (const auto& d : diags.items()) std::cerr << format_diagnostic(d) << "\n";
                return k_exit_config;
            }
        }
        std::map<std::string, LockEntry> resolved;
        bool file_ok = true;
        for (const auto& ref_text : refs) {
            if (engine::interrupted()) {
                print_error("interrupted; no lock file was changed");
                return k_exit_interrupted;
            }
            auto ref = ImageRef::parse(ref_text);
            if (!ref) return fail(ref.error());
            ImageRef target = apply_mirrors(ref.value(), mirrors);
            std::string via =
                target.registry != ref->registry ? " (via " + target.registry + ")" : "";
            const std::set<std::string>& platforms = wanted[ref_text];
            const bool multi = platforms != std::set<std::string>{k_default_platform};
            engine::DigestAnswer a = engine::resolve_digest(target, timeouts, multi);
            auto prev = previous.find(ref_text);
            LockVerdict verdict = judge_lock(
                a, prev == previous.end() ? std::nullopt : std::optional(prev->second.digest),
                opts.check);
            if (a.kind == engine::DigestAnswer::Kind::Found && multi) {
                if (auto why = base_platforms_problem(
                        platforms, registry::is_index_media_type(a.media_type), a.platforms);
                    !why.empty()) {
                    verdict = {"ERROR: " + why, 0, true};
                    ++no_platform;
                }
            }
            if (a.kind == engine::DigestAnswer::Kind::Found) {
                LockEntry& e = resolved[ref_text] = {a.digest, a.media_type};
                if (multi)
                    for (const auto& p : platforms)
                        if (a.platforms.count(p)) e.platforms[p] = a.platforms.at(p);
            }
            drifted += verdict.drift;
            if (verdict.failure && a.kind != engine::DigestAnswer::Kind::Found) {
                if (a.kind == engine::DigestAnswer::Kind::NotFound)
                    ++gone;
                else if (a.kind == engine::DigestAnswer::Kind::TimedOut)
                    ++timed_out;
                else
                    ++failed;
            }
            file_ok = file_ok && !verdict.failure;
            const std::string& status = verdict.status;
            rows.push_back(
                {ref_text + via, a.digest.empty() ? "-" : short_digest(a.digest), status});
            images_json.push_back({{"family", family},
                                   {"ref", ref_text},
                                   {"via", target.registry != ref->registry ? target.registry : ""},
                                   {"digest", a.digest},
                                   {"status", status},
                                   {"drift", verdict.drift > 0},
                                   {"failure", verdict.failure}});
        }
        PythonLockResult py = lock_python_sets(plan.variants, previous_file.python, python_run);
        // The build stages' sets (extensions built from source), rows "<variant> (build)".
        PythonLockResult build_py =
            lock_python_sets(plan.variants, previous_file.build_python, python_run, true);
        if (engine::interrupted()) {
            print_error("interrupted; no lock file was changed");
            return k_exit_interrupted;
        }
        for (const PythonLockResult* r : {&py, &build_py}) {
            // A build stage's row is its variant's, with the set named: "VARIANT (build)".
            for (auto row : r->rows) {
                row.push_back(r == &build_py ? "build" : "python");
                python_rows.push_back(std::move(row));
            }
            python_drifted += r->drifted;
            python_unchecked += r->unchecked;
            not_locked += r->not_locked;
            conflicts += r->conflicts;
            python_failed += r->failed;
            wheel_mismatches += r->wheel_mismatches;
            file_ok = file_ok && r->conflicts == 0 && r->failed == 0 && r->wheel_mismatches == 0;
        }
        AptLockResult apt =
            lock_apt_sets(plan.variants, resolved, previous_file.apt, mirrors, opts.check);
        if (engine::interrupted()) {
            print_error("interrupted; no lock file was changed");
            return k_exit_interrupted;
        }
        apt_rows.insert(apt_rows.end(), apt.rows.begin(), apt.rows.end());
        apt_drifted += apt.drifted;
        apt_not_locked += apt.not_locked;
        apt_unresolved += apt.unresolved;
        file_ok = file_ok && apt.unresolved == 0;
        if (!opts.check && file_ok)
            pending[engine::lock_path_for(src.path).string()] =
                render_lockfile(resolved, py.locks, apt.locks, build_py.locks);
    }
    if (opts.json) {
        bool writes = !opts.check && !(conflicts || python_failed || apt_unresolved || gone ||
                                       failed || timed_out || no_platform || wheel_mismatches);
        nlohmann::json python_json = nlohmann::json::array();
        for (const auto& r : python_rows)
            python_json.push_back(
                {{"variant", r[0]}, {"set", r[3]}, {"packages", r[1]}, {"status", r[2]}});
        nlohmann::json apt_json = nlohmann::json::array();
        for (const auto& r : apt_rows)
            apt_json.push_back({{"variant", r[0]}, {"packages", r[1]}, {"status", r[2]}});
        nlohmann::json files = nlohmann::json::array();
        for (const auto& [path, content] : pending) files.push_back(path);
        nlohmann::json doc{{"schema", 1},
                           {"check", opts.check},
                           {"images", images_json},
                           {"python", python_json},
                           {"apt", apt_json},
                           {"apt_drifted", apt_drifted},
                           {"drifted", drifted},
                           {"python_drifted", python_drifted},
                           {"python_unchecked", python_unchecked},
                           {"not_locked", not_locked},
                           {"apt_not_locked", apt_not_locked},
                           {"failed", gone + failed + timed_out + no_platform + conflicts +
                                          python_failed + apt_unresolved + wheel_mismatches},
                           {"lock_files", writes ? files : nlohmann::json::array()}};
        if (auto st = emit_report(opts.json, json_text(doc)); !st) return fail(st.error());
    }
    // With the JSON on stdout the tables go to stderr, so stdout stays parseable.
    std::ostream& out = to_stdout(opts.json) ? std::cerr : std::cout;
    out << report::format_table({"BASE IMAGE", "DIGEST", "STATUS"}, rows);
    if (!python_rows.empty()) {
        std::vector<std::vector<std::string>> table;
        for (const auto& r : python_rows)
            table.push_back({r[3] == "build" ? r[0] + " (build)" : r[0], r[1], r[2]});
        out << "\n" << report::format_table({"VARIANT", "PYTHON PACKAGES", "STATUS"}, table);
    }
    if (!apt_rows.empty())
        out << "\n" << report::format_table({"VARIANT", "APT PACKAGES", "STATUS"}, apt_rows);
    if (not_locked)
        print_error(std::to_string(not_locked) + " variant" + (not_locked == 1 ? " is" : "s are") +
                    " not fully locked (see NOT FULLY LOCKED above): they render with version "
                    "pins but no hashes, and `lock --check` fails until they are locked");
    if (conflicts)
        print_error(std::to_string(conflicts) + " variant" + (conflicts == 1 ? "'s" : "s'") +
                    " Python set has no solution: change the manifest's pins");
    if (python_failed)
        print_error(std::to_string(python_failed) + " Python set" +
                    (python_failed == 1 ? "" : "s") + " could not be resolved (uv failed)");
    if (apt_unresolved)
        print_error(std::to_string(apt_unresolved) + " variant" +
                    (apt_unresolved == 1 ? "'s" : "s'") +
                    " apt packages cannot be installed in the pinned base (apt's words above): "
                    "change the manifest's apt list");
    if (apt_not_locked && !opts.check)
        print_error(std::to_string(apt_not_locked) + " variant" +
                    (apt_not_locked == 1 ? "'s" : "s'") +
                    " apt packages were not resolved (see NOT LOCKED above): each keeps its "
                    "previous apt lock while that fits, else renders with the manifest's pins");
    if (wheel_mismatches)
        print_error(std::to_string(wheel_mismatches) + " Python set" +
                    (wheel_mismatches == 1 ? " asks" : "s ask") +
                    " for a wheel by URL whose file does not have the sha256 the manifest fixes "
                    "(see ERROR (wheel hash) above)");
    if (conflicts || python_failed || apt_unresolved || wheel_mismatches) {
        print_error("lock files were left as they were");
        return conflicts || apt_unresolved || wheel_mismatches ? k_exit_config : k_exit_environment;
    }
    auto images = [](int n) { return std::to_string(n) + " base image" + (n == 1 ? "" : "s"); };
    if (gone)
        print_error(images(gone) + " no longer exist" + (gone == 1 ? "s" : "") +
                    " in the registry: change the manifest's tag (or sync the mirror)");
    if (failed) print_error(images(failed) + " could not be resolved");
    if (timed_out)
        print_error(images(timed_out) + " timed out (lock --timeout " +
                    std::to_string(opts.timeout_s) + " s)");
    if (no_platform)
        print_error(images(no_platform) + " lack" + (no_platform == 1 ? "s" : "") +
                    " a platform the manifest builds for (see ERROR above): change the base "
                    "or the manifest's \"platforms\"");
    if (gone || failed || timed_out || no_platform) {
        print_error("lock files were left as they were");
        // A vanished tag is a data problem (exit 2): the manifest names an image the
        // registry does not have, and no retry will change that. Then the environment (3),
        // then a time-out (4, only when nothing else failed, as for build).
        return gone || no_platform ? k_exit_config : failed ? k_exit_environment : k_exit_timeout;
    }
    if (opts.check) {
        if (drifted)
            print_error(std::to_string(drifted) + " locked base image" + (drifted == 1 ? "" : "s") +
                        " drifted; run `torchdock lock` and review the change");
        if (python_drifted)
            print_error(std::to_string(python_drifted) + " Python set" +
                        (python_drifted == 1 ? "" : "s") +
                        " moved, went stale or are not locked; run `torchdock lock` and review "
                        "the change");
        if (python_unchecked)
            print_error(std::to_string(python_unchecked) + " Python set" +
                        (python_unchecked == 1 ? " was" : "s were") +
                        " not checked (see NOT CHECKED above): whether they drifted is unknown");
        if (apt_drifted)
            print_error(std::to_string(apt_drifted) + " variant" +
                        (apt_drifted == 1 ? "'s" : "s'") +
                        " apt packages moved in the archive or are not locked; run `torchdock "
                        "lock` and review the change");
        if (apt_not_locked)
            print_error(std::to_string(apt_not_locked) + " variant" +
                        (apt_not_locked == 1 ? "'s apt packages were" : "s' apt packages were") +
                        " not checked (see NOT CHECKED above): whether they moved is unknown");
        if (drifted || python_drifted || apt_drifted) return k_exit_check_failed;
        if (python_unchecked || apt_not_locked) return k_exit_environment;
        out << "every locked base image still resolves to its digest, every Python set to its "
               "lock, and every apt set to its versions\n";
    } else {
        for (const auto& [path, content] : pending) {
            fs::path p = path;
            auto st = engine::write_files(p.parent_path().empty() ? "." : p.parent_path(),
                                          {{p.filename().string(), content}});
            if (!st) return fail(st.error());
        }
        out << "wrote " << pending.size() << " lock file" << (pending.size() == 1 ? "" : "s")
            << "\n";
    }
    return k_exit_ok;
}

}  // namespace td::app
