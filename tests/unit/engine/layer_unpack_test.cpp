// Layers applied to a root by the OCI rules, and what is refused (engine/layer_unpack).
#include "engine/layer_unpack.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "util/sha256.hpp"

using namespace td;
using namespace td::engine;
using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

struct LayerMember {
    std::string path;
    char type = 'f';   // f file, d dir, l symlink, h hard link
    std::string data;  // file contents, or the link's target
    int mode = 0644;
};

// Writes a tar (gzip when asked) of `members` and returns its path.
fs::path write_layer(const fs::path& dir, const std::string& name,
                     const std::vector<LayerMember>& members, bool gzip = false) {
    fs::path out = dir / name;
    std::unique_ptr<struct archive, int (*)(struct archive*)> a(archive_write_new(),
                                                                archive_write_free);
    archive_write_set_format_pax_restricted(a.get());
    if (gzip) archive_write_add_filter_gzip(a.get());
    archive_write_open_filename(a.get(), out.c_str());
    for (const auto& m : members) {
        std::unique_ptr<archive_entry, void (*)(archive_entry*)> e(archive_entry_new(),
                                                                   archive_entry_free);
        archive_entry_set_pathname(e.get(), m.path.c_str());
        archive_entry_set_mtime(e.get(), 1700000000, 0);
        archive_entry_set_perm(e.get(), static_cast<mode_t>(m.mode));
        if (m.type == 'd') {
            archive_entry_set_filetype(e.get(), AE_IFDIR);
        } else if (m.type == 'l') {
            archive_entry_set_filetype(e.get(), AE_IFLNK);
            archive_entry_set_symlink(e.get(), m.data.c_str());
        } else if (m.type == 'h') {
            archive_entry_set_filetype(e.get(), AE_IFREG);
            archive_entry_set_hardlink(e.get(), m.data.c_str());
        } else {
            archive_entry_set_filetype(e.get(), AE_IFREG);
            archive_entry_set_size(e.get(), static_cast<la_int64_t>(m.data.size()));
        }
        archive_write_header(a.get(), e.get());
        if (m.type == 'f') archive_write_data(a.get(), m.data.data(), m.data.size());
    }
    archive_write_close(a.get());
    return out;
}

std::string layer_file(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string digest_of(const fs::path& p) { return "sha256:" + sha256_hex(layer_file(p)); }

struct LayerScratch {
    fs::path dir;
    LayerScratch() {
        std::string t = (fs::temp_directory_path() / "td-layer-XXXXXX").string();
        dir = ::mkdtemp(t.data());
    }
    ~LayerScratch() { fs::remove_all(dir); }
};

}  // namespace

TEST_CASE("layers: files, links, whiteouts and opaque directories, by the OCI rules") {
    LayerScratch s;
    auto l1 = write_layer(s.dir, "l1.tar",
                          {{"usr/", 'd', "", 0755},
                           {"usr/bin/tool", 'f', "#!/bin/sh\n", 0755},
                           {"usr/lib/a.so", 'f', "A", 0644},
                           {"usr/lib/a.so.1", 'h', "usr/lib/a.so"},
                           {"usr/lib/abs", 'l', "/etc/hostname"},
                           {"usr/lib/deep", 'l', "../../../../../x"},
                           {"opt/venv/lib/torch.py", 'f', "old"},
                           {"opt/venv/keep", 'f', "lower"},
                           {"etc/gone", 'f', "bye"}},
                          /*gzip=*/true);
    fs::path r1 = s.dir / "r1";
    fs::create_directory(r1);
    auto st = unpack_layer(l1, r1, digest_of(l1), 0);
    REQUIRE(st);
    CHECK(st->bytes == 10 + 1 + 3 + 5 + 3);
    CHECK(layer_file(r1 / "usr/lib/a.so.1") == "A");
    CHECK(fs::read_symlink(r1 / "usr/lib/abs") == "/etc/hostname");
    // A link whose ".." passes the root is kept: the sandbox's kernel stops ".." at the root.
    CHECK(fs::read_symlink(r1 / "usr/lib/deep") == "../../../../../x");
    struct stat tool {};
    REQUIRE(::stat((r1 / "usr/bin/tool").c_str(), &tool) == 0);
    CHECK((tool.st_mode & 0777) == 0755);
    CHECK(tool.st_mtim.tv_sec == 1700000000);

    // The next layer applies to a hard-linked copy; the lower root must not change.
    fs::path r2 = s.dir / "r2";
    REQUIRE(link_tree(r1, r2));
    auto l2 = write_layer(s.dir, "l2.tar",
                          {{"etc/.wh.gone", 'f', ""},
                           {"opt/venv/.wh..wh..opq", 'f', ""},
                           {"opt/venv/new", 'f', "upper"},
                           {"usr/lib/a.so", 'f', "B"}});
    REQUIRE(unpack_layer(l2, r2, digest_of(l2), 0));
    CHECK(!fs::exists(r2 / "etc/gone"));
    CHECK(fs::exists(r1 / "etc/gone"));
    CHECK(!fs::exists(r2 / "opt/venv/keep"));
    CHECK(!fs::exists(r2 / "opt/venv/lib"));
    CHECK(layer_file(r2 / "opt/venv/new") == "upper");
    CHECK(layer_file(r2 / "usr/lib/a.so") == "B");
    CHECK(layer_file(r1 / "usr/lib/a.so") == "A");  // never changed in place
    CHECK(layer_file(r2 / "usr/lib/a.so.1") ==
          "A");  // the image's own hard link keeps the old file
}

TEST_CASE("layers: what could leave the root is refused, and a blob that does not hash") {
    LayerScratch s;
    fs::path root = s.dir / "root";
    fs::create_directory(root);
    auto through =
        write_layer(s.dir, "through.tar", {{"lib", 'l', "/"}, {"lib/escaped", 'f', "x"}});
    auto r = unpack_layer(through, root, "", 0);
    REQUIRE(!r);
    CHECK_THAT(r.error().message, ContainsSubstring("symbolic link or not a directory"));

    fs::remove_all(root);
    fs::create_directory(root);
    auto up = write_layer(s.dir, "up.tar", {{"../outside", 'f', "x"}});
    CHECK_THAT(unpack_layer(up, root, "", 0).error().message, ContainsSubstring("\"..\""));
    CHECK(!fs::exists(s.dir / "outside"));

    auto hard = write_layer(s.dir, "hard.tar", {{"a", 'h', "etc/shadow"}});
    CHECK_THAT(unpack_layer(hard, root, "", 0).error().message,
               ContainsSubstring("not a regular file already in the image"));

    auto fine = write_layer(s.dir, "fine.tar", {{"a", 'f', "x"}});
    auto wrong = unpack_layer(fine, root, "sha256:" + std::string(64, '0'), 0);
    REQUIRE(!wrong);
    CHECK_THAT(wrong.error().message, ContainsSubstring("corrupt or substituted"));

    auto big = write_layer(s.dir, "big.tar", {{"big", 'f', std::string(4096, 'x')}});
    CHECK_THAT(unpack_layer(big, root, "", 1024).error().message,
               ContainsSubstring("unpack limit"));

    fs::path junk = s.dir / "junk";
    std::ofstream(junk) << "this is not a tar archive at all, not even close to one";
    CHECK(!unpack_layer(junk, root, "", 0));
}
