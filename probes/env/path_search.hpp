#pragma once
// Which files a name means for the image's processes: a bare name resolved over $PATH the
// way execvp(3) does it, and the Python interpreters present in the usual places.
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

namespace envprobe {

// Docker's PATH for a container whose image sets none (and glibc's execvp has its own, so
// the engine's is the one the image's processes see).
inline constexpr const char* kDockerDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

inline std::string real_path(const std::string& p) {
    char buf[PATH_MAX];
    return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

// A regular file (after symlinks) that this process may execute.
inline bool is_executable_file(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// $PATH's elements, in order, empty ones kept ("" is the working directory).
inline std::vector<std::string> path_elements(const char* path_env) {
    const std::string path = path_env ? path_env : kDockerDefaultPath;
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t colon = path.find(':', start);
        out.push_back(path.substr(start, colon == std::string::npos ? colon : colon - start));
        if (colon == std::string::npos) return out;
        start = colon + 1;
    }
}

// A file in a PATH element: "./name" for the empty element, as `command -v` writes it.
inline std::string in_dir(const std::string& dir, const std::string& name) {
    if (dir.empty()) return "./" + name;
    return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// What execvp(name) would run: a name with a '/' is itself; a bare name is the first
// executable regular file named so in a PATH element. "" when there is none.
inline std::string resolve_command(const std::string& name, const char* path_env) {
    if (name.empty()) return {};
    if (name.find('/') != std::string::npos) return name;
    for (const auto& dir : path_elements(path_env)) {
        const std::string candidate = in_dir(dir, name);
        if (is_executable_file(candidate)) return candidate;
    }
    return {};
}

// python, python3, python3.N (N digits): the names an interpreter goes by.
inline bool is_python_name(const std::string& n) {
    if (n == "python" || n == "python3") return true;
    if (n.size() <= 8 || n.compare(0, 8, "python3.") != 0) return false;
    return std::all_of(n.begin() + 8, n.end(), [](char c) { return c >= '0' && c <= '9'; });
}

struct Interpreter {
    std::string path, realpath, via;
};

// The venv a bin directory belongs to (its parent holds pyvenv.cfg), or "".
inline std::string venv_root(const std::string& bin_dir) {
    std::string parent = bin_dir.substr(0, bin_dir.find_last_of('/'));
    struct stat st;
    if (parent.empty() || ::stat((parent + "/pyvenv.cfg").c_str(), &st) != 0) return {};
    return parent;
}

// Collects interpreters, each real file once per environment (the first path that reaches it), at
// most kMax.
class InterpreterScan {
  public:
    static constexpr std::size_t kMax = 64;

    void scan_dir(const std::string& dir, const char* via) {
        DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
        if (!d) return;
        std::vector<std::string> names;
        while (struct dirent* e = ::readdir(d))
            if (is_python_name(e->d_name)) names.push_back(e->d_name);
        ::closedir(d);
        std::sort(names.begin(), names.end());
        for (const auto& n : names) {
            if (m_found.size() >= kMax) {
                m_truncated = true;
                return;
            }
            const std::string path = in_dir(dir, n);
            if (!is_executable_file(path)) continue;
            const std::string real = real_path(path);
            // A venv's python is a link to its base interpreter: the same file, another
            // environment. Each (file, environment) counts once.
            if (real.empty() || !m_seen.insert(real + "\n" + venv_root(dir)).second) continue;
            m_found.push_back({path, real, via});
        }
    }
    // Every directory matching "PREFIX/*/SUFFIX" (one level, entries sorted).
    void scan_glob(const std::string& prefix, const std::string& suffix, const char* via) {
        for (const auto& sub : subdirectories(prefix)) scan_dir(prefix + "/" + sub + suffix, via);
    }
    static std::vector<std::string> subdirectories(const std::string& dir) {
        std::vector<std::string> out;
        DIR* d = ::opendir(dir.c_str());
        if (!d) return out;
        while (struct dirent* e = ::readdir(d)) {
            const std::string n = e->d_name;
            if (n != "." && n != "..") out.push_back(n);
        }
        ::closedir(d);
        std::sort(out.begin(), out.end());
        return out;
    }
    const std::vector<Interpreter>& found() const { return m_found; }
    bool truncated() const { return m_truncated; }

  private:
    std::vector<Interpreter> m_found;
    std::set<std::string> m_seen;
    bool m_truncated = false;
};

// Interpreters in PATH, $VIRTUAL_ENV/bin, $CONDA_PREFIX/bin, the usual fixed places, the
// working directory's .venv and the venvs Poetry and pipenv keep outside the project.
inline InterpreterScan find_interpreters(const char* path_env) {
    InterpreterScan scan;
    for (const auto& dir : path_elements(path_env)) scan.scan_dir(dir, "PATH");
    if (const char* v = std::getenv("VIRTUAL_ENV"); v && *v)
        scan.scan_dir(std::string(v) + "/bin", "VIRTUAL_ENV");
    if (const char* c = std::getenv("CONDA_PREFIX"); c && *c)
        scan.scan_dir(std::string(c) + "/bin", "CONDA_PREFIX");
    scan.scan_glob("/opt", "/bin", "scan");
    for (const auto& sub : InterpreterScan::subdirectories("/opt"))
        scan.scan_glob("/opt/" + sub + "/envs", "/bin", "scan");
    scan.scan_glob("/opt/conda/envs", "/bin", "scan");
    for (const char* dir : {"/usr/local/bin", "/usr/bin"}) scan.scan_dir(dir, "scan");
    if (const char* home = std::getenv("HOME"); home && *home)
        scan.scan_dir(std::string(home) + "/.local/bin", "scan");
    for (const char* dir :
         {"/root/.venv/bin", "/venv/bin", "/app/.venv/bin", "/workspace/.venv/bin"})
        scan.scan_dir(dir, "scan");
    // The working directory's project venv (uv, pdm), and the venvs environment managers keep
    // outside the project: Poetry's (virtualenvs under its cache directory), pipenv's.
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) && cwd[0] == '/' && cwd[1] != '\0')
        scan.scan_dir(std::string(cwd) + "/.venv/bin", "scan");
    auto env_dir = [](const char* name, const char* suffix) {
        const char* v = std::getenv(name);
        return v && *v == '/' ? std::string(v) + suffix : std::string();
    };
    const std::string home = env_dir("HOME", "");
    for (const std::string& dir :
         {env_dir("POETRY_VIRTUALENVS_PATH", ""), env_dir("POETRY_CACHE_DIR", "/virtualenvs"),
          env_dir("XDG_CACHE_HOME", "/pypoetry/virtualenvs"),
          home.empty() ? std::string() : home + "/.cache/pypoetry/virtualenvs",
          std::string("/root/.cache/pypoetry/virtualenvs"), env_dir("WORKON_HOME", ""),
          home.empty() ? std::string() : home + "/.local/share/virtualenvs"})
        if (!dir.empty()) scan.scan_glob(dir, "/bin", "scan");
    return scan;
}

}  // namespace envprobe
