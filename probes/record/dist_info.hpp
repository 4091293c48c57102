#pragma once
// Finding the *.dist-info directories of the distributions asked for: PEP 503 names,
// the --dists patterns ("nvidia-*": a trailing * is the only wildcard), METADATA's Name and
// Version.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace record {

// PEP 503: lower case, every run of '-', '_' and '.' becomes one '-'.
inline std::string normalize_name(const std::string& name) {
    std::string out;
    bool in_run = false;
    for (char c : name) {
        if (c == '-' || c == '_' || c == '.') {
            if (!in_run) out += '-';
            in_run = true;
        } else {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            in_run = false;
        }
    }
    return out;
}

struct NamePattern {
    std::string text;  // normalised, without the trailing '*'
    bool prefix = false;
    bool matches(const std::string& normalized) const {
        return prefix ? normalized.compare(0, text.size(), text) == 0 : normalized == text;
    }
};

// Parses "torch,nvidia-*"; false (with `error`) for an empty pattern or a '*' that is not
// the last character.
inline bool parse_patterns(const std::string& list, std::vector<NamePattern>* out,
                           std::string* error) {
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        std::string p = list.substr(start, comma - start);
        start = comma + 1;
        NamePattern np;
        if (!p.empty() && p.back() == '*') {
            np.prefix = true;
            p.pop_back();
        }
        if (p.find('*') != std::string::npos || (p.empty() && !np.prefix)) {
            *error = "--dists: '" + list.substr(0, 200) +
                     "': a pattern is a name, optionally "
                     "ending in * (torch,nvidia-*)";
            return false;
        }
        // Normalise before the '*' is put back: "nvidia_*" and "nvidia-*" are one pattern.
        np.text = normalize_name(p);
        out->push_back(np);
    }
    return true;
}

struct DistInfo {
    std::string dir;       // the *.dist-info directory (site dir joined with its name)
    std::string name;      // METADATA Name, else the name part of the directory
    std::string version;   // METADATA Version, else the version part of the directory
    std::string dir_name;  // normalised name part of the directory name
};

// Reads at most `max` bytes of `path` into `out`; false with `error` when it cannot.
inline bool read_small_file(const std::string& path, std::size_t max, std::string* out,
                            std::string* error) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *error = std::string("cannot open: ") + std::strerror(errno);
        return false;
    }
    out->clear();
    char buf[65536];
    while (out->size() <= max) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            *error = std::string("cannot read: ") + std::strerror(errno);
            ::close(fd);
            return false;
        }
        if (n == 0) break;
        out->append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (out->size() > max) {
        *error = "over " + std::to_string(max >> 20) + " MiB";
        return false;
    }
    return true;
}

// Name and Version from METADATA's header block (RFC 822 style, ends at the first blank line).
inline void read_metadata(DistInfo* d) {
    std::string text, error;
    if (!read_small_file(d->dir + "/METADATA", 1u << 20, &text, &error)) return;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(start, nl - start);
        start = nl + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) break;
        auto value_of = [&](const char* key) {
            std::string v = line.substr(std::strlen(key));
            while (!v.empty() && (v[0] == ' ' || v[0] == '\t')) v.erase(0, 1);
            while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.pop_back();
            return v;
        };
        if (line.rfind("Name:", 0) == 0 && d->name.empty()) d->name = value_of("Name:");
        if (line.rfind("Version:", 0) == 0 && d->version.empty()) d->version = value_of("Version:");
    }
}

// The *.dist-info directories directly in `site`, sorted by name; false when `site` cannot be
// listed.
inline bool list_dist_infos(const std::string& site, std::vector<DistInfo>* out) {
    DIR* dir = ::opendir(site.c_str());
    if (!dir) return false;
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(dir)) {
        const std::string n = e->d_name;
        const std::string suffix = ".dist-info";
        if (n.size() > suffix.size() &&
            n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
            names.push_back(n);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
        DistInfo d;
        d.dir = site + "/" + n;
        struct stat st;
        if (::stat(d.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        // "{name}-{version}.dist-info": the name part has no '-' (the wheel spec escapes it).
        const std::string stem = n.substr(0, n.size() - 10);
        const std::size_t dash = stem.find('-');
        d.dir_name = normalize_name(stem.substr(0, dash));
        read_metadata(&d);
        if (d.name.empty()) d.name = stem.substr(0, dash);
        if (d.version.empty() && dash != std::string::npos) d.version = stem.substr(dash + 1);
        out->push_back(d);
    }
    return true;
}

}  // namespace record
