#pragma once
// What an installed distribution says about the platform it was built for: the `Tag:` lines
// of its dist-info WHEEL file (PEP 427: `cp311-cp311-manylinux_2_28_aarch64`), and the ELF
// machine and class of every file it installed (read from the first bytes the hash pass
// reads anyway), counted per machine with the first file of each. torchdock compares both
// with the image's platform: an x86_64 wheel in an arm64 image is named by these.
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "dist_info.hpp"
#include "file_identity.hpp"

namespace record {

// The `Tag:` values of `dist_info_dir`/WHEEL, in file order; empty when there is no WHEEL
// (a distribution installed from an sdist by an old pip, a conda package).
inline std::vector<std::string> wheel_tags(const std::string& dist_info_dir) {
    std::vector<std::string> tags;
    std::string text, error;
    if (!read_small_file(dist_info_dir + "/WHEEL", 64u << 10, &text, &error)) return tags;
    std::size_t start = 0;
    while (start < text.size() && tags.size() < 64) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(start, nl - start);
        start = nl + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.rfind("Tag:", 0) != 0) continue;
        std::string v = line.substr(4);
        while (!v.empty() && (v[0] == ' ' || v[0] == '\t')) v.erase(0, 1);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.pop_back();
        if (!v.empty()) tags.push_back(v);
    }
    return tags;
}

using probe::elf_identity;  // probes/common/file_identity.hpp

// Per distribution: how many of its files are ELF objects of each identity, and the first.
struct ElfCensus {
    struct Count {
        long long count = 0;
        std::size_t first_line = 0;
        std::string first;  // the path as in RECORD of the earliest such file
    };
    std::map<std::string, Count> by_identity;
    void add(const std::string& identity, std::size_t line, const std::string& rel) {
        if (identity.empty()) return;
        Count& c = by_identity[identity];
        ++c.count;
        if (c.first.empty() || line < c.first_line) {
            c.first_line = line;
            c.first = rel;
        }
    }
};

}  // namespace record
