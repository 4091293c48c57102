#include "engine/layer_unpack.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <unordered_set>
#include <vector>

#include "core/build/image_source.hpp"
#include "engine/interrupt.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace {

struct UnpackFd {
    int fd = -1;
    UnpackFd() = default;
    explicit UnpackFd(int f) : fd(f) {}
    UnpackFd(UnpackFd&& o) noexcept : fd(o.fd) { o.fd = -1; }
    UnpackFd& operator=(UnpackFd&& o) noexcept {
        if (this != &o) {
            reset();
            fd = o.fd;
            o.fd = -1;
        }
        return *this;
    }
    ~UnpackFd() { reset(); }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
    bool ok() const { return fd >= 0; }
};

Error io_error(const std::string& what) {
    return Error{ErrorKind::Io, what + ": " + std::strerror(errno)};
}

Error refused(const std::string& what) { return Error{ErrorKind::Config, what}; }

// The blob read through a hash: every byte libarchive asks for passes Sha256Stream.
struct HashedReader {
    int fd = -1;
    Sha256Stream hash;
    std::vector<char> buffer = std::vector<char>(std::size_t{1} << 20);
    static la_ssize_t read(struct archive*, void* self, const void** out) {
        auto* r = static_cast<HashedReader*>(self);
        ssize_t n;
        do n = ::read(r->fd, r->buffer.data(), r->buffer.size());
        while (n < 0 && errno == EINTR);
        if (n > 0) r->hash.update(std::string_view(r->buffer.data(), static_cast<std::size_t>(n)));
        *out = r->buffer.data();
        return n;
    }
};

// Removes `name` in `dirfd`, a directory with everything below it.
bool remove_at(int dirfd, const std::string& name) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
    if (!S_ISDIR(st.st_mode)) return ::unlinkat(dirfd, name.c_str(), 0) == 0;
    UnpackFd sub(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub.ok()) return false;
    std::unique_ptr<DIR, int (*)(DIR*)> d(::fdopendir(::dup(sub.fd)), ::closedir);
    if (!d) return false;
    std::vector<std::string> names;
    while (auto* e = ::readdir(d.get())) {
        std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(n);
    }
    for (const auto& n : names)
        if (!remove_at(sub.fd, n)) return false;
    return ::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) == 0;
}

class RootWriter {
  public:
    explicit RootWriter(int root) : m_root(root) {}

    // The directory that holds `rel` ("a/b/c" -> a/b), made when missing (mode 0755);
    // Error when a component is a symbolic link or not a directory.
    Result<UnpackFd> parent_of(const std::string& rel, std::string& base) const {
        auto parts = split(rel, '/');
        base = parts.back();
        parts.pop_back();
        UnpackFd cur(::dup(m_root));
        std::string walked;
        for (const auto& part : parts) {
            walked += (walked.empty() ? "" : "/") + part;
            int next =
                ::openat(cur.fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0 && errno == ENOENT) {
                if (::mkdirat(cur.fd, part.c_str(), 0755) != 0 && errno != EEXIST)
                    return io_error("making " + quote_value(walked) + " in the root");
                next =
                    ::openat(cur.fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            }
            if (next < 0) {
                if (errno == ELOOP || errno == ENOTDIR)
                    return refused("layer member " + quote_value(rel) + " lies below " +
                                   quote_value(walked) +
                                   ", which is a symbolic link or not a directory in the image "
                                   "(refused: writing through it could leave the root)");
                return io_error("opening " + quote_value(walked) + " in the root");
            }
            cur = UnpackFd(next);
        }
        return cur;
    }

  private:
    int m_root;
};

// As root, each entry gets the owner the layer records (what the image's USER meets in the
// sandbox, engine/sandbox); otherwise everything belongs to the unpacking user.
void set_owner(int dirfd, const std::string& name, const archive_entry* e, bool as_root) {
    if (!as_root) return;
    (void)::fchownat(
        dirfd, name.c_str(), static_cast<uid_t>(archive_entry_uid(const_cast<archive_entry*>(e))),
        static_cast<gid_t>(archive_entry_gid(const_cast<archive_entry*>(e))), AT_SYMLINK_NOFOLLOW);
}

struct DirTimes {
    std::string path;
    mode_t mode;
    struct timespec mtime;
};

void set_times(int dirfd, const std::string& name, const archive_entry* e, int flags) {
    struct timespec ts[2];
    ts[0].tv_sec = archive_entry_mtime(const_cast<archive_entry*>(e));
    ts[0].tv_nsec = archive_entry_mtime_nsec(const_cast<archive_entry*>(e));
    ts[1] = ts[0];
    (void)::utimensat(dirfd, name.c_str(), ts, flags);
}

}  // namespace

Result<UnpackStats> unpack_layer(const std::filesystem::path& blob,
                                 const std::filesystem::path& root,
                                 const std::string& expected_digest, std::uint64_t max_bytes) {
    UnpackStats stats;
    UnpackFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!root_fd.ok()) return io_error("opening " + root.string());
    HashedReader reader;
    UnpackFd blob_fd(::open(blob.c_str(), O_RDONLY | O_CLOEXEC));
    if (!blob_fd.ok()) return io_error("opening layer " + blob.string());
    reader.fd = blob_fd.fd;
    std::unique_ptr<struct archive, int (*)(struct archive*)> a(archive_read_new(),
                                                                archive_read_free);
    archive_read_support_filter_gzip(a.get());
    archive_read_support_filter_zstd(a.get());
    archive_read_support_filter_none(a.get());
    archive_read_support_format_tar(a.get());
    archive_read_support_format_empty(a.get());
    // A blob that cannot be read is first checked against its digest: a corrupt or substituted
    // blob is named as that, not as the decompressor's complaint.
    auto unreadable = [&](const std::string& what) -> Error {
        for (const void* p = nullptr; HashedReader::read(nullptr, &reader, &p) > 0;) {
        }
        std::string got = "sha256:" + reader.hash.hex();
        if (!expected_digest.empty() && got != expected_digest)
            return Error{ErrorKind::Config, "layer " + blob.filename().string() + " hashes to " +
                                                got + ", not " + expected_digest +
                                                " (a corrupt or substituted blob)"};
        return Error{
            ErrorKind::Config,
            what + ": " + (archive_error_string(a.get()) ? archive_error_string(a.get()) : "?")};
    };
    if (archive_read_open(a.get(), &reader, nullptr, &HashedReader::read, nullptr) != ARCHIVE_OK)
        return unreadable("layer " + blob.filename().string() + " is not a tar");
    RootWriter writer(root_fd.fd);
    std::unordered_set<std::string> written;  // paths this layer wrote (opaque markers keep them)
    std::vector<DirTimes> dirs;
    std::vector<char> buf(std::size_t{1} << 20);
    const mode_t keep_bits = 07777 & ~(S_ISUID | S_ISGID);
    const bool as_root = ::geteuid() == 0;
    archive_entry* e = nullptr;
    auto where = [&](const std::string& rel) {
        return "layer " + blob.filename().string().substr(0, 12) + ": " + quote_value(rel);
    };
    while (true) {
        if (interrupted()) return Error{ErrorKind::Environment, "interrupted while unpacking"};
        int rc = archive_read_next_header(a.get(), &e);
        if (rc == ARCHIVE_EOF) break;
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
            return unreadable("layer " + blob.filename().string() + " cannot be read");
        ++stats.entries;
        LayerEntry le =
            classify_layer_entry(archive_entry_pathname(e) ? archive_entry_pathname(e) : "");
        if (le.kind == LayerEntry::Kind::Refused) return refused(le.reason);
        if (le.path.empty()) continue;  // the root itself
        std::string base;
        auto parent = writer.parent_of(le.path, base);
        if (!parent) return parent.error();
        int pfd = parent->fd;
        if (le.kind == LayerEntry::Kind::Whiteout) {
            if (!remove_at(pfd, base)) return io_error("removing " + where(le.path));
            continue;
        }
        if (le.kind == LayerEntry::Kind::Opaque) {
            // le.path is the directory; `base` its last component, `pfd` its parent.
            UnpackFd dir(
                ::openat(pfd, base.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!dir.ok()) continue;  // nothing below from lower layers
            std::unique_ptr<DIR, int (*)(DIR*)> d(::fdopendir(::dup(dir.fd)), ::closedir);
            std::vector<std::string> names;
            while (d) {
                auto* ent = ::readdir(d.get());
                if (!ent) break;
                std::string n = ent->d_name;
                if (n != "." && n != ".." && !written.count(le.path + "/" + n)) names.push_back(n);
            }
            for (const auto& n : names)
                if (!remove_at(dir.fd, n)) return io_error("emptying " + where(le.path));
            continue;
        }
        written.insert(le.path);
        const mode_t mode = archive_entry_mode(e);
        const mode_t perm = mode & keep_bits;
        const char* hardlink = archive_entry_hardlink(e);
        struct stat existing {};
        bool exists = ::fstatat(pfd, base.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0;
        if (hardlink) {
            LayerEntry target = classify_layer_entry(hardlink);
            if (target.kind != LayerEntry::Kind::Normal || target.path.empty())
                return refused(where(le.path) + " is a hard link to " + quote_value(hardlink) +
                               ", which is not a file of the image");
            std::string tbase;
            auto tparent = writer.parent_of(target.path, tbase);
            if (!tparent) return tparent.error();
            struct stat ts {};
            if (::fstatat(tparent->fd, tbase.c_str(), &ts, AT_SYMLINK_NOFOLLOW) != 0 ||
                !S_ISREG(ts.st_mode))
                return refused(where(le.path) + " is a hard link to " + quote_value(hardlink) +
                               ", which is not a regular file already in the image");
            if (exists && !remove_at(pfd, base)) return io_error("replacing " + where(le.path));
            if (::linkat(tparent->fd, tbase.c_str(), pfd, base.c_str(), 0) != 0)
                return io_error("linking " + where(le.path));
            continue;
        }
        if (S_ISDIR(mode)) {
            if (exists && !S_ISDIR(existing.st_mode) && !remove_at(pfd, base))
                return io_error("replacing " + where(le.path));
            if ((!exists || !S_ISDIR(existing.st_mode)) &&
                ::mkdirat(pfd, base.c_str(), 0700) != 0 && errno != EEXIST)
                return io_error("making " + where(le.path));
            set_owner(pfd, base, e, as_root);
            struct timespec mt {
                archive_entry_mtime(e), archive_entry_mtime_nsec(e)
            };
            // Modes and times after the layer: a read-only directory still takes its children.
            dirs.push_back({le.path, as_root ? perm : (perm | S_IRWXU), mt});
            continue;
        }
        if (exists && !remove_at(pfd, base)) return io_error("replacing " + where(le.path));
        if (S_ISLNK(mode)) {
            const char* target = archive_entry_symlink(e);
            std::string t = target ? target : "";
            if (t.empty()) return refused(where(le.path) + " is a symbolic link with no target");
            if (::symlinkat(t.c_str(), pfd, base.c_str()) != 0)
                return io_error("making the link " + where(le.path));
            set_owner(pfd, base, e, as_root);
            set_times(pfd, base, e, AT_SYMLINK_NOFOLLOW);
            continue;
        }
        if (S_ISFIFO(mode)) {
            if (::mkfifoat(pfd, base.c_str(), perm) != 0)
                return io_error("making " + where(le.path));
            set_owner(pfd, base, e, as_root);
            continue;
        }
        if (!S_ISREG(mode)) {
            ++stats.skipped_devices;  // character and block devices: the sandbox has its own /dev
            continue;
        }
        UnpackFd out(::openat(pfd, base.c_str(),
                              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!out.ok()) return io_error("writing " + where(le.path));
        while (true) {
            la_ssize_t n = archive_read_data(a.get(), buf.data(), buf.size());
            if (n < 0) return unreadable(where(le.path) + " cannot be read");
            if (n == 0) break;
            stats.bytes += static_cast<std::uint64_t>(n);
            if (max_bytes && stats.bytes > max_bytes)
                return Error{ErrorKind::Environment, "the image's files pass the unpack limit of " +
                                                         std::to_string(max_bytes >> 20) +
                                                         " MiB (TORCHDOCK_SANDBOX_MAX_BYTES)"};
            for (la_ssize_t done = 0; done < n;) {
                ssize_t w = ::write(out.fd, buf.data() + done, static_cast<std::size_t>(n - done));
                if (w < 0 && errno == EINTR) continue;
                if (w < 0) return io_error("writing " + where(le.path));
                done += w;
            }
        }
        set_owner(pfd, base, e, as_root);  // before the mode: chown clears set-id bits
        (void)::fchmod(out.fd, perm);
        struct timespec ts[2] = {{archive_entry_mtime(e), archive_entry_mtime_nsec(e)},
                                 {archive_entry_mtime(e), archive_entry_mtime_nsec(e)}};
        (void)::futimens(out.fd, ts);
    }
    // Directories deepest first, so setting a parent's time is not undone by its children.
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
        std::string base;
        auto parent = writer.parent_of(it->path, base);
        if (!parent) continue;
        (void)::fchmodat(parent->fd, base.c_str(), it->mode, 0);
        struct timespec ts[2] = {it->mtime, it->mtime};
        (void)::utimensat(parent->fd, base.c_str(), ts, AT_SYMLINK_NOFOLLOW);
    }
    // Drain what libarchive did not need (a tar's trailing blocks) so the digest covers the blob.
    for (const void* p = nullptr; HashedReader::read(nullptr, &reader, &p) > 0;) {
    }
    stats.compressed_bytes = reader.hash.bytes();
    stats.digest = "sha256:" + reader.hash.hex();
    if (!expected_digest.empty() && stats.digest != expected_digest)
        return Error{ErrorKind::Config, "layer " + blob.filename().string() + " hashes to " +
                                            stats.digest + ", not " + expected_digest +
                                            " (a corrupt or substituted blob)"};
    return stats;
}

Status make_directories_in(const std::filesystem::path& root, const std::string& rel) {
    UnpackFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!root_fd.ok()) return io_error("opening " + root.string());
    std::string clean;
    for (const auto& part : split(rel, '/'))
        if (!part.empty() && part != ".") clean += (clean.empty() ? "" : "/") + part;
    if (clean.empty()) return ok_status();
    std::string base;
    auto parent = RootWriter(root_fd.fd).parent_of(clean + "/.", base);
    if (!parent) return parent.error();
    return ok_status();
}

namespace {

Status link_dir(int from, int to, const std::string& shown) {
    std::unique_ptr<DIR, int (*)(DIR*)> d(::fdopendir(::dup(from)), ::closedir);
    if (!d) return io_error("reading " + shown);
    while (auto* ent = ::readdir(d.get())) {
        std::string n = ent->d_name;
        if (n == "." || n == "..") continue;
        struct stat st {};
        if (::fstatat(from, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return io_error("reading " + shown + "/" + n);
        struct timespec ts[2] = {st.st_atim, st.st_mtim};
        if (S_ISDIR(st.st_mode)) {
            if (::mkdirat(to, n.c_str(), 0700) != 0) return io_error("copying " + shown + "/" + n);
            UnpackFd sf(::openat(from, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            UnpackFd tf(::openat(to, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!sf.ok() || !tf.ok()) return io_error("copying " + shown + "/" + n);
            if (auto st2 = link_dir(sf.fd, tf.fd, shown + "/" + n); !st2) return st2;
            (void)::fchown(tf.fd, st.st_uid, st.st_gid);
            (void)::fchmod(tf.fd, st.st_mode & 07777);
            (void)::futimens(tf.fd, ts);
        } else if (S_ISLNK(st.st_mode)) {
            std::vector<char> target(static_cast<std::size_t>(st.st_size) + 1);
            ssize_t len = ::readlinkat(from, n.c_str(), target.data(), target.size());
            if (len < 0) return io_error("copying " + shown + "/" + n);
            std::string t(target.data(), static_cast<std::size_t>(len));
            if (::symlinkat(t.c_str(), to, n.c_str()) != 0)
                return io_error("copying " + shown + "/" + n);
            (void)::utimensat(to, n.c_str(), ts, AT_SYMLINK_NOFOLLOW);
        } else {
            if (::linkat(from, n.c_str(), to, n.c_str(), 0) != 0)
                return io_error("linking " + shown + "/" + n);
        }
    }
    return ok_status();
}

}  // namespace

Status link_tree(const std::filesystem::path& from, const std::filesystem::path& to) {
    UnpackFd f(::open(from.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!f.ok()) return io_error("opening " + from.string());
    if (::mkdir(to.c_str(), 0700) != 0) return io_error("making " + to.string());
    UnpackFd t(::open(to.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!t.ok()) return io_error("opening " + to.string());
    if (auto st = link_dir(f.fd, t.fd, from.string()); !st) return st;
    struct stat s {};
    if (::fstat(f.fd, &s) == 0) {
        (void)::fchown(t.fd, s.st_uid, s.st_gid);
        (void)::fchmod(t.fd, s.st_mode & 07777);
        struct timespec ts[2] = {s.st_atim, s.st_mtim};
        (void)::futimens(t.fd, ts);
    }
    return ok_status();
}

}  // namespace td::engine
