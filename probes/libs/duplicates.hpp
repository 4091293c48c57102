#pragma once
// Copies of a CUDA library family found where the loader, the wheels and the usual CUDA
// directories keep them, each real file once, with the version it reports by content.
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "content_version.hpp"
#include "families.hpp"
#include "paths.hpp"
#include "probe.hpp"

namespace libsprobe {

struct Copy {
    std::string real;
    std::set<std::string> seen;
};

struct Duplicates {
    // family -> (dev, ino) -> copy
    std::map<std::string, std::map<std::pair<dev_t, ino_t>, Copy>> families;
    std::set<std::string> places;

    void consider(const std::string& path) {
        std::string fam = family_of(base_name(path));
        if (fam.empty()) return;
        struct stat st;
        if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
        Copy& c = families[fam][{st.st_dev, st.st_ino}];
        if (c.real.empty()) c.real = real_path(path);
        c.seen.insert(path);
    }
    void scan_dir(const std::string& dir) {
        if (dir.empty() || !places.insert(dir).second) return;
        for (const auto& n : list_dir(dir)) consider(join(dir, n));
    }
    probe::Json json() const {
        probe::Json out = probe::Json::array();
        for (const auto& [fam, copies] : families) {
            if (copies.size() < 2) continue;
            std::vector<const Copy*> sorted;
            for (const auto& kv : copies) sorted.push_back(&kv.second);
            std::sort(sorted.begin(), sorted.end(),
                      [](const Copy* a, const Copy* b) { return a->real < b->real; });
            probe::Json list = probe::Json::array();
            for (const Copy* c : sorted) {
                std::string version = version_of(base_name(c->real));
                for (const auto& s : c->seen) {
                    std::string v = version_of(base_name(s));
                    if (v.size() > version.size()) version = v;
                }
                std::vector<std::string> seen(c->seen.begin(), c->seen.end());
                // The name can say less than the file (the wheels ship only libcudnn.so.9):
                // ask the file itself.
                probe::libs::ContentVersion content = probe::libs::content_version(fam, c->real);
                probe::Json copy = probe::Json::object({{"path", c->real},
                                                        {"version", version},
                                                        {"seen_as", probe::Json::array_of(seen)}});
                copy.set("content_version",
                         content.version.empty() ? probe::Json() : probe::Json(content.version));
                if (!content.error.empty()) copy.set("content_error", content.error);
                list.push(copy);
            }
            out.push(probe::Json::object({{"name", fam}, {"copies", list}}));
        }
        return out;
    }
};

}  // namespace libsprobe
