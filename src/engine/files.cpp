#include "engine/files.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>

#include "engine/interrupt.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;

namespace {

// `rel` below `root` as a person would write it ("a/b", not "./a/b").
fs::path below(const fs::path& root, const std::string& rel) {
    return root.empty() || root == "." ? fs::path(rel) : root / rel;
}

Error io_error(const std::string& what, const fs::path& path, const std::string& reason) {
    return Error{ErrorKind::Io, "cannot " + what + " " + path.string() + ": " + reason};
}

struct Fd {
    int fd = -1;
    explicit Fd(int f = -1) : fd(f) {}
    Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
    Fd& operator=(Fd&& o) noexcept {
        std::swap(fd, o.fd);
        return *this;
    }
    Fd(const Fd&) = delete;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

std::string kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "it is a directory";
    if (S_ISFIFO(mode)) return "it is a FIFO, not a regular file";
    if (S_ISSOCK(mode)) return "it is a socket, not a regular file";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "it is a device, not a regular file";
    if (S_ISLNK(mode)) return "it is a symlink, and torchdock does not follow symlinks there";
    return "it is not a regular file";
}

// What a file-system node is, for a refusal: "a character device (1:3)", "a symlink to X".
std::string node_kind(int dirfd, const std::string& name, const struct stat& st) {
    auto dev = [&] {
        return " (" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)) +
               ")";
    };
    if (S_ISCHR(st.st_mode)) return "a character device" + dev();
    if (S_ISBLK(st.st_mode)) return "a block device" + dev();
    if (S_ISFIFO(st.st_mode)) return "a FIFO";
    if (S_ISSOCK(st.st_mode)) return "a socket";
    if (S_ISDIR(st.st_mode)) return "a directory";
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = ::readlinkat(dirfd, name.c_str(), target, sizeof target - 1);
        if (n <= 0) return "a symlink";
        return "a symlink to " + std::string(target, static_cast<std::size_t>(n));
    }
    return "not a regular file";
}

// The one rule of every writer: a name is written only when it is missing or a regular file.
// Renaming a new file over a device, FIFO, socket or symlink would replace it for everyone who
// uses it (`--json=/dev/null` as root breaks the host's /dev/null); a directory cannot be
// replaced by a file. Returns the refusal, or nothing when `name` in `dirfd` is missing or a
// regular file (not followed when it is a symlink).
std::optional<Error> refuse_non_regular(int dirfd, const std::string& name, const fs::path& shown) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISREG(st.st_mode))
        return std::nullopt;
    return Error{ErrorKind::Io, "refusing to write " + shown.string() + ": it is " +
                                    node_kind(dirfd, name, st) +
                                    "; torchdock writes only regular files (a missing path is "
                                    "created, `-` is standard output)"};
}

// Reads an open regular file up to `max` bytes; refuses anything else without blocking.
Result<std::string> read_open_file(int fd, const fs::path& shown, std::size_t max) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return io_error("read", shown, std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return io_error("read", shown, kind_of(st.st_mode));
    if (static_cast<unsigned long long>(st.st_size) > max)
        return io_error("read", shown,
                        "it is " + std::to_string(st.st_size) + " bytes, over the limit of " +
                            std::to_string(max) + " bytes");
    // O_NONBLOCK only mattered for opening; a regular file reads normally.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    std::string out;
    char buf[65536];
    while (true) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return io_error("read", shown, std::strerror(errno));
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        // /proc and growing files report another size than they have.
        if (out.size() > max)
            return io_error("read", shown,
                            "it is over the limit of " + std::to_string(max) + " bytes");
    }
    return out;
}

// The components of a relative path; refuses absolute paths and "", ".", "..".
Result<std::vector<std::string>> components(const std::string& rel) {
    auto parts = split(rel, '/');
    for (const auto& p : parts)
        if (p.empty() || p == "." || p == "..")
            return Error{ErrorKind::Io, "refusing the path " + quote_value(rel) +
                                            ": only plain names below the tree are allowed"};
    return parts;
}

// Opens the directory `parts` below the open directory `base`, never through a symlink;
// creates missing ones when `create`.
Result<Fd> open_dir_below(Fd base, const fs::path& root, const std::vector<std::string>& parts,
                          bool create) {
    fs::path shown = root == "." ? fs::path() : root;
    for (const auto& part : parts) {
        shown /= part;
        if (create && ::mkdirat(base.fd, part.c_str(), 0755) != 0 && errno != EEXIST)
            return io_error("create directory", shown, std::strerror(errno));
        Fd next(::openat(base.fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (next.fd < 0) {
            struct stat st {};
            if (::fstatat(base.fd, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
                return io_error("use", shown, kind_of(st.st_mode));
            return io_error("open", shown, std::strerror(errno));
        }
        base = std::move(next);
    }
    return base;
}

Result<Fd> open_root(const fs::path& root, MissingDir missing) {
    fs::path dir = root.empty() ? fs::path(".") : root;
    if (missing == MissingDir::Create) {
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec) return io_error("create directory", dir, ec.message());
    }
    Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.fd < 0)
        return io_error("open directory", dir,
                        errno == ENOENT ? "it does not exist" : std::strerror(errno));
    return fd;
}

// The directory that holds `rel`, opened below `root`; `name` is set to rel's last part.
Result<Fd> parent_below(const fs::path& root, const std::string& rel, bool create,
                        MissingDir missing, std::string& name) {
    auto parts = components(rel);
    if (!parts) return parts.error();
    name = parts->back();
    parts->pop_back();
    auto base = open_root(root, missing);
    if (!base) return base.error();
    return open_dir_below(std::move(base.value()), root, parts.value(), create);
}

Status write_all(int fd, const std::string& text, const fs::path& shown) {
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return io_error("write", shown, std::strerror(errno));
        }
        done += static_cast<std::size_t>(n);
    }
    return ok_status();
}

std::string temp_name(const std::string& name) {
    static std::atomic<unsigned> counter{0};
    return "." + name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// Moves the finished temp file onto `name`, which must still be missing or a regular file: a
// missing name is taken with RENAME_NOREPLACE, so a node made there meanwhile is never
// replaced (it is judged again). A regular file is replaced by a plain rename; the window
// between that judgement and the rename is the one left, and only root can make a device.
Status move_into_place(const Fd& dir, const std::string& temp, const std::string& name,
                       const fs::path& shown) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (auto refusal = refuse_non_regular(dir.fd, name, shown)) return *refusal;
        struct stat st {};
        bool missing = ::fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0;
        if (!missing) {
            if (::renameat(dir.fd, temp.c_str(), dir.fd, name.c_str()) == 0) return ok_status();
            return io_error("move into place", shown, std::strerror(errno));
        }
        if (::renameat2(dir.fd, temp.c_str(), dir.fd, name.c_str(), RENAME_NOREPLACE) == 0)
            return ok_status();
        if (errno == EEXIST) continue;  // made meanwhile: judge it again
        if (errno != EINVAL && errno != ENOSYS)
            return io_error("move into place", shown, std::strerror(errno));
        // A file system without RENAME_NOREPLACE (some network ones): a plain rename.
        if (::renameat(dir.fd, temp.c_str(), dir.fd, name.c_str()) == 0) return ok_status();
        return io_error("move into place", shown, std::strerror(errno));
    }
    return io_error("move into place", shown, "it keeps changing while torchdock writes it");
}

// Writes one file in the open directory `dir`: a fresh temp file, then rename over `name`.
// Refused before anything is written when `name` is there and not a regular file.
Status write_in_dir(const Fd& dir, const std::string& name, const std::string& text,
                    const fs::path& shown) {
    if (auto refusal = refuse_non_regular(dir.fd, name, shown)) return *refusal;
    std::string temp = temp_name(name);
    Fd out(
        ::openat(dir.fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (out.fd < 0) return io_error("create", shown, std::strerror(errno));
    Status written = write_all(out.fd, text, shown);
    if (written && ::close(std::exchange(out.fd, -1)) != 0)
        written = io_error("write", shown, std::strerror(errno));
    if (written) written = move_into_place(dir, temp, name, shown);
    if (!written) ::unlinkat(dir.fd, temp.c_str(), 0);
    return written;
}

std::string temp_suffix() { return ".tmp-" + std::to_string(::getpid()); }

// Only a missing path, an empty directory, or a tree torchdock rendered (its index.json
// says so) may be replaced or written into: `render --out` must never touch someone's files.
Status check_replaceable(const fs::path& target) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(target, ec))) return ok_status();
    if (!fs::is_directory(target, ec))
        return Error{ErrorKind::Config,
                     target.string() + " exists and is not a directory; refusing to replace it"};
    if (fs::is_empty(target, ec)) return ok_status();
    auto index = read_file_in_tree(target, "index.json");
    if (!index || index->find("\"generator\": \"torchdock\"") == std::string::npos)
        return Error{
            ErrorKind::Config,
            target.string() +
                " is not empty and was not rendered by torchdock (no index.json from torchdock); "
                "refusing to replace it: choose another --out"};
    return ok_status();
}

}  // namespace

Result<std::string> read_text_file(const fs::path& path, std::size_t max_bytes) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (fd.fd < 0) {
        std::error_code ec;
        if (errno == ENOENT && fs::is_symlink(fs::symlink_status(path, ec)))
            return io_error("read", path, "it is a symlink to nothing");
        return io_error("read", path, std::strerror(errno));
    }
    return read_open_file(fd.fd, path, max_bytes);
}

Result<std::string> read_file_in_tree(const fs::path& root, const std::string& rel,
                                      std::size_t max_bytes) {
    std::string name;
    auto dir = parent_below(root, rel, false, MissingDir::Refuse, name);
    if (!dir) return dir.error();
    fs::path shown = below(root, rel);
    Fd fd(::openat(dir->fd, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
    if (fd.fd < 0) {
        struct stat st {};
        if (::fstatat(dir->fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
            return io_error("read", shown, kind_of(st.st_mode));
        return io_error("read", shown, std::strerror(errno));
    }
    return read_open_file(fd.fd, shown, max_bytes);
}

Result<std::uint64_t> read_blocks(const std::string& path, std::size_t block_bytes,
                                  const std::function<void(std::string_view)>& sink) {
    const bool stdin_ = path == "-";
    const fs::path shown = stdin_ ? fs::path("standard input") : fs::path(path);
    int fd = 0;
    if (!stdin_) {
        std::error_code ec;
        if (fs::is_directory(path, ec)) return io_error("read", shown, "it is a directory");
        // A log is a file or a pipe; a device (/dev/zero, /dev/urandom) never ends.
        auto st = fs::status(path, ec);
        if (fs::is_character_file(st) || fs::is_block_file(st) || fs::is_socket(st))
            return io_error("read", shown, "it is a device or socket, not a log");
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return io_error("read", shown, std::strerror(errno));
    }
    std::string block(std::max<std::size_t>(block_bytes, 1), '\0');
    std::uint64_t total = 0;
    Result<std::uint64_t> result = total;
    for (;;) {
        if (interrupted()) {
            result = io_error("read", shown, "interrupted");
            break;
        }
        ssize_t n = ::read(fd, block.data(), block.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            result = io_error("read", shown, std::strerror(errno));
            break;
        }
        if (n == 0) {
            result = total;
            break;
        }
        total += static_cast<std::uint64_t>(n);
        sink(std::string_view(block.data(), static_cast<std::size_t>(n)));
    }
    if (!stdin_) ::close(fd);
    return result;
}

Result<std::map<std::string, std::string>> read_tree(const fs::path& dir) {
    std::map<std::string, std::string> out;
    std::error_code ec;
    if (!fs::exists(dir, ec)) return out;
    fs::recursive_directory_iterator it(dir, ec), end;
    if (ec) return io_error("list", dir, ec.message());
    for (; it != end; it.increment(ec)) {
        if (ec) return io_error("list", dir, ec.message());
        std::string name = it->path().filename().string();
        if (!name.empty() && name[0] == '.') {
            if (it->is_directory()) it.disable_recursion_pending();
            continue;
        }
        if (it->is_directory() || !it->is_regular_file(ec)) continue;
        std::string rel = fs::relative(it->path(), dir).generic_string();
        auto text = read_file_in_tree(dir, rel);
        if (!text) return text.error();
        out[rel] = std::move(text.value());
    }
    return out;
}

Status write_tree_atomically(const fs::path& dir, const std::map<std::string, std::string>& files) {
    fs::path target = dir.has_filename() ? dir : dir.parent_path();
    if (auto st = check_replaceable(target); !st) return st;
    fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) return io_error("create directory", parent, ec.message());
    fs::path staging = parent / ("." + target.filename().string() + temp_suffix());
    fs::remove_all(staging, ec);
    auto discard = [&](Error e) -> Status {
        std::error_code ignore;
        fs::remove_all(staging, ignore);
        return e;
    };
    if (auto st = write_files(staging, files, MissingDir::Create); !st) return discard(st.error());
    if (fs::exists(fs::symlink_status(target, ec))) {
        if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0)
            return discard(io_error("swap in", target, std::strerror(errno)));
        // `staging` now holds the previous tree.
        fs::remove_all(staging, ec);
        if (ec) return io_error("remove the previous tree at", staging, ec.message());
    } else if (::rename(staging.c_str(), target.c_str()) != 0) {
        return discard(io_error("move into place", target, std::strerror(errno)));
    }
    return ok_status();
}

Status write_into_rendered_tree(const fs::path& dir,
                                const std::map<std::string, std::string>& files) {
    if (auto st = check_replaceable(dir); !st) return st;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(dir, ec)))
        return Error{ErrorKind::Config, dir.string() +
                                            " is a symlink; refusing to write through it: name "
                                            "the directory itself with --out"};
    return write_files(dir, files, MissingDir::Create);
}

Status write_files(const fs::path& dir, const std::map<std::string, std::string>& files,
                   MissingDir missing) {
    for (const auto& [rel, content] : files) {
        std::string name;
        auto parent = parent_below(dir, rel, true, missing, name);
        if (!parent) return parent.error();
        if (auto st = write_in_dir(parent.value(), name, content, below(dir, rel)); !st) return st;
    }
    return ok_status();
}

Status check_output_file(const std::string& flag, const std::string& path) {
    if (path.empty()) return Error{ErrorKind::Usage, flag + " needs a file name"};
    fs::path p = path;
    std::error_code ec;
    fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return Error{ErrorKind::Usage, flag + " " + path + " is a directory; name a file"};
        return Error{ErrorKind::Usage,
                     flag + " " + path + ": it is " + node_kind(AT_FDCWD, path, st) +
                         "; torchdock writes reports only to a new or regular file: name one, "
                         "or give " +
                         flag + "=- for standard output"};
    }
    if (!fs::is_directory(dir, ec))
        return Error{ErrorKind::Usage,
                     flag + " " + path + ": the directory " + dir.string() + " does not exist"};
    return ok_status();
}

Result<OutputFile> OutputFile::create(const fs::path& root, const std::string& rel) {
    std::string name;
    auto dir = parent_below(root, rel, true, MissingDir::Create, name);
    if (!dir) return dir.error();
    fs::path shown = below(root, rel);
    if (auto refusal = refuse_non_regular(dir->fd, name, shown)) return *refusal;
    if (::unlinkat(dir->fd, name.c_str(), 0) != 0 && errno != ENOENT)
        return io_error("replace", shown, std::strerror(errno));
    int fd =
        ::openat(dir->fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return io_error("create", shown, std::strerror(errno));
    return OutputFile(fd, shown.string());
}

OutputFile::~OutputFile() {
    if (m_fd >= 0) ::close(m_fd);
}

Status OutputFile::write(const std::string& text) { return write_all(m_fd, text, m_path); }

}  // namespace td::engine
