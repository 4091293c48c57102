#include "app/lock_python.hpp"

#include "app/console.hpp"
#include "engine/interrupt.hpp"
#include "engine/uv_resolver.hpp"
#include "util/strings.hpp"

namespace td::app {

namespace {

const char* const k_no_graph =
    "STALE: the lock records no dependency graph (written by an older torchdock), which "
    "render refuses; run `torchdock lock`";
const char* const k_no_graph_kept =
    "it records no dependency graph, so render refuses it until it is re-locked";

std::string changes_text(const std::vector<PackageChange>& changes, const PythonLockRun& run) {
    std::vector<std::string> parts;
    for (const auto& c : changes) {
        if (parts.size() == 8) {
            parts.push_back("and " + std::to_string(changes.size() - 8) + " more");
            break;
        }
        std::string note;
        if (run.yank_note &&
            (c.kind == PackageChange::Kind::Moved || c.kind == PackageChange::Kind::Gone))
            note = run.yank_note(c.name, c.locked_version);
        parts.push_back(c.describe() + note);
    }
    return join(parts, "; ");
}

// The wheels by URL of `inputs`, each downloaded and hashed by torchdock (uv only echoes the
// URL's #sha256= fragment): "" when every one has the sha256 the manifest fixes; else the
// first mismatch (`mismatch` set) or why one could not be fetched (`mismatch` clear).
std::string check_wheel_hashes(const PythonLockInputs& inputs, const PythonLockRun& run,
                               const std::string& key, bool& mismatch) {
    mismatch = false;
    std::map<std::string, std::pair<std::string, std::string>> local;
    auto& cache = run.wheel_hashes ? *run.wheel_hashes : local;
    for (const auto& w : wheels_by_url(inputs)) {
        auto it = cache.find(w.url);
        if (it == cache.end()) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                run.deadline - std::chrono::steady_clock::now());
            std::pair<std::string, std::string> answer;
            if (left.count() <= 0) {
                answer.second = "the lock's --timeout ran out before the wheel " +
                                quote_value(w.url) + " was hashed";
            } else {
                progress("lock " + key + ": downloading " + terminal_text(w.url) + " to hash it");
                auto h = engine::hash_url(w.url, left);
                if (h)
                    answer.first = h->sha256 + " " + std::to_string(h->bytes);
                else
                    answer.second = h.error().message;
            }
            it = cache.emplace(w.url, std::move(answer)).first;
        }
        const auto& [hashed, why_not] = it->second;
        if (hashed.empty()) return why_not;
        auto space = hashed.find(' ');
        std::string problem =
            wheel_hash_mismatch(w, hashed.substr(0, space), std::stoull(hashed.substr(space + 1)));
        if (!problem.empty()) {
            mismatch = true;
            return problem;
        }
    }
    return {};
}

}  // namespace

PythonLockResult lock_python_sets(const std::vector<Variant>& variants,
                                  const std::map<std::string, PythonLock>& previous,
                                  const PythonLockRun& run, bool build) {
    PythonLockResult out;
    // One Python set per variant and platform (the build stage's: the variant's only).
    struct Unit {
        const Variant* variant;
        std::string platform, key;
    };
    std::vector<Unit> units;
    for (const auto& v : variants) {
        if (build) {
            units.push_back({&v, k_default_platform, v.name});
            continue;
        }
        for (const auto& platform : v.manifest->platforms)
            units.push_back({&v, platform, python_lock_key(v.name, platform)});
    }
    for (const auto& [vp, platform, key] : units) {
        if (engine::interrupted()) break;
        const Variant& v = *vp;
        LockPlan plan = build ? build_lock_plan(v, run.kb) : python_lock_plan(v, run.kb, platform);
        if (!plan.inputs) {
            // Nothing of its own to lock: say so only where pip installs something.
            if (build ? !plan.why_not.empty() : v.pip_installs_anything())
                out.rows.push_back({key, "-", "not hash-locked: " + plan.why_not});
            continue;
        }
        auto prev = previous.find(key);
        const PythonLock* old = prev != previous.end() ? &prev->second : nullptr;
        bool old_fits = old && old->inputs == *plan.inputs;
        // Wheels by URL first: a file that is not what the manifest fixes is never locked.
        bool mismatch = false;
        std::string wheel_problem = check_wheel_hashes(*plan.inputs, run, key, mismatch);
        if (mismatch) {
            if (run.check) {
                ++out.drifted;
                out.rows.push_back({key, "-", "WHEEL HASH DIFFERS: " + wheel_problem});
                if (old) out.locks[key] = *old;
            } else {
                ++out.wheel_mismatches;
                out.rows.push_back({key, "-", "ERROR (wheel hash): " + wheel_problem});
            }
            continue;
        }
        engine::UvAnswer a;
        if (!wheel_problem.empty()) {
            a.kind = engine::UvAnswer::Kind::Unreachable;
            a.message = wheel_problem;
        } else if (run.uv.empty()) {
            a.kind = engine::UvAnswer::Kind::Unreachable;
            a.message = run.uv_missing;
        } else {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                run.deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                a.kind = engine::UvAnswer::Kind::Unreachable;
                a.message = "the lock's --timeout ran out before this variant";
            } else {
                progress("lock " + key +
                         (build ? ": resolving its build stage's set with uv"
                                : ": resolving its Python set with uv"));
                a = engine::uv_resolve(run.uv, *plan.inputs, run.indexes, left);
            }
        }
        std::string count = std::to_string(a.packages.size());
        switch (a.kind) {
            case engine::UvAnswer::Kind::Resolved: {
                PythonLock fresh{*plan.inputs, a.packages, /*graph=*/true};
                if (run.check) {
                    if (!old) {
                        ++out.drifted;
                        out.rows.push_back({key, count, "NOT LOCKED"});
                    } else if (!old_fits) {
                        ++out.drifted;
                        out.rows.push_back({key, count,
                                            "STALE: locked from other inputs than the manifest "
                                            "now gives"});
                    } else if (auto d = diff_locked_packages(old->packages, fresh.packages);
                               !d.empty()) {
                        ++out.drifted;
                        out.rows.push_back({key, count, "MOVED: " + changes_text(d, run)});
                    } else if (!old->graph) {
                        ++out.drifted;
                        out.rows.push_back({key, count, k_no_graph});
                    } else {
                        out.rows.push_back({key, count, "ok"});
                    }
                    if (old) out.locks[key] = *old;
                    break;
                }
                std::string status = "locked";
                if (old_fits) {
                    auto d = diff_locked_packages(old->packages, fresh.packages);
                    status = !d.empty()   ? "updated: " + changes_text(d, run)
                             : old->graph ? "unchanged"
                                          : "unchanged (its dependency graph recorded now)";
                } else if (old) {
                    status = "locked (the manifest changed since the last lock)";
                }
                out.rows.push_back({key, count, status});
                out.locks[key] = std::move(fresh);
                break;
            }
            case engine::UvAnswer::Kind::Unreachable:
                if (run.check) {
                    ++out.unchecked;
                    out.rows.push_back({key, "-", "NOT CHECKED: " + a.message});
                    if (old) out.locks[key] = *old;
                } else if (old_fits) {
                    out.locks[key] = *old;
                    out.rows.push_back(
                        {key, std::to_string(old->packages.size()),
                         "kept the previous lock, not re-resolved: " + a.message +
                             (old->graph ? "" : std::string(" (") + k_no_graph_kept + ")")});
                } else {
                    ++out.not_locked;
                    out.rows.push_back({key, "-", "NOT FULLY LOCKED: " + a.message});
                }
                break;
            case engine::UvAnswer::Kind::Conflict:
                ++out.conflicts;
                out.rows.push_back({key, "-", "ERROR (no solution): " + a.message});
                break;
            case engine::UvAnswer::Kind::Failed:
                ++out.failed;
                out.rows.push_back({key, "-", "ERROR: " + a.message});
                break;
        }
    }
    return out;
}

}  // namespace td::app
