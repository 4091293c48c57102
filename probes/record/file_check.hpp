#pragma once
// Checking one installed file against its RECORD row, in the order debsums would: is it
// there (lstat), is it a regular file (never followed when it is a symlink), can this user
// open it (and if not, which directory or mode stops it), has it the recorded size, and,
// once every size is known, the sha256 of its content (hash_files: largest first, across a
// pool of threads, each file read sequentially with pread into a 1 MiB buffer).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "platform_facts.hpp"
#include "sha256.hpp"

namespace record {

// One file to check (a RECORD row with a sha256 hash).
struct FileEntry {
    std::size_t dist = 0;     // index of its distribution
    std::size_t line = 0;     // its RECORD line (problems are listed in RECORD order)
    std::string rel;          // the path as in RECORD
    std::string file;         // absolute path
    std::string digest;       // expected: urlsafe base64 without padding
    long long expected_size;  // -1 when RECORD gives none
    long long size = -1;      // what lstat found
};

// Who owns a file or directory and with which mode (for "unreadable").
struct Ownership {
    std::string path;
    unsigned mode = 0;
    long long uid = -1, gid = -1;
};

struct Problem {
    std::size_t dist = 0, line = 0;
    std::string rel, file, kind, detail;
    long long expected_size = -1, size = -1;  // -1: not known (null in JSON)
    bool has_file_owner = false, has_parent = false;
    Ownership file_owner, parent;  // unreadable only: the file, the directory that blocks
};

inline std::string octal_mode(unsigned mode) {
    char b[8];
    std::snprintf(b, sizeof b, "%04o", mode & 07777);
    return b;
}

inline std::string probe_identity() {
    return "probe ran as uid " + std::to_string(::geteuid()) + " gid " +
           std::to_string(::getegid());
}

// Fills in why `p->file` cannot be opened: the first ancestor directory this process may
// not search, else the file's own mode and owner.
inline void explain_unreadable(Problem* p) {
    std::string dir;
    for (std::size_t slash = p->file.find('/', 1); slash != std::string::npos;
         slash = p->file.find('/', slash + 1)) {
        dir = p->file.substr(0, slash);
        struct stat st;
        if (::stat(dir.c_str(), &st) == 0 && ::access(dir.c_str(), X_OK) != 0) {
            p->has_parent = true;
            p->parent = {dir, static_cast<unsigned>(st.st_mode), st.st_uid, st.st_gid};
            p->detail = "directory " + dir + " is mode " + octal_mode(st.st_mode) +
                        " owned by uid " + std::to_string(st.st_uid) + " gid " +
                        std::to_string(st.st_gid) + ", " + probe_identity();
            break;
        }
    }
    struct stat st;
    if (::lstat(p->file.c_str(), &st) == 0) {
        p->has_file_owner = true;
        p->file_owner = {p->file, static_cast<unsigned>(st.st_mode), st.st_uid, st.st_gid};
        if (!p->has_parent)
            p->detail = "file is mode " + octal_mode(st.st_mode) + " owned by uid " +
                        std::to_string(st.st_uid) + " gid " + std::to_string(st.st_gid) + ", " +
                        probe_identity();
    }
    if (p->detail.empty()) p->detail = std::string("permission denied, ") + probe_identity();
}

// Everything but the hash. True when the file should be hashed; else `*problem` says why not.
inline bool check_metadata(FileEntry& f, Problem* problem) {
    problem->dist = f.dist;
    problem->line = f.line;
    problem->rel = f.rel;
    problem->file = f.file;
    problem->expected_size = f.expected_size;
    struct stat st;
    if (::lstat(f.file.c_str(), &st) != 0) {
        const int err = errno;
        if (err == EACCES) {
            problem->kind = "unreadable";
            explain_unreadable(problem);
        } else {
            problem->kind = "missing";
            problem->detail = std::strerror(err);
        }
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        problem->kind = "not_regular";
        problem->detail = S_ISLNK(st.st_mode)   ? "a symlink"
                          : S_ISDIR(st.st_mode) ? "a directory"
                                                : "not a regular file";
        return false;
    }
    f.size = problem->size = st.st_size;
    const int fd = ::open(f.file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        const int err = errno;
        problem->kind = err == ELOOP ? "not_regular" : "unreadable";
        if (err == EACCES || err == EPERM)
            explain_unreadable(problem);
        else
            problem->detail = std::strerror(err);
        return false;
    }
    ::close(fd);
    if (f.expected_size >= 0 && st.st_size != f.expected_size) {
        problem->kind = "size";
        problem->detail =
            st.st_size == 0 ? "the file is empty" : "size " + std::to_string(st.st_size);
        return false;
    }
    return true;
}

struct HashOutcome {
    std::string digest;  // urlsafe base64 of the sha256; empty on a read error
    std::string error;
    long long bytes = 0;  // bytes read
    std::string elf;      // platform_facts elf_identity of the first bytes; "" when not ELF
};

// sha256 of one file, read sequentially through one buffer.
inline HashOutcome hash_file(const std::string& path, Sha256BlockFn blocks,
                             std::vector<unsigned char>& buffer) {
    HashOutcome out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        out.error = std::strerror(errno);
        return out;
    }
    Sha256 h(blocks);
    off_t offset = 0;
    while (true) {
        const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), offset);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            out.error = std::strerror(errno);
            ::close(fd);
            return out;
        }
        if (n == 0) break;
        if (offset == 0) out.elf = elf_identity(buffer.data(), static_cast<std::size_t>(n));
        h.update(buffer.data(), static_cast<std::size_t>(n));
        offset += n;
    }
    ::close(fd);
    unsigned char digest[32];
    h.finish(digest);
    out.digest = urlsafe_b64_nopad(digest, 32);
    out.bytes = offset;
    return out;
}

// Hashes `files` (already size-checked), largest first, on `threads` threads; one outcome
// per file, in the order of `files`.
inline std::vector<HashOutcome> hash_files(const std::vector<FileEntry>& files, unsigned threads,
                                           Sha256BlockFn blocks) {
    std::vector<std::size_t> order(files.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return files[a].size > files[b].size; });
    std::vector<HashOutcome> outcomes(files.size());
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        std::vector<unsigned char> buffer(1u << 20);
        for (std::size_t k; (k = next.fetch_add(1)) < order.size();)
            outcomes[order[k]] = hash_file(files[order[k]].file, blocks, buffer);
    };
    std::vector<std::thread> pool;
    const unsigned n = std::max(1u, std::min<unsigned>(threads, files.size()));
    for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    return outcomes;
}

}  // namespace record
