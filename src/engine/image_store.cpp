#include "engine/image_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/dir_lock.hpp"
#include "engine/file_probe_cache.hpp"
#include "engine/files.hpp"
#include "engine/image_layouts.hpp"
#include "engine/layer_unpack.hpp"
#include "engine/process.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string chain_of(const std::string& below, const std::string& digest) {
    return sha256_hex((below.empty() ? std::string("torchdock chain 1") : below) + "\n" + digest);
}

long long now_seconds() { return static_cast<long long>(std::time(nullptr)); }

void write_root_record(const fs::path& json_path, std::uint64_t bytes) {
    nlohmann::json j;
    if (auto old = read_text_file(json_path, 4096)) {
        auto parsed = nlohmann::json::parse(old.value(), nullptr, false);
        if (parsed.is_object()) j = parsed;
    }
    if (!j.contains("bytes")) j["bytes"] = bytes;
    j["last_used"] = now_seconds();
    (void)write_files(json_path.parent_path(), {{json_path.filename().string(), j.dump() + "\n"}});
}

ImageInfo info_from_config(const ImageConfig& c, const std::string& config_digest,
                           const std::vector<std::string>& layer_digests) {
    ImageInfo info;
    info.id = config_digest;
    info.labels = c.labels;
    info.env = c.env;
    info.entrypoint = c.entrypoint;
    info.cmd = c.cmd;
    info.user = c.user;
    info.working_dir = c.working_dir;
    info.volumes = c.volumes;
    info.os = c.os;
    info.architecture = c.architecture;
    info.variant = c.variant;
    // The file-probe cache's key: the verified blob digests, marked, so it never meets an
    // engine's diff IDs (which the engine computed itself).
    info.layers = {"sandbox"};
    info.layers.insert(info.layers.end(), layer_digests.begin(), layer_digests.end());
    return info;
}

// Makes (or finds) the root of the chain of `r`'s layers.
Result<LocalImage> materialize(ResolvedImage& r, const StoreOptions& o) {
    LocalImage out;
    fs::path roots = o.dir / "roots";
    std::error_code ec;
    fs::create_directories(roots, ec);
    std::vector<std::string> chains;
    for (const auto& l : r.layers)
        chains.push_back(chain_of(chains.empty() ? "" : chains.back(), l.digest));
    if (chains.empty()) return Error{ErrorKind::Config, "the image has no layers"};
    auto layers_made = [&] {  // layers whose root exists
        for (std::size_t i = chains.size(); i > 0; --i)
            if (fs::is_directory(roots / chains[i - 1], ec)) return i;
        return std::size_t{0};
    };
    std::size_t have = layers_made();
    out.cached = have == chains.size();
    std::optional<DirLock> lock;
    if (!out.cached) {
        // One unpacking at a time per store (threads of one validate, or other runs): the
        // second finds what the first made instead of making it again.
        auto held =
            DirLock::acquire(o.dir, ".unpack.lock", std::chrono::hours(1), [](const fs::path&) {});
        if (!held) return held.error();
        lock.emplace(std::move(held.value()));
        have = layers_made();
        out.cached = have == chains.size();
    }
    if (!out.cached) {
        std::vector<LayerBlob*> needed;
        for (std::size_t i = have; i < r.layers.size(); ++i) needed.push_back(&r.layers[i]);
        auto fetch_start = Clock::now();
        if (auto st = r.stage(needed); !st) return st.error();
        out.fetch_seconds = since(fetch_start);
        auto start = Clock::now();
        std::uint64_t budget = o.max_image_bytes;
        for (std::size_t i = have; i < r.layers.size(); ++i) {
            fs::path tmp = roots / (".tmp-" + chains[i] + "-" + std::to_string(::getpid()));
            fs::remove_all(tmp, ec);
            if (i == 0) {
                if (::mkdir(tmp.c_str(), 0755) != 0)
                    return Error{ErrorKind::Io, tmp.string() + ": " + std::strerror(errno)};
            } else if (auto st = link_tree(roots / chains[i - 1], tmp); !st) {
                fs::remove_all(tmp, ec);
                return st.error();
            }
            auto stats = unpack_layer(r.layers[i].path, tmp, r.layers[i].digest, budget);
            if (!stats) {
                fs::remove_all(tmp, ec);
                return stats.error();
            }
            budget -= std::min(budget, stats->bytes);
            out.unpacked_bytes += stats->bytes;
            out.compressed_bytes += stats->compressed_bytes;
            fs::rename(tmp, roots / chains[i], ec);
            if (ec) fs::remove_all(tmp, ec);  // another run made it meanwhile
            write_root_record(roots / (chains[i] + ".json"), stats->bytes);
        }
        out.unpack_seconds = since(start);
    }
    write_root_record(roots / (chains.back() + ".json"), 0);
    out.root = roots / chains.back();
    auto config = parse_image_config(r.config);
    if (!config) return config.error();
    std::vector<std::string> digests;
    for (const auto& l : r.layers) digests.push_back(l.digest);
    out.info = info_from_config(config.value(), r.config_digest, digests);
    return out;
}

// An enroot squashfs: unsquashfs into the store, keyed by the file's identity (path, size,
// modification time, inode); its environment from /etc/environment, as enroot writes it.
Result<LocalImage> open_squashfs(const ImageSource& s, const StoreOptions& o) {
    struct stat st {};
    if (::stat(s.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        return Error{ErrorKind::Io, s.path + ": not a readable regular file"};
    std::error_code ec;
    std::string key =
        sha256_hex("squashfs\n" + fs::weakly_canonical(s.path, ec).string() + "\n" +
                   std::to_string(st.st_size) + "\n" + std::to_string(st.st_mtim.tv_sec) + "." +
                   std::to_string(st.st_mtim.tv_nsec) + "\n" + std::to_string(st.st_ino));
    fs::path roots = o.dir / "roots";
    fs::create_directories(roots, ec);
    LocalImage out;
    out.root = roots / key;
    out.cached = fs::is_directory(out.root, ec);
    if (!out.cached) {
        std::string unsquashfs = find_program("unsquashfs");
        if (unsquashfs.empty())
            return Error{ErrorKind::Environment,
                         "squashfs: images need squashfs-tools' unsquashfs, which is not on PATH "
                         "(apt-get install squashfs-tools)"};
        fs::path tmp = roots / (".tmp-" + key + "-" + std::to_string(::getpid()));
        fs::remove_all(tmp, ec);
        auto start = Clock::now();
        ProcessSpec p;
        p.argv = {unsquashfs, "-no-xattrs", "-no-progress", "-quiet", "-d", tmp.string(), s.path};
        p.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
        p.timeout = std::chrono::hours(1);
        auto r = run_process(p);
        if (!r || !r->ok()) {
            fs::remove_all(tmp, ec);
            return Error{ErrorKind::Config,
                         s.path + ": unsquashfs failed: " +
                             (r ? r->describe() + ": " + clip(r->err, 300) : r.error().message)};
        }
        // What the files hold, for the store's size cap.
        for (auto it = fs::recursive_directory_iterator(tmp, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
            if (it->is_regular_file(ec)) out.unpacked_bytes += it->file_size(ec);
        fs::rename(tmp, out.root, ec);
        if (ec) fs::remove_all(tmp, ec);
        out.unpack_seconds = since(start);
        out.compressed_bytes = static_cast<std::uint64_t>(st.st_size);
    }
    write_root_record(roots / (key + ".json"), out.unpacked_bytes);
    ImageConfig c;
    if (auto env = read_file_in_tree(out.root, "etc/environment", std::size_t{1} << 20))
        for (const auto& line : split(env.value(), '\n'))
            if (line.find('=') != std::string::npos && line[0] != '#')
                c.env.push_back(starts_with(line, "export ") ? line.substr(7) : line);
    out.info = info_from_config(c, "sha256:" + key, {"squashfs:" + key});
    return out;
}

}  // namespace

fs::path default_store_dir() {
    // Root's home is closed to the images' users the sandbox runs as: a system cache instead,
    // unless TORCHDOCK_CACHE_DIR names one.
    const char* chosen = std::getenv("TORCHDOCK_CACHE_DIR");
    if (::geteuid() == 0 && !(chosen && *chosen)) return "/var/cache/torchdock/images";
    fs::path base = cache_dir();
    return base.empty() ? fs::path("/var/tmp/torchdock-images") : base / "images";
}

Result<LocalImage> open_local_image(const ImageSource& s, const StoreOptions& options) {
    StoreOptions o = options;
    if (o.dir.empty()) o.dir = default_store_dir();
    std::error_code ec;
    fs::create_directories(o.dir, ec);
    if (ec) return Error{ErrorKind::Io, o.dir.string() + ": " + ec.message()};
    if (s.transport == ImageSource::Transport::Squashfs) {
        auto out = open_squashfs(s, o);
        if (out) out->source = s.text;
        return out;
    }
    // A staging directory of this call's own (several images of one validate read at once).
    fs::create_directories(o.dir / "tmp", ec);
    std::string staging_name = (o.dir / "tmp" / "stage-XXXXXX").string();
    if (!::mkdtemp(staging_name.data()))
        return Error{ErrorKind::Io, o.dir.string() + "/tmp: " + std::strerror(errno)};
    fs::path staging = staging_name;
    struct Cleanup {
        fs::path p;
        ~Cleanup() {
            std::error_code e;
            fs::remove_all(p, e);
        }
    } cleanup{staging};
    auto resolved = resolve_image(s, o.platform, o.registry_timeout, staging);
    if (!resolved) return resolved.error();
    auto out = materialize(resolved.value(), o);
    if (out) out->source = s.text;
    return out;
}

Result<std::vector<StoreEntry>> list_store(const fs::path& dir) {
    std::vector<StoreEntry> out;
    std::error_code ec;
    for (auto it = fs::directory_iterator(dir / "roots", ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (!ends_with(name, ".json")) continue;
        StoreEntry e;
        e.chain = name.substr(0, name.size() - 5);
        if (!fs::is_directory(dir / "roots" / e.chain)) continue;
        auto text = read_text_file(it->path(), 4096);
        auto j = nlohmann::json::parse(text ? text.value() : "", nullptr, false);
        if (j.is_object()) {
            e.bytes = j.value("bytes", std::uint64_t{0});
            e.last_used = j.value("last_used", 0LL);
        }
        out.push_back(e);
    }
    std::sort(out.begin(), out.end(),
              [](const StoreEntry& a, const StoreEntry& b) { return a.last_used > b.last_used; });
    return out;
}

Result<std::uint64_t> prune_store(const fs::path& dir, std::uint64_t max_bytes,
                                  const fs::path& keep) {
    auto entries = list_store(dir);
    if (!entries) return entries.error();
    std::uint64_t total = 0, freed = 0;
    for (const auto& e : entries.value()) total += e.bytes;
    std::error_code ec;
    // Least recently used last in the list: removed first.
    for (auto it = entries->rbegin();
         it != entries->rend() && (total > max_bytes || max_bytes == 0); ++it) {
        if (!keep.empty() && keep.filename() == it->chain) continue;
        fs::remove_all(dir / "roots" / it->chain, ec);
        fs::remove(dir / "roots" / (it->chain + ".json"), ec);
        total -= it->bytes;
        freed += it->bytes;
    }
    if (max_bytes == 0) fs::remove_all(dir / "tmp", ec);
    return freed;
}

}  // namespace td::engine
