#include "engine/image_layouts.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "engine/files.hpp"
#include "engine/registry_pull.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t k_small_member = std::size_t{4} << 20;  // an index, manifest, config
constexpr std::size_t k_small_total = std::size_t{64} << 20;  // all of them together

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
Result<ResolvedImage> resolve_oci(
    const std::function<Result<std::string>(const std::string&)>& file, const std::string& where,
    const std::string& ref, const std::string& platform) {
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
    ResolvedImage r;
    r.config_digest = manifest->config.digest;
    auto config = file("blobs/sha256/" + hex_of(r.config_digest));
    if (!config) return config.error();
    if (auto v = verify(where + " configuration", config.value(), r.config_digest); !v)
        return v.error();
    r.config = std::move(config.value());
    for (const auto& l : manifest->layers) r.layers.push_back({l.digest, {}});
    return r;
}

Result<ResolvedImage> resolve_docker_archive(const std::shared_ptr<Archive>& archive,
                                             const std::string& ref, const fs::path& staging) {
    const std::string where = archive->path.string();
    auto manifest_text = archive->member("manifest.json");
    if (!manifest_text) return manifest_text.error();
    auto images = parse_saved_manifest(manifest_text.value());
    if (!images) return bad(where, images.error().message);
    auto image = pick_saved_image(images.value(), ref);
    if (!image) return bad(where, image.error().message);
    ResolvedImage r;
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

}  // namespace

std::string hex_of(const std::string& digest) { return digest.substr(digest.find(':') + 1); }

Result<ResolvedImage> resolve_image(const ImageSource& s, const std::string& platform,
                                    std::chrono::milliseconds registry_timeout,
                                    const fs::path& staging) {
    Result<ResolvedImage> resolved =
        Error{ErrorKind::Usage, "not an image torchdock reads without an engine"};
    switch (s.transport) {
        case ImageSource::Transport::OciDir: {
            fs::path dir = s.path;
            auto file = [&](const std::string& rel) -> Result<std::string> {
                return read_file_in_tree(dir, rel, std::size_t{4} << 20);
            };
            resolved = resolve_oci(file, s.path, s.ref, platform);
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
                                   s.path, s.ref, platform);
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
            auto pulled = resolve_registry_image(s.registry_ref, platform, registry_timeout);
            if (!pulled) return pulled.error();
            ResolvedImage r;
            r.config = std::move(pulled->config);
            r.config_digest = pulled->config_digest;
            for (const auto& d : pulled->layer_digests) r.layers.push_back({d, {}});
            auto ref = s.registry_ref;
            auto timeout = registry_timeout;
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
    return resolved;
}

}  // namespace td::engine
