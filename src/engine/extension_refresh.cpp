#include "engine/extension_refresh.hpp"

#include <chrono>
#include <cstdio>

#include "core/pypi/release_facts.hpp"
#include "core/pypi/simple_index.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace {

bool shared_object(const std::string& name) {
    return name.ends_with(".so") || name.find(".so.") != std::string::npos;
}

std::string target_name(const kernels::ArchCensus::Target& t) {
    return t.arch.name(t.ptx ? "compute_" : "sm_");
}

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// One tracked release: the wheel, its torch pin, the GPU code of each shared object.
Result<ExtensionRelease> read_release(PypiClient& client, const pypi::ProjectIndex& project,
                                      const std::string& name, const std::string& version,
                                      const std::string& index_label,
                                      std::vector<std::string>& scans) {
    auto wheels = project.linux_wheels(version);
    if (wheels.empty())
        return Error{ErrorKind::Config, name + " " + version + ": " + index_label +
                                            " has no Linux x86_64 wheel of this release"};
    const pypi::IndexFile& wheel = *wheels.front();
    if (wheel.sha256.empty())
        return Error{ErrorKind::Config, wheel.filename + ": the index gives no sha256"};
    ExtensionRelease rel;
    rel.version = version;
    rel.wheel = wheel.filename;
    rel.sha256 = wheel.sha256;
    auto md = client.wheel_metadata(wheel);
    if (!md) return md.error();
    if (auto why = pypi::metadata_mismatch(md->metadata, wheel); !why.empty())
        return Error{ErrorKind::Config, why};
    pypi::MarkerEnvironment env;
    if (const pypi::Requirement* torch = md->metadata.requirement_on("torch", env))
        rel.requires_torch = torch->specifier.str();
    auto dir = client.wheel_directory(wheel);
    if (!dir) return dir.error();
    auto fetch = [&](std::uint64_t offset, std::uint64_t length) {
        return client.read_range(wheel, offset, length);
    };
    std::vector<std::string> read_objects;
    for (const auto& entry : dir->entries) {
        if (!shared_object(entry.name)) continue;
        auto start = std::chrono::steady_clock::now();
        auto scan = scan_member_fatbins(fetch, dir->archive_size, entry, wheel.filename);
        if (!scan) return scan.error();
        read_objects.push_back(entry.name);
        if (scan->census.containers() == 0) continue;  // no GPU code
        ExtensionObject obj;
        obj.path = entry.name;
        obj.containers = scan->census.containers();
        for (const auto& t : scan->census.targets()) obj.targets.push_back(target_name(t));
        char line[512];
        std::snprintf(
            line, sizeof line, "%s: %llu fatbin containers, %s; read %.1f of %.1f MiB, %.1f s",
            entry.name.c_str(), static_cast<unsigned long long>(obj.containers),
            join(obj.targets, " ").c_str(), mib(scan->stream.bytes_fetched),
            mib(scan->stream.compressed_size),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        scans.push_back(wheel.filename + ": " + line);
        rel.objects.push_back(std::move(obj));
    }
    rel.source = pypi::cite_wheel(index_label, name, wheel) + ": Requires-Dist from " +
                 (md->via_pep658 ? "its PEP 658 METADATA" : "its METADATA read by range") +
                 "; fatbin targets of " + std::to_string(read_objects.size()) + " shared object" +
                 (read_objects.size() == 1 ? "" : "s") + " read by range";
    return rel;
}

std::string describe_change(const ExtensionRelease* before, const ExtensionRelease& after) {
    if (!before) return "new";
    std::vector<std::string> what;
    if (before->sha256 != after.sha256) what.push_back("wheel or sha256 changed");
    if (before->requires_torch != after.requires_torch)
        what.push_back("requires torch " + before->requires_torch + " -> " + after.requires_torch);
    bool objects_same = before->objects.size() == after.objects.size();
    for (std::size_t i = 0; objects_same && i < after.objects.size(); ++i)
        objects_same = before->objects[i].path == after.objects[i].path &&
                       before->objects[i].targets == after.objects[i].targets &&
                       before->objects[i].containers == after.objects[i].containers;
    if (!objects_same) what.push_back("GPU code of its objects changed");
    return join(what, "; ");
}

}  // namespace

Result<ExtensionRefreshResult> refresh_extension_facts(
    const ExtensionFacts& current, const std::string& index_url, const std::string& index_label,
    const std::vector<std::string>& only,
    const std::function<void(const std::string&)>& on_progress) {
    PypiClient client(index_url);
    ExtensionRefreshResult out;
    out.facts = current;
    for (const auto& want : only)
        if (!current.find(pypi::normalize_project_name(want)))
            return Error{ErrorKind::Usage,
                         "extension " + quote_value(want) +
                             " is not in data/extensions.json (it lists " +
                             join(current.names(), ", ") +
                             "); add it with the releases to track under \"track\""};
    for (auto& ext : out.facts.extensions) {
        bool wanted = only.empty();
        for (const auto& w : only) wanted = wanted || pypi::normalize_project_name(w) == ext.name;
        if (!wanted) continue;
        auto project = client.project(ext.name);
        if (!project) return project.error();
        std::vector<ExtensionRelease> releases;
        for (const auto& version : ext.track) {
            if (on_progress) on_progress(ext.name + " " + version);
            auto rel =
                read_release(client, project.value(), ext.name, version, index_label, out.scans);
            if (!rel) return rel.error();
            if (auto why = extension_release_problem(rel.value()); !why.empty()) {
                const ExtensionRelease* had = ext.release(version);
                out.refused.push_back(
                    ext.name + " " + version + ": " + why +
                    (had ? " (its previous facts are kept)" : " (it stays out of the file)"));
                if (had) releases.push_back(*had);
                continue;
            }
            std::string change = describe_change(ext.release(version), rel.value());
            if (!change.empty()) out.changes.push_back(ext.name + " " + version + ": " + change);
            releases.push_back(std::move(rel.value()));
        }
        for (const auto& old : ext.releases) {
            bool tracked = false;
            for (const auto& r : releases) tracked = tracked || r.version == old.version;
            if (!tracked)
                out.changes.push_back(ext.name + " " + old.version + ": no longer tracked");
        }
        ext.index = index_label;
        ext.releases = std::move(releases);
    }
    out.requests = client.requests();
    out.bytes = client.bytes();
    return out;
}

}  // namespace td::engine
