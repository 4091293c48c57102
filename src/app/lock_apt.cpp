#include "app/lock_apt.hpp"

#include <optional>

#include "app/console.hpp"
#include "engine/apt_resolver.hpp"
#include "engine/interrupt.hpp"
#include "util/strings.hpp"

namespace td::app {

AptLockResult lock_apt_sets(const std::vector<Variant>& variants,
                            const std::map<std::string, LockEntry>& digests,
                            const std::map<std::string, AptLock>& previous, const Mirrors& mirrors,
                            bool check) {
    AptLockResult out;
    std::optional<Result<engine::BuildBackend>> backend;
    // Variants with the same base digest and packages get one resolution.
    std::map<std::pair<std::string, std::vector<std::string>>, Result<AptLock>> resolved;
    for (const auto& v : variants) {
        if (v.apt.empty() || engine::interrupted()) continue;
        auto prev = previous.find(v.name);
        auto keep_previous = [&] {
            if (prev != previous.end()) out.locks[v.name] = prev->second;
        };
        auto row = [&](const std::string& status, std::size_t n) {
            out.rows.push_back({v.name, std::to_string(n), status});
        };
        auto digest = digests.find(v.base_ref);
        auto ref = ImageRef::parse(v.base_ref);
        if (digest == digests.end() || !ref) {
            keep_previous();
            row("NOT LOCKED: its base " + v.base_ref + " has no digest", 0);
            continue;
        }
        AptLockInputs inputs{v.base_ref + "@" + digest->second.digest, v.apt};
        auto key = std::make_pair(inputs.base, inputs.packages);
        auto it = resolved.find(key);
        if (it == resolved.end()) {
            if (!backend) backend = engine::detect_build_backend();
            Result<AptLock> fresh = Error{ErrorKind::Environment, ""};
            if (!*backend) {
                fresh = backend->error();
            } else {
                ImageRef from = apply_mirrors(ref.value(), mirrors);  // by digest, via a mirror
                from.tag.clear();
                from.digest = digest->second.digest;
                progress("lock " + v.name + ": resolving " + std::to_string(v.apt.size()) +
                         " apt package" + (v.apt.size() == 1 ? "" : "s") + " in " + inputs.base);
                auto text =
                    engine::resolve_apt_packages(backend->value(), {v.name, from.str(), v.apt});
                fresh = text ? parse_apt_simulation(text.value(), inputs)
                             : Result<AptLock>(text.error());
            }
            it = resolved.emplace(key, std::move(fresh)).first;
        }
        const Result<AptLock>& fresh = it->second;
        if (!fresh) {
            // apt's own refusal is the manifest's problem; anything else, the environment's.
            bool manifest_problem = fresh.error().kind == ErrorKind::Config;
            ++(manifest_problem ? out.unresolved : out.not_locked);
            keep_previous();
            row((manifest_problem ? "ERROR: "
                 : check          ? "NOT CHECKED: "
                                  : "NOT LOCKED: ") +
                    fresh.error().message,
                0);
            continue;
        }
        std::size_t n = fresh->resolved.size();
        bool same_inputs = prev != previous.end() && prev->second.inputs == inputs;
        auto moved =
            same_inputs ? diff_apt_locks(prev->second, fresh.value()) : std::vector<std::string>{};
        if (check) {
            keep_previous();
            if (prev == previous.end() || !same_inputs || !moved.empty()) ++out.drifted;
            row(prev == previous.end() ? "NOT LOCKED"
                : !same_inputs         ? "STALE: other packages or base digest"
                : !moved.empty()       ? "MOVED: " + join(moved, "; ")
                                       : "ok",
                n);
            continue;
        }
        out.locks[v.name] = fresh.value();
        row(prev == previous.end() ? "locked"
            : !same_inputs         ? "updated (other packages or base digest)"
            : moved.empty()        ? "unchanged"
                                   : "updated: " + join(moved, "; "),
            n);
    }
    return out;
}

}  // namespace td::app
