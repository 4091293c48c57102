#pragma once
// Finds the shared objects to audit under the paths given: a file is taken as it is; a
// directory is walked (an explicit stack, no recursion; symlinked directories are not
// entered, so a loop cannot trap the walk) for files named *.so or *.so.*. The same file
// reached by several names (libcudnn.so -> libcudnn.so.9 -> libcudnn.so.9.10.2) is one
// object, listed under the first name the (sorted) walk reaches, the others as aliases.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kernelsprobe {

struct WalkLimits {
    std::size_t max_files = 10000;          // objects kept
    std::size_t max_dir_entries = 1000000;  // directory entries looked at, all roots
    int max_depth = 32;
};

struct FoundFile {
    std::string path;
    std::vector<std::string> aliases;
};

struct WalkResult {
    std::vector<FoundFile> files;
    std::size_t dir_entries = 0;
    bool truncated = false;  // a limit stopped the walk
};

inline bool looks_like_shared_object(const std::string& name) {
    for (std::size_t p = name.find(".so"); p != std::string::npos; p = name.find(".so", p + 1)) {
        const std::size_t after = p + 3;
        if (after == name.size() || name[after] == '.') return true;
    }
    return false;
}

class Walker {
  public:
    explicit Walker(const WalkLimits& limits) : m_limits(limits) {}

    // Adds `path` (a file or a directory). False when it does not exist.
    bool add_root(const std::string& path) {
        struct stat st;
        if (::stat(path.c_str(), &st) != 0) return false;
        if (S_ISREG(st.st_mode)) {
            add_file(path, st);
            return true;
        }
        if (!S_ISDIR(st.st_mode)) return true;
        std::vector<std::pair<std::string, int>> stack{{path, 0}};
        while (!stack.empty() && !m_result.truncated) {
            auto [dir, depth] = stack.back();
            stack.pop_back();
            std::vector<std::string> names = list(dir);
            // Reverse order on the stack keeps the visit sorted.
            std::vector<std::string> subdirs;
            for (const auto& name : names) {
                const std::string child = dir + (dir.back() == '/' ? "" : "/") + name;
                struct stat lst;
                if (::lstat(child.c_str(), &lst) != 0) continue;
                if (S_ISDIR(lst.st_mode)) {
                    if (depth + 1 <= m_limits.max_depth)
                        subdirs.push_back(child);
                    else
                        m_result.truncated = true;
                    continue;
                }
                if (!looks_like_shared_object(name)) continue;
                struct stat fst;  // symlinks to files count, as the loader follows them
                if (::stat(child.c_str(), &fst) == 0 && S_ISREG(fst.st_mode)) add_file(child, fst);
                if (m_result.truncated) break;
            }
            for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it)
                stack.emplace_back(*it, depth + 1);
        }
        return true;
    }

    WalkResult take() { return std::move(m_result); }

  private:
    std::vector<std::string> list(const std::string& dir) {
        std::vector<std::string> names;
        DIR* d = ::opendir(dir.c_str());
        if (!d) return names;
        while (struct dirent* e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (name == "." || name == "..") continue;
            if (++m_result.dir_entries > m_limits.max_dir_entries) {
                m_result.truncated = true;
                break;
            }
            names.push_back(name);
        }
        ::closedir(d);
        std::sort(names.begin(), names.end());
        return names;
    }

    void add_file(const std::string& path, const struct stat& st) {
        const auto key = std::make_pair(static_cast<std::uint64_t>(st.st_dev),
                                        static_cast<std::uint64_t>(st.st_ino));
        auto it = m_seen.find(key);
        if (it != m_seen.end()) {
            auto& aliases = m_result.files[it->second].aliases;
            if (aliases.size() < 16 && m_result.files[it->second].path != path &&
                std::find(aliases.begin(), aliases.end(), path) == aliases.end())
                aliases.push_back(path);
            return;
        }
        if (m_result.files.size() >= m_limits.max_files) {
            m_result.truncated = true;
            return;
        }
        m_seen.emplace(key, m_result.files.size());
        m_result.files.push_back(FoundFile{path, {}});
    }

    WalkLimits m_limits;
    WalkResult m_result;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> m_seen;
};

}  // namespace kernelsprobe
