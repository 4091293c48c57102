// probe-record: checks installed Python distributions (torch, its companions and the
// nvidia-* wheels by default) against their own dist-info RECORD, the way debsums checks
// Debian packages: every file with a sha256 in RECORD must be there, be a regular file this
// user can read, have the recorded size and the recorded hash. A static executable: nothing
// of the image (libc, loader, LD_PRELOAD) takes part. See README.md beside this file.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "dist_info.hpp"
#include "file_check.hpp"
#include "file_identity.hpp"
#include "platform_facts.hpp"
#include "probe.hpp"
#include "record_csv.hpp"
#include "report.hpp"
#include "sha256_shani.hpp"

using probe::Json;
using namespace record;

namespace {

const char kUsage[] =
    "probe-record takes --site-dirs=A,B (required unless --inspect is given), --dists=PATTERNS, "
    "--threads=N, --sha-impl=auto|portable, --text=DIST:PATH,..., --inspect=PATH,..., "
    "--imported=DIST@SITE_DIR,...";
const char kDefaultDists[] = "torch,torchvision,torchaudio,triton,nvidia-*";
constexpr std::size_t kMaxListedProblems = 50;
constexpr std::size_t kMaxTextBytes = 8192;

struct Distribution {
    DistInfo info;
    long long files = 0, bytes = 0, unchecked = 0;
    std::vector<Problem> problems;
    std::vector<std::string> tags;  // WHEEL Tag: lines
    ElfCensus elf;
    Json texts = Json::object();  // --text files of this distribution: path -> text | null
    std::string shadowed_by;      // --imported: the site dir this python imports it from
};

// --imported=torch@/opt/pkgs,...: (normalised distribution name, the site dir the python
// imports it from: what its process showed, e.g. torch.__file__).
bool parse_imported(const std::string& flag, std::vector<std::pair<std::string, std::string>>* out,
                    std::string* why) {
    for (const std::string& item : probe::split(flag, ',', false)) {
        const std::size_t at = item.find('@');
        if (at == std::string::npos || at == 0 || at + 1 >= item.size() || item[at + 1] != '/') {
            *why = "--imported=" + item.substr(0, 200) + ": DIST@SITE_DIR, an absolute directory";
            return false;
        }
        out->push_back({normalize_name(item.substr(0, at)), item.substr(at + 1)});
    }
    return true;
}

// --text=torch:torch/version.py,...: (normalised distribution name, path below its site dir).
bool parse_texts(const std::string& flag, std::vector<std::pair<std::string, std::string>>* out,
                 std::string* why) {
    for (const std::string& item : probe::split(flag, ',', false)) {
        const std::size_t colon = item.find(':');
        std::string file;
        if (colon == std::string::npos || colon == 0 ||
            !record_file_path("/", item.substr(colon + 1), &file) || file == "/") {
            *why = "--text=" + item.substr(0, 200) + ": DIST:PATH, a path below the site dir";
            return false;
        }
        out->push_back({normalize_name(item.substr(0, colon)), item.substr(colon + 1)});
    }
    return true;
}

// The first kMaxTextBytes of `site`/`rel`, as JSON text; null when it cannot be read.
Json small_text(const std::string& site, const std::string& rel) {
    std::string file, text, error;
    if (!record_file_path(site, rel, &file)) return Json();
    const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return Json();
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return Json();
    }
    text.resize(kMaxTextBytes);
    const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
    ::close(fd);
    if (n < 0) return Json();
    text.resize(static_cast<std::size_t>(n));
    return Json(text);
}

unsigned default_threads() {
    cpu_set_t set;
    unsigned n = 1;
    if (::sched_getaffinity(0, sizeof set, &set) == 0) n = static_cast<unsigned>(CPU_COUNT(&set));
    return std::max(1u, std::min(8u, n));
}

std::string real_path(const std::string& p) {
    char buf[PATH_MAX];
    return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

// Turns one distribution's RECORD into files to check, unchecked rows and bad rows.
void read_record(const std::string& site, Distribution& d, std::size_t index,
                 std::vector<FileEntry>& files) {
    std::size_t line = 0;  // of the row at hand; 0 for the file as a whole
    auto bad = [&](const std::string& rel, const std::string& detail) {
        Problem p;
        p.line = line;
        p.dist = index;
        p.rel = rel;
        p.kind = "bad_record";
        p.detail = detail;
        d.problems.push_back(p);
    };
    std::string text, error;
    if (!read_small_file(d.info.dir + "/RECORD", kMaxRecordBytes, &text, &error))
        return bad("", "cannot be read: " + error);
    const RecordRows parsed = parse_record(text);
    if (!parsed.error.empty()) return bad("", parsed.error);
    for (const RecordRow& row : parsed.rows) {
        line = row.line;
        const std::string where = "line " + std::to_string(row.line);
        const std::string rel = row.fields[0];
        if (row.fields.size() != 3) {
            bad(rel, where + " has " + std::to_string(row.fields.size()) + " fields, not 3");
            continue;
        }
        const std::string& hash = row.fields[1];
        if (hash.empty()) continue;  // RECORD itself, *.pyc, INSTALLER: not hashed by design
        const std::size_t eq = hash.find('=');
        if (eq == std::string::npos) {
            bad(rel, where + ": hash '" + hash.substr(0, 80) + "' is not ALGORITHM=DIGEST");
            continue;
        }
        if (hash.compare(0, eq, "sha256") != 0) {
            ++d.unchecked;  // another algorithm: counted, not trusted, not an error
            continue;
        }
        FileEntry f;
        f.dist = index;
        f.line = row.line;
        f.rel = rel;
        f.digest = hash.substr(eq + 1);
        while (!f.digest.empty() && f.digest.back() == '=') f.digest.pop_back();
        const std::string& size = row.fields[2];
        char* end = nullptr;
        f.expected_size = size.empty() ? -1 : std::strtoll(size.c_str(), &end, 10);
        if (!size.empty() && (*end != '\0' || f.expected_size < 0 || size[0] == '-')) {
            bad(rel, where + ": size '" + size.substr(0, 40) + "' is not a number");
            continue;
        }
        if (!record_file_path(site, rel, &f.file)) {
            bad(rel, where + ": path '" + rel.substr(0, 200) + "' is absolute or leaves /");
            continue;
        }
        struct stat st;
        if (::lstat(f.file.c_str(), &st) != 0) {
            const std::string moved = pip_target_path(site, rel);
            if (!moved.empty() && ::lstat(moved.c_str(), &st) == 0) f.file = moved;
        }
        files.push_back(f);
    }
}

// The egg-info directory beside the package that holds `file` (`X/torch-1.13.0.egg-info` for
// `X/torch/version.py`), "" when none: how setuptools and Debian's python3-* packages record an
// installation that has no RECORD to verify.
std::string egg_info_of(const std::string& file) {
    std::string dir = file.substr(0, file.find_last_of('/'));
    for (int level = 0; level < 3 && dir.size() > 1; ++level) {
        const std::size_t slash = dir.find_last_of('/');
        if (slash == std::string::npos) break;
        const std::string parent = dir.substr(0, slash), package = dir.substr(slash + 1);
        if (DIR* d = ::opendir(parent.empty() ? "/" : parent.c_str())) {
            std::string found;
            while (struct dirent* e = ::readdir(d)) {
                const std::string name = e->d_name;
                const bool egg =
                    name.size() > 9 && name.compare(name.size() - 9, 9, ".egg-info") == 0;
                if (egg && (name.rfind(package + "-", 0) == 0 || name == package + ".egg-info")) {
                    found = parent + "/" + name;
                    break;
                }
            }
            ::closedir(d);
            if (!found.empty()) return found;
        }
        dir = parent;
    }
    return {};
}

// --inspect: each path's identity (probes/common/file_identity.hpp) and whether a RECORD this
// run verified lists it: {"record": {"dist", "dist_info", "verified"}} or null, and the egg-info
// beside it when no RECORD does.
Json inspected_json(const std::vector<std::string>& paths, const std::vector<Distribution>& dists,
                    const std::vector<FileEntry>& files) {
    std::set<std::pair<std::size_t, std::size_t>> damaged;  // (dist, RECORD line)
    for (std::size_t i = 0; i < dists.size(); ++i)
        for (const Problem& p : dists[i].problems) damaged.insert({i, p.line});
    Json out = Json::array();
    for (const std::string& path : paths) {
        Json o = probe::identify_file(path);
        const std::string real = real_path(path);
        const FileEntry* listed = nullptr;
        for (const FileEntry& f : files)
            if (f.file == path || (!real.empty() && f.file == real) ||
                (!real.empty() && real_path(f.file) == real)) {
                listed = &f;
                break;
            }
        if (listed) {
            const Distribution& d = dists[listed->dist];
            o.set("record",
                  Json::object({{"dist", d.info.name + " " + d.info.version},
                                {"dist_info", d.info.dir},
                                {"verified", !damaged.count({listed->dist, listed->line})}}));
        } else {
            o.set("record", Json());
            const std::string egg = egg_info_of(real.empty() ? path : real);
            o.set("egg_info", egg.empty() ? Json() : Json(egg));
        }
        out.push(o);
    }
    return out;
}

int run(int argc, char** argv) {
    const auto started = std::chrono::steady_clock::now();
    auto flags = probe::parse_flags(argc, argv);
    Json data = Json::object();
    auto error = [&](const std::string& why) {
        return probe::finish("record", probe::kError, why, data);
    };
    const std::string unknown = probe::unknown_flag(
        flags, {"site-dirs", "dists", "threads", "sha-impl", "text", "inspect", "imported"},
        kUsage);
    if (!unknown.empty()) return error(unknown);
    const std::vector<std::string> site_dirs = probe::split(flags["site-dirs"], ',', false);
    const std::vector<std::string> inspect = probe::split(flags["inspect"], ',', false);
    data.set("site_dirs", Json::array_of(site_dirs));
    if (site_dirs.empty() && inspect.empty())
        return error("--site-dirs is required (" + std::string(kUsage) + ")");
    std::vector<NamePattern> patterns;
    std::string why;
    const std::string dists_flag = flags.count("dists") ? flags["dists"] : kDefaultDists;
    if (!parse_patterns(dists_flag, &patterns, &why)) return error(why);
    unsigned threads = default_threads();
    if (flags.count("threads")) {
        const std::string& t = flags["threads"];
        char* end = nullptr;
        const long v = std::strtol(t.c_str(), &end, 10);
        if (t.empty() || *end != '\0' || v < 1 || v > 64)
            return error("--threads=" + t.substr(0, 40) + ": a number from 1 to 64");
        threads = static_cast<unsigned>(v);
    }
    const std::string impl_flag = flags.count("sha-impl") ? flags["sha-impl"] : "auto";
    if (impl_flag != "auto" && impl_flag != "portable")
        return error("--sha-impl=" + impl_flag.substr(0, 40) + ": auto or portable");
    std::vector<std::pair<std::string, std::string>> texts;
    if (flags.count("text") && !parse_texts(flags["text"], &texts, &why)) return error(why);
    std::vector<std::pair<std::string, std::string>> imported;
    if (flags.count("imported") && !parse_imported(flags["imported"], &imported, &why))
        return error(why);
    for (auto& [dist, dir] : imported)
        if (const std::string real = real_path(dir); !real.empty()) dir = real;
    const char* sha_impl = "portable";
    const Sha256BlockFn blocks = sha256_select(impl_flag == "portable", &sha_impl);

    // ---- the distributions asked for, each dist-info once ----
    std::vector<Distribution> dists;
    std::vector<std::string> dist_sites;  // realpath of the site dir holding each
    std::set<std::string> seen;
    bool any_site = false;
    for (const std::string& site : site_dirs) {
        const std::string site_real = real_path(site);
        std::vector<DistInfo> infos;
        if (site_real.empty() || !list_dist_infos(site_real, &infos)) {
            std::printf("%s: cannot be read\n", site.c_str());
            continue;
        }
        any_site = true;
        for (DistInfo& info : infos) {
            const std::string name = normalize_name(info.name);
            const bool wanted = std::any_of(
                patterns.begin(), patterns.end(),
                [&](const NamePattern& p) { return p.matches(name) || p.matches(info.dir_name); });
            if (!wanted || !seen.insert(real_path(info.dir)).second) continue;
            Distribution d{info, 0, 0, 0, {}, wheel_tags(info.dir), {}, Json::object(), {}};
            for (const auto& [dist, rel] : texts)
                if (dist == name || dist == info.dir_name)
                    d.texts.set(rel.c_str(), small_text(site_real, rel));
            // Another copy of a distribution the python imports from elsewhere: never
            // imported by it, so its files are not read (listed, with where the one it imports is).
            for (const auto& [dist, dir] : imported)
                if (dist == name && dir != site_real) d.shadowed_by = dir;
            dists.push_back(std::move(d));
            dist_sites.push_back(site_real);
        }
    }
    data.set("distributions", Json::array());
    if (!any_site && inspect.empty())
        return error("no readable site dir among " + flags["site-dirs"]);

    // ---- sizes and modes first, then hashes of the files whose size matched ----
    std::vector<FileEntry> files, to_hash;
    for (std::size_t i = 0; i < dists.size(); ++i)
        if (dists[i].shadowed_by.empty()) read_record(dist_sites[i], dists[i], i, files);
    for (FileEntry& f : files) {
        Problem p;
        const bool ok = check_metadata(f, &p);
        dists[f.dist].files += 1;
        dists[f.dist].bytes += std::max(0LL, f.size);
        if (ok)
            to_hash.push_back(f);
        else
            dists[f.dist].problems.push_back(p);
    }
    const std::vector<HashOutcome> hashed = hash_files(to_hash, threads, blocks);
    long long hashed_bytes = 0;
    for (std::size_t i = 0; i < to_hash.size(); ++i) {
        const FileEntry& f = to_hash[i];
        const HashOutcome& h = hashed[i];
        hashed_bytes += h.bytes;
        if (h.error.empty()) dists[f.dist].elf.add(h.elf, f.line, f.rel);
        Problem p;
        p.dist = f.dist;
        p.line = f.line;
        p.rel = f.rel;
        p.file = f.file;
        p.expected_size = f.expected_size;
        p.size = f.size;
        if (!h.error.empty()) {
            p.kind = "unreadable";
            p.detail = "read failed: " + h.error;
        } else if (h.bytes != f.size) {
            p.kind = "size";
            p.size = h.bytes;
            p.detail = "changed while read";
        } else if (h.digest != f.digest) {
            p.kind = "hash";
            p.detail = "sha256=" + h.digest + ", RECORD says sha256=" + f.digest;
        } else {
            continue;
        }
        dists[f.dist].problems.push_back(p);
    }

    // ---- report: problems in RECORD order ----
    for (Distribution& d : dists)
        std::stable_sort(d.problems.begin(), d.problems.end(),
                         [](const Problem& a, const Problem& b) { return a.line < b.line; });
    Json dist_json = Json::array();
    std::vector<std::string> first_problems;
    long long total_files = 0, total_problems = 0;
    for (const Distribution& d : dists) {
        const std::string label = d.info.name + " " + d.info.version;
        total_files += d.files;
        total_problems += static_cast<long long>(d.problems.size());
        const std::size_t n = d.problems.size();
        if (!d.shadowed_by.empty())
            std::printf("%s: not read, this python imports %s from %s\n", label.c_str(),
                        d.info.name.c_str(), d.shadowed_by.c_str());
        else
            std::printf(
                "%s: %lld files, %s, %s\n", label.c_str(), d.files, human_bytes(d.bytes).c_str(),
                n == 0 ? "ok" : (std::to_string(n) + (n == 1 ? " problem" : " problems")).c_str());
        Json problems = Json::array();
        for (std::size_t k = 0; k < n && k < kMaxListedProblems; ++k) {
            problems.push(problem_json(d.problems[k]));
            if (k < 5) std::printf("  %s\n", describe(d.problems[k]).c_str());
            if (first_problems.size() < 3)
                first_problems.push_back(label + ": " + describe(d.problems[k]));
        }
        if (d.unchecked > 0)
            std::printf("  %lld files with another hash than sha256, not checked\n", d.unchecked);
        Json o = Json::object(
            {{"name", d.info.name}, {"version", d.info.version}, {"dist_info", d.info.dir}});
        o.set("files", d.files);
        o.set("bytes", d.bytes);
        o.set("unchecked", d.unchecked);
        o.set("problems", problems);
        o.set("problems_total", static_cast<long long>(n));
        o.set("tags", Json::array_of(d.tags));
        Json elf = Json::object();
        for (const auto& [identity, c] : d.elf.by_identity)
            elf.set(identity.c_str(),
                    Json::object({{"count", Json(c.count)}, {"first", Json(c.first)}}));
        o.set("elf", elf);
        if (!texts.empty()) o.set("texts", d.texts);
        if (!d.shadowed_by.empty()) o.set("shadowed_by", d.shadowed_by);
        dist_json.push(o);
    }
    data = Json::object({{"site_dirs", Json::array_of(site_dirs)}});
    data.set("distributions", dist_json);
    data.set("files", total_files);
    data.set("hashed_bytes", hashed_bytes);
    data.set("seconds",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    data.set("threads", static_cast<long long>(threads));
    data.set("sha_impl", sha_impl);
    if (!inspect.empty()) data.set("inspected", inspected_json(inspect, dists, files));

    if (dists.empty()) {
        std::string names;
        for (const auto& p : probe::split(dists_flag, ',', false))
            names += (names.empty() ? "" : ", ") + p;
        return probe::finish("record", probe::kWaived,
                             "no " + names + " distribution in " + flags["site-dirs"], data);
    }
    if (total_problems > 0) {
        std::string reason;
        for (const auto& s : first_problems) reason += (reason.empty() ? "" : "; ") + s;
        if (total_problems > static_cast<long long>(first_problems.size()))
            reason += " (" + std::to_string(total_problems) + " problems in all)";
        return probe::finish("record", probe::kFail, reason, data);
    }
    return probe::finish("record", probe::kPass, "", data);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        return probe::finish("record", probe::kError, std::string("internal error: ") + e.what(),
                             Json::object());
    } catch (...) {
        return probe::finish("record", probe::kError, "internal error", Json::object());
    }
}
