#pragma once
// What probe-libs reports about torch's site directories beyond resolution: the wheel a
// preloaded file came in, and the directories the image's USER cannot read.
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "paths.hpp"
#include "probe.hpp"

namespace libsprobe {

// "nvidia-nvjitlink-cu12 12.1.105" for ROOT/nvidia/NAME/lib/FILE when ROOT holds that
// wheel's dist-info (pip install --target, a venv): what a file that cannot report its own
// version was installed as. "" otherwise.
inline std::string wheel_of_file(const std::string& path) {
    auto lib = path.rfind("/lib/");
    if (lib == std::string::npos) return {};
    std::string pkg_dir = path.substr(0, lib);  // ROOT/nvidia/NAME
    auto slash = pkg_dir.rfind('/');
    if (slash == std::string::npos) return {};
    std::string name = pkg_dir.substr(slash + 1), nvidia = pkg_dir.substr(0, slash);
    if (base_name(nvidia) != "nvidia") return {};
    std::string root = nvidia.substr(0, nvidia.rfind('/'));
    glob_t g;
    std::string pattern = join(root, "nvidia_" + name + "_cu*-*.dist-info");
    std::string out;
    if (::glob(pattern.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0) {
        std::string dist = base_name(g.gl_pathv[0]);
        dist = dist.substr(0, dist.size() - std::string(".dist-info").size());
        auto dash = dist.rfind('-');
        std::string wheel = dist.substr(0, dash), version = dist.substr(dash + 1);
        for (auto& c : wheel)
            if (c == '_') c = '-';
        out = wheel + " " + version;
    }
    ::globfree(&g);
    return out;
}

// Directories of the site directories' torch and nvidia-* wheels that this user (the
// image's USER) cannot list or enter: the libraries in them exist but cannot be loaded, and
// the fix is their mode, not another install.
inline probe::Json unreadable_dirs(const std::vector<std::string>& sites, size_t& count) {
    probe::Json out = probe::Json::array();
    count = 0;
    auto consider = [&](const std::string& dir) {
        struct stat st;
        if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
        if (::access(dir.c_str(), R_OK | X_OK) == 0) return;
        ++count;
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        out.push(probe::Json::object({{"path", dir},
                                      {"mode", std::string(mode)},
                                      {"uid", static_cast<long long>(st.st_uid)},
                                      {"gid", static_cast<long long>(st.st_gid)}}));
    };
    for (const auto& site : sites) {
        for (const char* sub : {"nvidia", "torch", "torch/lib", "triton"})
            consider(join(site, sub));
        for (const auto& d : glob_dirs(join(site, "nvidia/*"))) consider(d);
        for (const auto& d : glob_dirs(join(site, "nvidia/*/lib"))) consider(d);
    }
    return out;
}

}  // namespace libsprobe
