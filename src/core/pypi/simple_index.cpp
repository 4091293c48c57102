#include "core/pypi/simple_index.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/pypi/pep440.hpp"
#include "util/strings.hpp"

namespace td::pypi {
namespace {

using json = nlohmann::json;

std::string str_at(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// PEP 714 renamed "data-dist-info-metadata" to "core-metadata"; both are true, or a dict
// of hashes.
void read_metadata_flag(const json& f, IndexFile& out) {
    for (const char* key : {"core-metadata", "data-dist-info-metadata"}) {
        auto it = f.find(key);
        if (it == f.end()) continue;
        if (it->is_boolean()) {
            out.metadata_served = it->get<bool>();
        } else if (it->is_object()) {
            out.metadata_served = true;
            out.metadata_sha256 = str_at(*it, "sha256");
        }
        return;
    }
}

}  // namespace

std::string resolve_url(const std::string& base, const std::string& ref) {
    if (ref.find("://") != std::string::npos) return ref;
    auto scheme_end = base.find("://");
    if (scheme_end == std::string::npos) return ref;
    if (starts_with(ref, "//")) return base.substr(0, scheme_end + 1) + ref;
    auto host_end = base.find('/', scheme_end + 3);
    std::string origin = host_end == std::string::npos ? base : base.substr(0, host_end);
    if (starts_with(ref, "/")) return origin + ref;
    std::string dir = base.substr(0, base.rfind('/') + 1);
    if (dir.size() <= origin.size()) dir = origin + "/";
    std::string path = dir.substr(origin.size()) + ref;
    // Remove "./" and "seg/../" segments.
    std::vector<std::string> out;
    for (const auto& seg : split(path, '/')) {
        if (seg == ".") continue;
        if (seg == "..") {
            if (out.size() > 1) out.pop_back();
            continue;
        }
        out.push_back(seg);
    }
    return origin + join(out, "/");
}

Result<ProjectIndex> parse_project_index(std::string_view json_text, const std::string& url) {
    ProjectIndex idx;
    try {
        json doc = json::parse(json_text);
        if (!doc.is_object() || !doc.contains("files") || !doc["files"].is_array())
            return Error{ErrorKind::Config,
                         url + ": not a PEP 691 JSON project page (no \"files\" list)"};
        auto meta = doc.find("meta");
        if (meta != doc.end() && meta->is_object()) {
            std::string api = str_at(*meta, "api-version");
            if (!api.empty() && !starts_with(api, "1."))
                return Error{ErrorKind::Config, url + ": unsupported simple API version " + api};
        }
        idx.name = str_at(doc, "name");
        if (auto v = doc.find("versions"); v != doc.end() && v->is_array())
            for (const auto& x : *v)
                if (x.is_string()) idx.versions.push_back(x.get<std::string>());
        for (const auto& f : doc["files"]) {
            if (!f.is_object()) continue;
            IndexFile file;
            file.filename = str_at(f, "filename");
            file.url = resolve_url(url, str_at(f, "url"));
            if (auto h = f.find("hashes"); h != f.end() && h->is_object())
                file.sha256 = str_at(*h, "sha256");
            file.requires_python = str_at(f, "requires-python");
            file.upload_time = str_at(f, "upload-time");
            if (auto s = f.find("size"); s != f.end() && s->is_number_integer())
                file.size = s->get<long long>();
            if (auto y = f.find("yanked"); y != f.end())
                file.yanked = y->is_string() || (y->is_boolean() && y->get<bool>());
            read_metadata_flag(f, file);
            file.wheel = parse_wheel_name(file.filename);
            if (file.filename.empty() || file.url.empty()) continue;
            idx.files.push_back(std::move(file));
        }
    } catch (const std::exception& e) {
        return Error{ErrorKind::Config,
                     url + ": the index answer is not valid JSON (" + e.what() + ")"};
    }
    return idx;
}

std::vector<const IndexFile*> ProjectIndex::linux_wheels(const std::string& version,
                                                         const std::string& machine) const {
    // PEP 440 equality: a pin on 13.0.3 names the file cuda_toolkit-13.0.3.0-...
    auto want = Pep440Version::parse(version);
    auto same = [&](const std::string& v) {
        auto have = Pep440Version::parse(v);
        return want && have ? compare(*want, *have) == 0 : v == version;
    };
    std::vector<const IndexFile*> out;
    int best_build = -1;
    for (const auto& f : files)
        if (f.wheel && !f.yanked && same(f.wheel->version) && f.wheel->linux_for(machine))
            best_build = std::max(best_build, f.wheel->build);
    for (const auto& f : files)
        if (f.wheel && !f.yanked && same(f.wheel->version) && f.wheel->linux_for(machine) &&
            f.wheel->build == best_build)
            out.push_back(&f);
    std::sort(out.begin(), out.end(),
              [](const IndexFile* a, const IndexFile* b) { return a->filename < b->filename; });
    return out;
}

std::vector<std::string> ProjectIndex::release_versions() const {
    std::set<std::string> seen;
    std::vector<Pep440Version> parsed;
    for (const auto& f : files) {
        if (!f.wheel || f.yanked || !f.wheel->linux_x86_64()) continue;
        if (!seen.insert(f.wheel->version).second) continue;
        auto v = Pep440Version::parse(f.wheel->version);
        if (v && !v->is_prerelease() && v->local().empty()) parsed.push_back(*v);
    }
    std::sort(parsed.begin(), parsed.end());
    std::vector<std::string> out;
    for (const auto& v : parsed) out.push_back(v.str());
    return out;
}

}  // namespace td::pypi
