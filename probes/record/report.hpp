#pragma once
// What probe-record says about its findings: one sentence per problem (for the reason and the
// human lines), sizes people can read, and the JSON of a problem (probes/record/README.md).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "file_check.hpp"
#include "probe.hpp"

namespace record {

// "torch/lib/libc10_cuda.so is 512 bytes, RECORD says 1024"
inline std::string describe(const Problem& p) {
    if (p.kind == "missing") return p.rel + " is missing";
    if (p.kind == "not_regular") return p.rel + " is " + p.detail + ", not a regular file";
    if (p.kind == "unreadable") return p.rel + " is unreadable: " + p.detail;
    if (p.kind == "size") {
        const std::string actual = p.size == 0 ? "empty" : std::to_string(p.size) + " bytes";
        return p.rel + " is " + actual + ", RECORD says " + std::to_string(p.expected_size);
    }
    if (p.kind == "hash") return p.rel + " does not match its RECORD sha256";
    return "RECORD " + p.detail;  // bad_record
}

// "1.7 GiB", "12.0 MiB", "3.5 KiB", "100 bytes"
inline std::string human_bytes(long long n) {
    const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (n < 1024) return std::to_string(n) + " bytes";
    double v = static_cast<double>(n);
    int u = -1;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        ++u;
    }
    char b[32];
    std::snprintf(b, sizeof b, "%.1f %s", v, units[u]);
    return b;
}

inline probe::Json size_json(long long n) { return n < 0 ? probe::Json() : probe::Json(n); }

inline probe::Json ownership_json(const Ownership& o) {
    return probe::Json::object(
        {{"path", o.path}, {"mode", octal_mode(o.mode)}, {"uid", o.uid}, {"gid", o.gid}});
}

inline probe::Json problem_json(const Problem& p) {
    probe::Json j = probe::Json::object({{"path", p.rel}});
    j.set("file", p.file.empty() ? probe::Json() : probe::Json(p.file));
    j.set("kind", p.kind);
    j.set("expected_size", size_json(p.expected_size));
    j.set("size", size_json(p.size));
    j.set("detail", p.detail);
    if (p.kind == "unreadable") {
        // What the report needs to say "directory .../nvidia is mode 0700 owned by uid 0,
        // probe ran as uid 1000".
        j.set("owner", p.has_file_owner ? ownership_json(p.file_owner) : probe::Json());
        j.set("blocked_by", p.has_parent ? ownership_json(p.parent) : probe::Json());
        j.set("probe_uid", static_cast<long long>(::geteuid()));
        j.set("probe_gid", static_cast<long long>(::getegid()));
    }
    return j;
}

}  // namespace record
