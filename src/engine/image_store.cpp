#include "engine/image_store.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/dir_lock.hpp"
#include "engine/file_probe_cache.hpp"
#include "engine/files.hpp"
#include "engine/layer_unpack.hpp"
#include "engine/process.hpp"
#include "engine/registry_pull.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t k_small_member = std::size_t{4} << 20;  // an index, manifest, config
constexpr std::size_t k_small_total = std::size_t{64} << 20;  // all of them together

double since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string hex_of(const std::string& digest) { return digest.substr(digest.find(':') + 1); }

// A layer as the store needs it: its verified digest, and (once staged) a local file.
struct LayerBlob {
    std::string digest;
    fs::path path;
};

// An image read far enough to know its configuration and its layers' digests; `stage`
// makes the layers at the given indexes local files (a no-op for a layout directory).
struct Resolved {
    std::string config, config_digest;
    std::vector<LayerBlob> layers;
    std::function<Status(std::vector<LayerBlob*>)> stage = [](std::vector<LayerBlob*>) {
        return ok_status();
    };
};

Error bad(const std::string& where, const std::string& what) {
    return Error{ErrorKind::Config, where + ": " + what};
}

Status verify(const std::string& where, const std::string& body, const std::string& digest) {
    std::string got = "sha256:" + sha256_hex(body);
    if (got != digest)
        return bad(where,
                   "hashes to " + got + ", not " + digest + " (a corrupt or substituted blob)");
    return ok_status();
}

// The members of an archive, read once: the small ones kept in memory (indexes, manifests,
// configurations), the rest only named.
struct Archive {
    fs::path path;
    std::map<std::string, std::string> small;
    std::map<std::string, long long> sizes;
    std::map<std::string, std::string> links;  // member -> the member it links to

    // The regular member `name` is, following at most 8 links.
    std::string real(std::string name) const {
        for (int hop = 0; hop < 8; ++hop) {
            auto it = links.find(name);
            if (it == links.end()) return name;
            name = it->second;
        }
        return name;
    }

    static std::string clean(const char* name) {
        std::string n = name ? name : "";
        while (starts_with(n, "./")) n = n.substr(2);
        return n;
    }

    static std::unique_ptr<struct archive, int (*)(struct archive*)> open(const fs::path& p) {
        std::unique_ptr<struct archive, int (*)(struct archive*)> a(archive_read_new(),
                                                                    archive_read_free);
        archive_read_support_filter_all(a.get());
        archive_read_support_format_tar(a.get());
        if (archive_read_open_filename(a.get(), p.c_str(), std::size_t{1} << 20) != ARCHIVE_OK)
            return {nullptr, archive_read_free};
        return a;
    }

    static Result<Archive> read(const fs::path& p) {
        Archive out;
        out.path = p;
        auto a = open(p);
        if (!a) return Error{ErrorKind::Io, p.string() + ": cannot be opened as a tar archive"};
        archive_entry* e = nullptr;
        std::size_t total = 0;
        int rc;
        while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
            // `docker save` writes a layer that two images share once, and a symbolic link
            // to it for the other ("<id>/layer.tar -> ../<other>/layer.tar").
            if (archive_entry_filetype(e) == AE_IFLNK && archive_entry_symlink(e)) {
                std::string name = clean(archive_entry_pathname(e));
                std::string dir =
                    name.find('/') == std::string::npos ? "" : name.substr(0, name.rfind('/'));
                out.links[name] =
                    (fs::path(dir) / archive_entry_symlink(e)).lexically_normal().string();
                continue;
            }
            if (archive_entry_filetype(e) != AE_IFREG) continue;
            std::string name = clean(archive_entry_pathname(e));
            long long size = archive_entry_size(e);
            out.sizes[name] = size;
            if (size < 0 || static_cast<std::size_t>(size) > k_small_member ||
                total + static_cast<std::size_t>(size) > k_small_total)
                continue;
            std::string body(static_cast<std::size_t>(size), '\0');
            if (archive_read_data(a.get(), body.data(), body.size()) != size)
                return bad(p.string(), "member " + quote_value(name) + " cannot be read");
            total += body.size();
            out.small[name] = std::move(body);
        }
        if (rc != ARCHIVE_EOF)
            return bad(p.string(),
                       std::string("not a readable tar archive: ") +
                           (archive_error_string(a.get()) ? archive_error_string(a.get()) : "?"));
        return out;
    }

    Result<std::string> member(const std::string& linked) const {
        std::string name = real(linked);
        auto it = small.find(name);
        if (it != small.end()) return it->second;
        return bad(path.string(), sizes.count(name)
                                      ? "member " + quote_value(name) + " is larger than 4 MiB"
                                      : "has no member " + quote_value(name));
    }

    // Copies the members named (member name -> destination) out of the archive, in one pass;
    // a member that is a link gives its target's bytes.
    Status extract(const std::map<std::string, fs::path>& linked) const {
        std::map<std::string, fs::path> wanted;
        std::vector<std::pair<fs::path, fs::path>> copies;  // (made, also wanted at)
        for (const auto& [name, dest] : linked) {
            auto [it, fresh] = wanted.emplace(real(name), dest);
            if (!fresh) copies.emplace_back(it->second, dest);
        }
        if (auto st = extract_regular(wanted); !st) return st;
        for (const auto& [made, also] : copies)
            if (::link(made.c_str(), also.c_str()) != 0)
                return Error{ErrorKind::Io, also.string() + ": " + std::strerror(errno)};
        return ok_status();
    }

    Status extract_regular(const std::map<std::string, fs::path>& wanted) const {
        auto a = open(path);
        if (!a) return Error{ErrorKind::Io, path.string() + ": cannot be opened as a tar archive"};
        archive_entry* e = nullptr;
        std::size_t found = 0;
        std::vector<char> buf(std::size_t{1} << 20);
        while (found < wanted.size() && archive_read_next_header(a.get(), &e) == ARCHIVE_OK) {
            auto it = wanted.find(clean(archive_entry_pathname(e)));
            if (it == wanted.end()) continue;
            ++found;
            int fd = ::open(it->second.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (fd < 0)
                return Error{ErrorKind::Io, it->second.string() + ": " + std::strerror(errno)};
            la_ssize_t n;
            while ((n = archive_read_data(a.get(), buf.data(), buf.size())) > 0)
                if (::write(fd, buf.data(), static_cast<std::size_t>(n)) != n) {
                    ::close(fd);
                    return Error{ErrorKind::Io, it->second.string() + ": " + std::strerror(errno)};
                }
            ::close(fd);
            if (n < 0)
                return bad(path.string(), "member " + quote_value(it->first) + " cannot be read");
        }
        if (found < wanted.size()) return bad(path.string(), "lacks a layer its manifest names");
        return ok_status();
    }
};

// An OCI image layout, in a directory or an archive: index.json, then blobs/sha256/<hex>.
Result<Resolved> resolve_oci(const std::function<Result<std::string>(const std::string&)>& file,
                             const std::string& where, const std::string& ref,
                             const std::string& platform) {
    auto index_text = file("index.json");
    if (!index_text) return index_text.error();
    auto index = parse_index(index_text.value());
    if (!index) return bad(where + "/index.json", index.error().message);
    auto picked = pick_manifest(index.value(), ref, platform);
    // A layout whose index.json points at another index (what `docker save` and BuildKit write).
    for (int depth = 0; !picked && depth < 2; ++depth) {
        const Descriptor* nested = nullptr;
        for (const auto& d : index.value())
            if (is_index_media(d.media_type) && (ref.empty() || d.ref_name == ref)) nested = &d;
        if (!nested) break;
        auto body = file("blobs/sha256/" + hex_of(nested->digest));
        if (!body) return body.error();
        if (auto v = verify(where + " index " + nested->digest, body.value(), nested->digest); !v)
            return v.error();
        index = parse_index(body.value());
        if (!index) return bad(where, index.error().message);
        picked = pick_manifest(index.value(), "", platform);
    }
    if (!picked) return bad(where, picked.error().message);
    auto manifest_text = file("blobs/sha256/" + hex_of(picked->digest));
    if (!manifest_text) return manifest_text.error();
    if (auto v = verify(where + " manifest", manifest_text.value(), picked->digest); !v)
        return v.error();
    auto manifest = parse_manifest(manifest_text.value());
    if (!manifest) return bad(where, manifest.error().message);
    Resolved r;
    r.config_digest = manifest->config.digest;
    auto config = file("blobs/sha256/" + hex_of(r.config_digest));
    if (!config) return config.error();
    if (auto v = verify(where + " configuration", config.value(), r.config_digest); !v)
        return v.error();
    r.config = std::move(config.value());
    for (const auto& l : manifest->layers) r.layers.push_back({l.digest, {}});
    return r;
}

Result<Resolved> resolve_docker_archive(const std::shared_ptr<Archive>& archive,
                                        const std::string& ref, const fs::path& staging) {
    const std::string where = archive->path.string();
    auto manifest_text = archive->member("manifest.json");
    if (!manifest_text) return manifest_text.error();
    auto images = parse_saved_manifest(manifest_text.value());
    if (!images) return bad(where, images.error().message);
    auto image = pick_saved_image(images.value(), ref);
    if (!image) return bad(where, image.error().message);
    Resolved r;
    auto config = archive->member(image->config);
    if (!config) return config.error();
    r.config = std::move(config.value());
    r.config_digest = "sha256:" + sha256_hex(r.config);
    // The configuration is named by its digest ("<hex>.json", "blobs/sha256/<hex>").
    std::string named = base_name(image->config);
    if (ends_with(named, ".json")) named = named.substr(0, named.size() - 5);
    if (named.size() == 64 && "sha256:" + named != r.config_digest)
        return bad(where, "configuration " + image->config + " hashes to " + r.config_digest);
    auto parsed = parse_image_config(r.config);
    if (!parsed) return bad(where + " " + image->config, parsed.error().message);
    if (parsed->diff_ids.size() != image->layers.size())
        return bad(where, "the configuration lists " + std::to_string(parsed->diff_ids.size()) +
                              " layers and manifest.json " + std::to_string(image->layers.size()));
    std::map<std::string, std::string> member_of;  // digest -> member
    for (std::size_t i = 0; i < image->layers.size(); ++i) {
        const std::string& m = image->layers[i];
        // "blobs/sha256/<hex>" names its digest (Docker 25+); "<id>/layer.tar" is uncompressed,
        // so its digest is the configuration's diff ID.
        std::string digest =
            starts_with(m, "blobs/sha256/") ? "sha256:" + base_name(m) : parsed->diff_ids[i];
        r.layers.push_back({digest, {}});
        member_of[digest] = m;
    }
    r.stage = [archive, member_of, staging](std::vector<LayerBlob*> layers) -> Status {
        std::map<std::string, fs::path> wanted;
        for (auto* l : layers) {
            l->path = staging / hex_of(l->digest);
            wanted[member_of.at(l->digest)] = l->path;
        }
        return archive->extract(wanted);
    };
    return r;
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
Result<LocalImage> materialize(Resolved& r, const StoreOptions& o) {
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
    Result<Resolved> resolved =
        Error{ErrorKind::Usage, "not an image torchdock reads without an engine"};
    switch (s.transport) {
        case ImageSource::Transport::OciDir: {
            fs::path dir = s.path;
            auto file = [&](const std::string& rel) -> Result<std::string> {
                return read_file_in_tree(dir, rel, std::size_t{4} << 20);
            };
            resolved = resolve_oci(file, s.path, s.ref, o.platform);
            if (resolved)
                for (auto& l : resolved->layers)
                    l.path = dir / "blobs" / "sha256" / hex_of(l.digest);
            break;
        }
        case ImageSource::Transport::OciArchive: {
            auto archive = Archive::read(s.path);
            if (!archive) return archive.error();
            auto shared = std::make_shared<Archive>(std::move(archive.value()));
            resolved = resolve_oci([&](const std::string& rel) { return shared->member(rel); },
                                   s.path, s.ref, o.platform);
            if (resolved)
                resolved->stage = [shared, staging](std::vector<LayerBlob*> layers) -> Status {
                    std::map<std::string, fs::path> wanted;
                    for (auto* l : layers) {
                        l->path = staging / hex_of(l->digest);
                        wanted["blobs/sha256/" + hex_of(l->digest)] = l->path;
                    }
                    return shared->extract(wanted);
                };
            break;
        }
        case ImageSource::Transport::DockerArchive: {
            auto archive = Archive::read(s.path);
            if (!archive) return archive.error();
            resolved = resolve_docker_archive(std::make_shared<Archive>(std::move(archive.value())),
                                              s.ref, staging);
            break;
        }
        case ImageSource::Transport::Registry: {
            auto pulled = resolve_registry_image(s.registry_ref, o.platform, o.registry_timeout);
            if (!pulled) return pulled.error();
            Resolved r;
            r.config = std::move(pulled->config);
            r.config_digest = pulled->config_digest;
            for (const auto& d : pulled->layer_digests) r.layers.push_back({d, {}});
            auto ref = s.registry_ref;
            auto timeout = o.registry_timeout;
            r.stage = [ref, staging, timeout](std::vector<LayerBlob*> layers) -> Status {
                for (auto* l : layers) {
                    l->path = staging / hex_of(l->digest);
                    if (auto st = fetch_registry_blob(ref, l->digest, l->path, timeout); !st)
                        return st;
                }
                return ok_status();
            };
            resolved = std::move(r);
            break;
        }
        default:
            break;
    }
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
