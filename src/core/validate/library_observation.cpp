#include "core/validate/library_observation.hpp"

#include <algorithm>
#include <set>

#include "core/json/json_text.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

using json = nlohmann::json;

std::string dir_of(const std::string& path) {
    auto slash = path.find_last_of('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// The mapped file that carries `soname`: named exactly so, or a versioned file the soname
// link points at ("libcudart.so.12" -> "libcudart.so.12.8.90"); the first mapped wins, as
// the loader reuses an object already loaded under that soname.
std::string mapped_for(const std::vector<std::string>& mapped, const std::string& soname) {
    if (soname.empty()) return {};
    for (const auto& p : mapped) {
        std::string name = base_name(p);
        if (name == soname || name.rfind(soname + ".", 0) == 0) return p;
    }
    return {};
}

}  // namespace

LibraryObservation observe_libraries(const json& libs, const json& torch) {
    LibraryObservation out;
    std::vector<std::string> mapped;
    if (torch.is_object() && torch.contains("torch") && torch["torch"].is_string() &&
        torch.contains("mapped_objects") && torch["mapped_objects"].is_array()) {
        out.observed = true;
        for (const auto& p : torch["mapped_objects"])
            if (p.is_string()) mapped.push_back(p.get<std::string>());
    }
    std::set<std::string> mapped_set(mapped.begin(), mapped.end());
    const json& unresolved =
        libs.is_object() && libs.contains("unresolved") && libs["unresolved"].is_array()
            ? libs["unresolved"]
            : json::array();
    for (const auto& u : unresolved) {
        std::string needer = string_at(u, "needed_by"),
                    needer_real = string_at(u, "needed_by_realpath");
        // The object that needs the soname was loaded, so the loader found the soname for it.
        bool loaded = out.observed && (mapped_set.count(needer) || mapped_set.count(needer_real));
        if (!loaded) {
            out.unresolved.push_back(u);
            continue;
        }
        std::string soname = string_at(u, "soname");
        out.found_by_process.push_back({soname, needer, mapped_for(mapped, soname)});
    }
    if (!out.observed || !libs.is_object() || !libs.contains("libraries") ||
        !libs["libraries"].is_array())
        return out;
    std::set<std::string> reported;
    for (const auto& lib : libs["libraries"]) {
        std::string soname = string_at(lib, "soname"), path = string_at(lib, "path");
        std::string real = string_at(lib, "realpath");
        if (path.empty() || !reported.insert(soname).second) continue;
        std::string seen = mapped_for(mapped, soname);
        if (seen.empty() || seen == path || seen == real) continue;
        // The soname link and its versioned file side by side are one copy.
        if (real.empty() && dir_of(seen) == dir_of(path)) continue;
        out.disagreements.push_back({soname, real.empty() ? path : real, seen});
    }
    return out;
}

std::string describe(const FoundByProcess& f) {
    return f.soname + " (needed by " + f.needed_by + ") " +
           (f.mapped.empty() ? std::string("was found by the process") : "mapped from " + f.mapped);
}

std::string describe(const LoaderDisagreement& d) {
    return d.soname + ": the loader model finds " + d.model_path + ", the process mapped " +
           d.mapped_path;
}

}  // namespace td
