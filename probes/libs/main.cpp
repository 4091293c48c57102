// probe-libs: resolves, the way ld.so would and without loading anything, the shared
// libraries the image's CUDA stack and torch need (DT_NEEDED, transitively), and lists
// library families (cudart, cublas, cublasLt, cudnn, nccl, nvJitLink) present as several different
// files. See README.md beside this file.
#include <dirent.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "content_version.hpp"
#include "duplicates.hpp"
#include "elf.hpp"
#include "families.hpp"
#include "ldcache.hpp"
#include "loader.hpp"
#include "paths.hpp"
#include "probe.hpp"
#include "site_dirs.hpp"

using namespace libsprobe;
using probe::Json;
using probe::libs::content_version;
using probe::libs::ContentVersion;

namespace {

// CUDA libraries that are roots when the loader's search finds them.
const char* const kRootPatterns[] = {"libcudart.so.*", "libcublas.so.*",  "libcublasLt.so.*",
                                     "libcudnn.so.*",  "libcudnn_*.so.*", "libnccl.so.2"};

bool is_root_name(const std::string& name) {
    for (const char* p : kRootPatterns)
        if (::fnmatch(p, name.c_str(), 0) == 0) return true;
    return false;
}

// ---- the report ---------------------------------------------------------------------------

struct LibEntry {
    std::string soname, path, via, needed_by;
};

struct Unresolved {
    std::string soname, needed_by, root;
};

struct Root {
    std::string path;
    std::string kind;  // "loader-search", "pip-nvidia", "torch", "flag"
    std::string via;   // how the loader search found it, or "root"
};

struct Report {
    std::vector<LibEntry> libraries;
    std::map<std::pair<std::string, std::string>, size_t> library_index;
    std::vector<Unresolved> unresolved;
    std::set<std::pair<std::string, std::string>> unresolved_seen;
    bool truncated = false;

    void add_library(const std::string& soname, const std::string& path, const std::string& via,
                     const std::string& needed_by) {
        auto key = std::make_pair(soname, path);
        if (library_index.count(key)) return;
        library_index[key] = libraries.size();
        libraries.push_back(LibEntry{soname, path, via, needed_by});
    }
    void add_unresolved(const std::string& soname, const std::string& needed_by,
                        const std::string& root) {
        if (!unresolved_seen.insert({soname, needed_by}).second) return;
        unresolved.push_back(Unresolved{soname, needed_by, root});
    }
};

// One load: the root and, breadth first as ld.so maps them, everything its DT_NEEDED
// pull in. Each root is a load of its own (a fresh process), so one root's libraries
// cannot hide another root's missing one.
// `preloaded`: the LD_PRELOAD objects, in the link map before the root (ld.so maps them
// first, so a DT_NEEDED name they carry as soname is theirs, whatever RPATH says).
void walk(Resolver& res, const Target& target, const Root& root, int max_depth,
          const std::vector<Node>& preloaded, Report& rep) {
    std::vector<Node> nodes;
    Node first;
    first.path = root.path;
    first.name = root.path;
    first.info = &res.elf(root.path);
    struct stat st;
    if (::stat(root.path.c_str(), &st) == 0) {
        first.dev = st.st_dev;
        first.ino = st.st_ino;
    }
    nodes.push_back(first);
    const std::string& soname = first.info->soname;
    rep.add_library(soname.empty() ? base_name(root.path) : soname, root.path, root.via, "");
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].depth >= max_depth) {
            if (!nodes[i].info->needed.empty()) rep.truncated = true;
            continue;
        }
        // Copy: nodes may grow (and move) while we walk this object's needs.
        const std::vector<std::string> needed = nodes[i].info->needed;
        const std::string needer_path = nodes[i].path;
        for (const auto& name : needed) {
            bool loaded = false;
            for (const auto& n : nodes) {
                if (n.name == name || n.path == name || n.info->soname == name) {
                    loaded = true;
                    break;
                }
            }
            if (loaded) continue;
            const Node* pre = nullptr;
            for (const auto& n : preloaded)
                if (n.info->soname == name || base_name(n.path) == name) pre = &n;
            if (pre) {
                rep.add_library(name, pre->path, "LD_PRELOAD", needer_path);
                continue;
            }
            if (name == target.rtld) {  // the loader itself: always loaded, never searched
                rep.add_library(name,
                                res.loadable(target.rtld_path) ? target.rtld_path : std::string(),
                                "rtld", needer_path);
                continue;
            }
            auto found = res.search(name, nodes, static_cast<int>(i));
            if (!found) {
                rep.add_unresolved(name, needer_path, root.path);
                continue;
            }
            rep.add_library(name, found->path, found->via, needer_path);
            Node n;
            n.path = found->path;
            n.name = name;
            n.info = &res.elf(found->path);
            n.loader = static_cast<int>(i);
            n.depth = nodes[i].depth + 1;
            if (::stat(found->path.c_str(), &st) == 0) {
                n.dev = st.st_dev;
                n.ino = st.st_ino;
            }
            bool same_file = false;  // ld.so reuses an object it already has under another name
            for (const auto& o : nodes)
                if (o.dev == n.dev && o.ino == n.ino && n.ino != 0) same_file = true;
            if (!same_file) nodes.push_back(n);
        }
    }
}

Json search_json(const Env& env) {
    Json s = Json::array();
    s.push(Json::object(
        {{"kind", "rpath"},
         {"note", "DT_RPATH of the needing object and its loaders, if it has no DT_RUNPATH"}}));
    Json llp = Json::object({{"kind", "LD_LIBRARY_PATH"}, {"set", env.ld_library_path_set}});
    llp.set("dirs", Json::array_of(env.ld_library_path));
    s.push(llp);
    s.push(Json::object({{"kind", "runpath"}, {"note", "DT_RUNPATH of the needing object"}}));
    Json cache = Json::object(
        {{"kind", "ld.so.cache"}, {"path", env.cache.path()}, {"loaded", env.cache.ok()}});
    cache.set("format", env.cache.ok() ? Json(env.cache.format()) : Json());
    cache.set("entries", static_cast<unsigned long long>(env.cache.entries().size()));
    if (!env.cache.ok()) cache.set("error", env.cache.error());
    s.push(cache);
    s.push(Json::object({{"kind", "default"}, {"dirs", Json::array_of(env.default_dirs)}}));
    return s;
}

int finish(probe::Exit status, const std::string& reason, const Json& data) {
    if (!reason.empty())
        std::fprintf(stderr, "%s: %s\n", probe::status_name(status), reason.c_str());
    return probe::finish("libs", status, reason, data);
}

}  // namespace

int main(int argc, char** argv) {
    auto flags = probe::parse_flags(argc, argv);
    std::vector<std::string> extra_roots, extra_sites, preload_names;
    int max_depth = 64;
    std::string cache_path = "/etc/ld.so.cache";
    const Target* target = &native_target();
    for (const auto& [key, value] : flags) {
        if (key == "roots") {
            for (const auto& r : split_any(value, ",", false)) extra_roots.push_back(r);
        } else if (key == "site-dirs") {
            for (const auto& r : split_any(value, ",", false)) extra_sites.push_back(r);
        } else if (key == "max-depth") {
            int d = 0;
            bool ok = !value.empty() && value.size() < 6;
            for (char c : value) {
                ok = ok && c >= '0' && c <= '9';
                if (ok) d = d * 10 + (c - '0');
            }
            if (!ok) return finish(probe::kError, "bad --max-depth=" + value, Json::object());
            max_depth = d;
        } else if (key == "ld-so-cache") {
            cache_path = value;
        } else if (key == "machine") {
            target = target_named(value);
            if (!target)
                return finish(probe::kError, "bad --machine=" + value + " (x86_64 or aarch64)",
                              Json::object());
        } else if (key == "preload") {
            // LD_PRELOAD's value as the image sets it (torchdock clears the variable for this
            // probe, so a preloaded library cannot answer for it): ' ' or ':' separated.
            for (const auto& r : split_any(value, ": ", false)) preload_names.push_back(r);
        } else if (key == "?") {
            return finish(probe::kError,
                          "unexpected argument " + value + " (flags are --name=value)",
                          Json::object());
        } else {
            return finish(probe::kError,
                          "bad flag --" + key +
                              " (flags: --roots, --max-depth, --site-dirs, --ld-so-cache, "
                              "--preload, --machine)",
                          Json::object());
        }
    }

    Env env;
    if (const char* llp = std::getenv("LD_LIBRARY_PATH"); llp && *llp) {
        env.ld_library_path_set = true;
        env.ld_library_path =
            split_any(llp, ":;", true);  // an empty element is the current directory
    }
    if (target != &native_target())
        probe::libs::foreign_files_reason() =
            "not asked: " + target->name + " objects cannot be loaded on this machine";
    env.default_dirs = target->default_dirs;
    // glibc-hwcaps levels are the CPU's: only when the loader played is this machine's.
    if (target == &native_target()) env.hwcaps = supported_hwcaps();
    env.lib_dst = is_dir("/lib/" + target->multiarch) ? "lib/" + target->multiarch : "lib64";
    env.platform = target->platform;
    env.machine = target->machine;
    env.cache_flags = target->cache_flags;
    env.cache.load(cache_path);
    Resolver res(env);

    // ---- LD_PRELOAD ----
    // Each entry as ld.so maps it: a path as given, a bare name through the program's search
    // (LD_LIBRARY_PATH, the cache, the default directories). One that cannot be loaded is
    // reported (ld.so prints an error and goes on).
    std::vector<Node> preloaded;
    Json preload_json = Json::array();
    for (const auto& name : preload_names) {
        auto f = res.search(name, {}, -1);
        Json o = Json::object({{"entry", name}});
        o.set("path", f ? Json(f->path) : Json());
        if (f) {
            Node n;
            n.path = f->path;
            n.name = name;
            n.info = &res.elf(f->path);
            preloaded.push_back(n);
            o.set("soname", n.info->soname.empty() ? Json() : Json(n.info->soname));
            std::string family = any_cuda_family(base_name(f->path));
            o.set("family", family.empty() ? Json() : Json(family));
            ContentVersion cv = family_of(base_name(f->path)).empty()
                                    ? ContentVersion{}
                                    : content_version(family_of(base_name(f->path)), f->path);
            o.set("version", cv.version.empty() ? Json() : Json(cv.version));
            std::string wheel = wheel_of_file(f->path);
            o.set("wheel", wheel.empty() ? Json() : Json(wheel));
        } else {
            o.set("error", access(name.c_str(), F_OK) == 0
                               ? "cannot be loaded (not a readable ELF object of this machine)"
                               : "not found");
        }
        preload_json.push(o);
    }

    // ---- roots ----
    std::vector<Root> roots;
    std::set<std::pair<dev_t, ino_t>> root_ids;
    auto add_root = [&](const std::string& path, const std::string& kind, const std::string& via) {
        struct stat st;
        if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
        if (!root_ids.insert({st.st_dev, st.st_ino}).second) return true;
        roots.push_back(Root{path, kind, via});
        return true;
    };
    // (1) CUDA libraries by the names found where the loader looks, each as the loader
    // would pick it for that name (shadowed copies show up under duplicates).
    std::set<std::string> names;
    for (const auto& d : env.ld_library_path)
        for (const auto& n : list_dir(d))
            if (is_root_name(n)) names.insert(n);
    for (const auto& e : env.cache.entries())
        if (e.flags == target->cache_flags && is_root_name(e.key)) names.insert(e.key);
    for (const auto& d : env.default_dirs)
        for (const auto& n : list_dir(d))
            if (is_root_name(n)) names.insert(n);
    for (const auto& n : names) {
        auto f = res.search(n, {}, -1);
        // Only names libraries are asked for by: libcudnn.so.9, not its file libcudnn.so.9.1.0.
        if (!f || (!res.elf(f->path).soname.empty() && res.elf(f->path).soname != n)) continue;
        add_root(f->path, "loader-search", f->via);
    }
    // (2) pip wheels (nvidia-*-cu12/13 in nvidia/*/lib) and torch in the site directories of
    // the interpreter that runs torch (--site-dirs, from the torch probe): no fixed list.
    std::vector<std::string> sites;
    {
        std::set<std::string> seen;
        for (const auto& d : extra_sites)
            if (is_dir(d) && seen.insert(real_path(d)).second) sites.push_back(d);
    }
    std::vector<std::string> pip_dirs, torch_dirs;
    for (const auto& site : sites) {
        for (const auto& d : glob_dirs(join(site, "nvidia/*/lib"))) pip_dirs.push_back(d);
        if (is_dir(join(site, "torch/lib"))) torch_dirs.push_back(join(site, "torch/lib"));
    }
    for (const auto& d : pip_dirs)
        for (const auto& n : list_dir(d))
            if (is_root_name(n)) add_root(join(d, n), "pip-nvidia", "root");
    for (const auto& d : torch_dirs) {
        if (!add_root(join(d, "libtorch_cuda.so"), "torch", "root"))
            add_root(join(d, "libtorch_cpu.so"), "torch", "root");
        // The extension module Python loads (torch/_C.cpython-*.so): libtorch_python and on.
        glob_t g;
        std::string package = d.substr(0, d.size() - std::string("/lib").size());
        if (::glob(join(package, "_C.*.so").c_str(), 0, nullptr, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; ++i) add_root(g.gl_pathv[i], "torch", "root");
        ::globfree(&g);
    }
    // (3) --roots
    for (const auto& r : extra_roots) {
        struct stat st;
        if (::stat(r.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            return finish(probe::kError, "--roots: " + r + " is not a file", Json::object());
        if (!res.elf(r).compatible)
            return finish(probe::kError,
                          "--roots: " + r + " is not a loadable ELF object here: " + res.elf(r).why,
                          Json::object());
        add_root(r, "flag", "root");
    }

    // ---- resolve ----
    Report rep;
    for (const auto& r : roots) {
        if (!res.elf(r.path).compatible) continue;  // e.g. a 32-bit copy: ld.so would skip it too
        walk(res, *target, r, max_depth, preloaded, rep);
    }

    // ---- duplicates ----
    Duplicates dups;
    for (const auto& d : env.ld_library_path) dups.scan_dir(d);
    for (const auto& d : env.default_dirs) dups.scan_dir(d);
    for (const auto& e : env.cache.entries())
        if (e.flags == target->cache_flags && !family_of(e.key).empty()) dups.consider(e.value);
    for (const auto& d : pip_dirs) dups.scan_dir(d);
    for (const auto& d : torch_dirs) dups.scan_dir(d);
    for (const auto& n : preloaded)
        if (!family_of(base_name(n.path)).empty()) dups.consider(n.path);
    for (const char* pat :
         {"/usr/local/cuda*/lib64", "/usr/local/cuda*/lib", "/usr/local/cuda*/targets/*/lib"})
        for (const auto& d : glob_dirs(pat)) dups.scan_dir(d);

    // ---- report ----
    Json roots_json = Json::array();
    for (const auto& r : roots) {
        const ElfInfo& e = res.elf(r.path);
        Json o = Json::object({{"path", r.path}, {"kind", r.kind}, {"found_via", r.via}});
        o.set("soname", e.soname.empty() ? Json() : Json(e.soname));
        if (!e.compatible) o.set("skipped", e.why);
        roots_json.push(o);
    }
    Json libs = Json::array();
    for (const auto& l : rep.libraries) {
        Json o = Json::object({{"soname", l.soname}});
        o.set("path", l.path.empty() ? Json() : Json(l.path));
        o.set("found_via", l.via);
        o.set("needed_by", l.needed_by.empty() ? Json() : Json(l.needed_by));
        // The file a process maps for it (/proc/self/maps names real paths): compared with
        // what the torch probe saw mapped.
        const std::string real = l.path.empty() ? std::string() : real_path(l.path);
        o.set("realpath", real.empty() ? Json() : Json(real));
        libs.push(o);
    }
    Json unresolved = Json::array();
    for (const auto& u : rep.unresolved) {
        Json o = Json::object({{"soname", u.soname}, {"needed_by", u.needed_by}, {"root", u.root}});
        const std::string real = real_path(u.needed_by);
        o.set("needed_by_realpath", real.empty() ? Json() : Json(real));
        unresolved.push(o);
    }
    Json dup = dups.json();
    Json data = Json::object();
    data.set("machine", target->name);
    data.set("search", search_json(env));
    data.set("hwcaps", Json::array_of(env.hwcaps));
    data.set("site_dirs", Json::array_of(sites));
    data.set("roots", roots_json);
    data.set("libraries", libs);
    data.set("unresolved", unresolved);
    data.set("duplicates", dup);
    data.set("preload", preload_json);
    size_t unreadable_count = 0;
    data.set("unreadable", unreadable_dirs(sites, unreadable_count));
    data.set("uid", static_cast<long long>(::getuid()));
    data.set("gid", static_cast<long long>(::getgid()));
    data.set("max_depth", max_depth);
    data.set("truncated", rep.truncated);

    std::fprintf(stderr, "ld.so.cache: %s\n",
                 env.cache.ok() ? (env.cache.format() + ", " +
                                   std::to_string(env.cache.entries().size()) + " entries")
                                      .c_str()
                                : env.cache.error().c_str());
    std::fprintf(stderr, "%zu root(s), %zu libraries resolved, %zu unresolved\n", roots.size(),
                 rep.libraries.size(), rep.unresolved.size());
    for (const auto& u : rep.unresolved)
        std::fprintf(stderr, "  unresolved: %s needed by %s\n", u.soname.c_str(),
                     u.needed_by.c_str());
    for (const auto& [fam, copies] : dups.families)
        if (copies.size() > 1) {
            std::fprintf(stderr, "  %zu copies of %s:", copies.size(), fam.c_str());
            for (const auto& kv : copies) std::fprintf(stderr, " %s", kv.second.real.c_str());
            std::fprintf(stderr, "\n");
        }

    if (roots.empty() && unreadable_count > 0)
        return finish(
            probe::kFail,
            "the CUDA libraries' directories cannot be read by uid " + std::to_string(::getuid()),
            data);
    if (roots.empty())
        return finish(probe::kWaived,
                      sites.empty() ? "no CUDA libraries where the loader looks, and no site "
                                      "directories of torch were given"
                                    : "no CUDA libraries and no torch found",
                      data);
    if (!rep.unresolved.empty()) {
        const auto& u = rep.unresolved.front();
        return finish(probe::kFail, u.soname + " needed by " + u.needed_by + " cannot be found",
                      data);
    }
    return finish(probe::kPass, "", data);
}
