#include "engine/remote_probes.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "engine/files.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;
namespace {

constexpr const char* k_volume_mount = "/torchdock-probes";

struct ProbeFile {
    std::string name;
    struct stat st;
};

// The directory's regular files (not its subdirectories: another platform's probes are a
// directory of their own, bound on their own).
Result<std::vector<ProbeFile>> probe_files(const fs::path& dir) {
    std::vector<ProbeFile> out;
    std::error_code ec;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
        ProbeFile f{it->path().filename().string(), {}};
        if (::lstat(it->path().c_str(), &f.st) != 0 || !S_ISREG(f.st.st_mode)) continue;
        out.push_back(std::move(f));
    }
    if (ec) return Error{ErrorKind::Io, dir.string() + ": " + ec.message()};
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
}

Result<std::string> tar_of(const fs::path& dir, const std::vector<ProbeFile>& files) {
    std::string out;
    std::unique_ptr<struct archive, int (*)(struct archive*)> a(archive_write_new(),
                                                                archive_write_free);
    archive_write_set_format_pax_restricted(a.get());
    auto write_cb = [](struct archive*, void* self, const void* buf, size_t n) -> la_ssize_t {
        static_cast<std::string*>(self)->append(static_cast<const char*>(buf), n);
        return static_cast<la_ssize_t>(n);
    };
    archive_write_set_bytes_in_last_block(a.get(), 1);
    if (archive_write_open(a.get(), &out, nullptr, write_cb, nullptr) != ARCHIVE_OK)
        return Error{ErrorKind::Environment, "cannot write a tar of the probes"};
    for (const auto& f : files) {
        auto body = read_text_file(dir / f.name, std::size_t{256} << 20);
        if (!body) return body.error();
        std::unique_ptr<archive_entry, void (*)(archive_entry*)> e(archive_entry_new(),
                                                                   archive_entry_free);
        archive_entry_set_pathname(e.get(), f.name.c_str());
        archive_entry_set_filetype(e.get(), AE_IFREG);
        archive_entry_set_perm(e.get(), f.st.st_mode & 0755);
        archive_entry_set_size(e.get(), static_cast<la_int64_t>(body->size()));
        archive_entry_set_mtime(e.get(), f.st.st_mtim.tv_sec, 0);
        if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK ||
            archive_write_data(a.get(), body->data(), body->size()) < 0)
            return Error{ErrorKind::Environment, "cannot write a tar of the probes"};
    }
    archive_write_close(a.get());
    return out;
}

}  // namespace

Result<std::string> remote_probe_volume(const DockerApi& api, const std::string& carrier_image,
                                        const fs::path& dir) {
    auto files = probe_files(dir);
    if (!files) return files.error();
    std::string material = "torchdock probes 1\n";
    for (const auto& f : files.value())
        material += f.name + " " + std::to_string(f.st.st_size) + " " +
                    std::to_string(f.st.st_mtim.tv_sec) + "." +
                    std::to_string(f.st.st_mtim.tv_nsec) + "\n";
    std::string name = "torchdock-probes-" + sha256_hex(material).substr(0, 16);
    auto exists = api.has_volume(name);
    if (!exists) return exists.error();
    if (exists.value()) return name;
    auto tar = tar_of(dir, files.value());
    if (!tar) return tar.error();
    if (auto st = api.create_volume(name, {{"io.torchdock.probes", dir.string()}}); !st)
        return st.error();
    ContainerSpec carrier;
    carrier.image = carrier_image;
    carrier.cmd = {"/torchdock-probes/never-started"};
    carrier.entrypoint = std::vector<std::string>{};
    carrier.binds = {name + ":" + k_volume_mount};
    carrier.labels = {{"io.torchdock.probes-carrier", name}};
    auto id = api.create_container(carrier);
    Status filled =
        id ? api.put_archive(id.value(), k_volume_mount, tar.value()) : Status(id.error());
    if (id) (void)api.remove_container(id.value());
    if (!filled) {
        (void)api.remove_volume(name);
        return Error{filled.error().kind, "copying the probes to the remote engine's volume " +
                                              name + ": " + filled.error().message};
    }
    return name;
}

}  // namespace td::engine
