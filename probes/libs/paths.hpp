#pragma once
// Small file-system helpers of probe-libs (no following of anything the loader would not).
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace libsprobe {

inline std::vector<std::string> split_any(const std::string& s, const char* seps, bool keep_empty) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (std::strchr(seps, c)) {
            if (keep_empty || !cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (keep_empty || !cur.empty()) out.push_back(cur);
    return out;
}

inline std::vector<std::string> list_dir(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
    if (!d) return out;
    while (struct dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

// The directories matching `pattern` (GLOB_ONLYDIR is only a hint in glibc and absent
// from musl, which this static probe is built with: each match is checked).
inline std::vector<std::string> glob_dirs(const std::string& pattern) {
    std::vector<std::string> out;
    glob_t g;
    if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) {
            struct stat st;
            if (::stat(g.gl_pathv[i], &st) == 0 && S_ISDIR(st.st_mode))
                out.push_back(g.gl_pathv[i]);
        }
    }
    ::globfree(&g);
    return out;
}

inline std::string real_path(const std::string& p) {
    char buf[PATH_MAX];
    return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

inline std::string join(const std::string& dir, const std::string& name) {
    if (dir.empty()) return name;
    return dir.back() == '/' ? dir + name : dir + "/" + name;
}

inline std::string base_name(const std::string& p) {
    size_t s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

inline bool is_dir(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace libsprobe
