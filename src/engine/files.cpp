#include "engine/files.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/interrupt.hpp"

namespace td::engine {
namespace fs = std::filesystem;

namespace {

Error io_error(const std::string& what, const fs::path& path, const std::string& reason) {
    return Error{ErrorKind::Io, "cannot " + what + " " + path.string() + ": " + reason};
}

Status write_file(const fs::path& path, const std::string& content) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) return io_error("create directory", path.parent_path(), ec.message());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return io_error("open for writing", path, std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) return io_error("write", path, std::strerror(errno));
    return ok_status();
}

std::string temp_suffix() { return ".tmp-" + std::to_string(::getpid()); }

// Only a missing path, an empty directory, or a tree torchdock rendered (its index.json
// says so) may be replaced: `render --out` must never delete someone's files.
Status check_replaceable(const fs::path& target) {
    std::error_code ec;
    if (!fs::exists(target, ec)) return ok_status();
    if (!fs::is_directory(target, ec))
        return Error{ErrorKind::Config,
                     target.string() + " exists and is not a directory; refusing to replace it"};
    if (fs::is_empty(target, ec)) return ok_status();
    std::ifstream index(target / "index.json");
    std::string head(4096, '\0');
    index.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(index.gcount()));
    if (head.find("\"generator\": \"torchdock\"") == std::string::npos)
        return Error{
            ErrorKind::Config,
            target.string() +
                " is not empty and was not rendered by torchdock (no index.json from torchdock); "
                "refusing to replace it: choose another --out"};
    return ok_status();
}

}  // namespace

Result<std::string> read_text_file(const fs::path& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return io_error("read", path, "it is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) return io_error("read", path, std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return io_error("read", path, std::strerror(errno));
    return ss.str();
}

Result<std::uint64_t> read_blocks(const std::string& path, std::size_t block_bytes,
                                  const std::function<void(std::string_view)>& sink) {
    const bool stdin_ = path == "-";
    const fs::path shown = stdin_ ? fs::path("standard input") : fs::path(path);
    int fd = 0;
    if (!stdin_) {
        std::error_code ec;
        if (fs::is_directory(path, ec)) return io_error("read", shown, "it is a directory");
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
        if (!it->is_regular_file()) continue;
        auto text = read_text_file(it->path());
        if (!text) return text.error();
        out[fs::relative(it->path(), dir).generic_string()] = std::move(text.value());
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
    for (const auto& [rel, content] : files)
        if (auto st = write_file(staging / rel, content); !st) return discard(st.error());
    if (fs::exists(target, ec)) {
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

Status write_files(const fs::path& dir, const std::map<std::string, std::string>& files) {
    for (const auto& [rel, content] : files) {
        fs::path final_path = dir / rel;
        fs::path temp = final_path;
        temp += temp_suffix();
        if (auto st = write_file(temp, content); !st) return st;
        if (::rename(temp.c_str(), final_path.c_str()) != 0) {
            std::error_code ignore;
            fs::remove(temp, ignore);
            return io_error("move into place", final_path, std::strerror(errno));
        }
    }
    return ok_status();
}

}  // namespace td::engine
