// probe-kernels: which GPU code (SASS architectures, PTX versions) each CUDA shared object
// carries, read from its fatbins without a GPU and without loading anything. The parser
// is src/core/kernels (pure, C++17), compiled into this probe. See README.md beside this
// file.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/kernels/kernel_audit.hpp"
#include "file_source.hpp"
#include "probe.hpp"
#include "walk.hpp"

using probe::Json;
namespace tk = td::kernels;

namespace {

int finish(probe::Exit status, const std::string& reason, const Json& data) {
    return probe::finish("kernels", status, reason, data);
}

bool parse_count(const std::string& s, unsigned long long& out) {
    if (s.empty() || s.size() > 19) return false;
    out = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        out = out * 10 + static_cast<unsigned long long>(c - '0');
    }
    return true;
}

Json arch_list(const std::vector<tk::Arch>& archs, const char* prefix) {
    Json a = Json::array();
    for (const auto& x : archs) a.push(Json(x.name(prefix)));
    return a;
}

Json ptx_list(const std::vector<tk::PtxTarget>& ptx) {
    Json a = Json::array();
    for (const auto& p : ptx)
        a.push(Json::object({{"arch", p.arch.name("compute_")}, {"isa", p.isa.text()}}));
    return a;
}

Json group_json(const tk::FatbinGroup& g) {
    if (g.containers == 0) return Json();
    Json o = Json::object({{"containers", g.containers},
                           {"entries", g.entries},
                           {"sass_entries", g.sass_entries},
                           {"ptx_entries", g.ptx_entries},
                           {"other_entries", g.other_entries},
                           {"compressed_entries", g.compressed_entries}});
    o.set("sass", arch_list(g.images.sass, "sm_"));
    o.set("ptx", ptx_list(g.images.ptx));
    o.set("sections", Json::array_of(g.sections));
    return o;
}

Json object_json(const kernelsprobe::FoundFile& f, const tk::ObjectKernels& k) {
    const tk::KernelImages run = k.runnable();
    Json o = Json::object({{"path", f.path}, {"size", static_cast<unsigned long long>(k.size)}});
    o.set("aliases", Json::array_of(f.aliases));
    o.set("has_fatbin", k.has_fatbin());
    o.set("sass", arch_list(run.sass, "sm_"));
    o.set("ptx", ptx_list(run.ptx));
    o.set("compressed_entries", static_cast<unsigned long long>(k.executable.compressed_entries +
                                                                k.embedded.compressed_entries));
    o.set("executable", group_json(k.executable));
    o.set("embedded", group_json(k.embedded));
    o.set("relocatable", group_json(k.relocatable));
    Json profiles = Json::array();
    for (const auto& p : k.profiles)
        profiles.push(
            Json::object({{"sass", arch_list(p.images.sass, "sm_")},
                          {"ptx", ptx_list(p.images.ptx)},
                          {"containers", static_cast<unsigned long long>(p.containers)}}));
    o.set("profiles", profiles);
    o.set("profiles_truncated", k.profiles_truncated);
    o.set("problems", Json::array_of(k.problems));
    o.set("truncated", k.truncated);
    o.set("error", k.error.empty() ? Json() : Json(k.error));
    return o;
}

std::string summary(const tk::KernelImages& run) {
    std::string s;
    for (const auto& a : run.sass) s += (s.empty() ? "" : " ") + a.name("sm_");
    for (const auto& p : run.ptx) s += (s.empty() ? "" : " ") + p.arch.name("compute_");
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> paths;
    kernelsprobe::WalkLimits walk_limits;
    tk::AuditLimits audit_limits;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.rfind("--", 0) != 0) {
            paths.push_back(a);
            continue;
        }
        const auto eq = a.find('=');
        const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
        unsigned long long n = 0;
        if (name == "paths") {
            for (const auto& p : probe::split(value, ',', false)) paths.push_back(p);
        } else if (name == "max-files" && parse_count(value, n) && n > 0) {
            walk_limits.max_files = static_cast<std::size_t>(n);
        } else if (name == "max-bytes" && parse_count(value, n)) {
            audit_limits.max_search_bytes = n;
        } else if (name == "max-depth" && parse_count(value, n) && n <= 1000) {
            walk_limits.max_depth = static_cast<int>(n);
        } else {
            return finish(probe::kError, "unknown or bad flag: " + a, Json::object());
        }
    }
    // Without paths: where the loader looks for CUDA libraries here.
    std::vector<std::pair<std::string, std::string>> roots;  // path, why
    for (const auto& p : paths) roots.emplace_back(p, "argument");
    if (roots.empty()) {
        if (const char* llp = std::getenv("LD_LIBRARY_PATH"))
            for (const auto& d : probe::split(llp, ':', false))
                roots.emplace_back(d, "LD_LIBRARY_PATH");
        roots.emplace_back("/usr/local/cuda/lib64", "default");
    }

    kernelsprobe::Walker walker(walk_limits);
    Json roots_json = Json::array();
    std::size_t existing = 0;
    for (const auto& [path, why] : roots) {
        const bool exists = walker.add_root(path);
        existing += exists ? 1 : 0;
        roots_json.push(Json::object({{"path", path}, {"kind", why}, {"exists", exists}}));
    }
    kernelsprobe::WalkResult found = walker.take();

    Json objects = Json::array();
    std::size_t not_elf = 0, with_kernels = 0, unreadable = 0;
    bool truncated = found.truncated;
    for (const auto& f : found.files) {
        kernelsprobe::FileSource src(f.path);
        if (!src.ok()) {
            ++unreadable;
            std::fprintf(stderr, "%s: cannot read: %s\n", f.path.c_str(), src.error().c_str());
            continue;
        }
        tk::ObjectKernels k = tk::audit_object(src, audit_limits);
        if (!k.is_elf) {  // a linker script named libfoo.so, say
            ++not_elf;
            continue;
        }
        truncated = truncated || k.truncated;
        if (k.has_fatbin()) {
            ++with_kernels;
            std::printf("%s: %s\n", f.path.c_str(), summary(k.runnable()).c_str());
        }
        for (const auto& p : k.problems)
            std::fprintf(stderr, "%s: %s\n", f.path.c_str(), p.c_str());
        objects.push(object_json(f, k));
    }
    Json data = Json::object();
    data.set("roots", roots_json);
    data.set("objects", objects);
    data.set("objects_with_kernels", static_cast<unsigned long long>(with_kernels));
    data.set("not_elf", static_cast<unsigned long long>(not_elf));
    data.set("unreadable", static_cast<unsigned long long>(unreadable));
    data.set("truncated", truncated);
    data.set(
        "limits",
        Json::object({{"max_files", static_cast<unsigned long long>(walk_limits.max_files)},
                      {"max_bytes", static_cast<unsigned long long>(audit_limits.max_search_bytes)},
                      {"max_depth", walk_limits.max_depth}}));
    std::fprintf(stderr, "%zu object(s) read, %zu with GPU code\n", found.files.size(),
                 with_kernels);
    if (existing == 0) return finish(probe::kWaived, "none of the paths exists", data);
    return finish(probe::kPass, "", data);
}
