#include "engine/files.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace td;
namespace fs = std::filesystem;

namespace {
struct TempDir {
    fs::path path;
    TempDir() {
        char tmpl[] = "/tmp/torchdock-test-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() { fs::remove_all(path); }
};
}  // namespace

TEST_CASE("write_tree_atomically replaces the whole tree") {
    TempDir tmp;
    fs::path out = tmp.path / "dockerfiles";
    const std::string index = "{\n  \"schema\": 1,\n  \"generator\": \"torchdock\"\n}\n";
    REQUIRE(engine::write_tree_atomically(out, {{"a/Dockerfile", "A"}, {"index.json", index}}));
    REQUIRE(
        engine::write_tree_atomically(out, {{"b/Dockerfile", "B"}, {"index.json", index + " "}}));
    auto tree = engine::read_tree(out);
    REQUIRE(tree);
    CHECK(tree.value() ==
          std::map<std::string, std::string>{{"b/Dockerfile", "B"}, {"index.json", index + " "}});
    // No staging directory is left behind.
    CHECK(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()) == 1);
}

TEST_CASE("a failed write leaves the previous tree intact") {
    TempDir tmp;
    fs::path out = tmp.path / "dockerfiles";
    const std::string index = "{\"generator\": \"torchdock\"}";
    REQUIRE(engine::write_tree_atomically(out, {{"a/Dockerfile", "A"}, {"index.json", index}}));
    // "x" is a file, so "x/Dockerfile" cannot be created: the write fails halfway.
    auto st = engine::write_tree_atomically(
        out, {{"b/Dockerfile", "B"}, {"x", "file"}, {"x/Dockerfile", "X"}});
    REQUIRE_FALSE(st);
    INFO(st.error().message);
    CHECK(st.error().message.find("/x") != std::string::npos);
    auto tree = engine::read_tree(out);
    REQUIRE(tree);
    CHECK(tree.value() ==
          std::map<std::string, std::string>{{"a/Dockerfile", "A"}, {"index.json", index}});
    CHECK(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()) == 1);
}

TEST_CASE("a directory torchdock did not render, or a file, is never replaced") {
    TempDir tmp;
    fs::create_directories(tmp.path / "notes");
    { std::ofstream(tmp.path / "notes" / "todo.txt") << "keep me"; }
    auto st = engine::write_tree_atomically(tmp.path / "notes", {{"a/Dockerfile", "A"}});
    REQUIRE_FALSE(st);
    CHECK(st.error().message.find("was not rendered by torchdock") != std::string::npos);
    CHECK(fs::exists(tmp.path / "notes" / "todo.txt"));
    { std::ofstream(tmp.path / "file.txt") << "keep me"; }
    CHECK_FALSE(engine::write_tree_atomically(tmp.path / "file.txt", {{"a/Dockerfile", "A"}}));
    CHECK(fs::is_regular_file(tmp.path / "file.txt"));
}

TEST_CASE("write_files updates only the named files") {
    TempDir tmp;
    REQUIRE(engine::write_tree_atomically(tmp.path / "t",
                                          {{"a/Dockerfile", "A"}, {"b/Dockerfile", "B"}}));
    REQUIRE(engine::write_files(tmp.path / "t", {{"a/Dockerfile", "A2"}}));
    auto tree = engine::read_tree(tmp.path / "t");
    REQUIRE(tree);
    CHECK(tree.value() ==
          std::map<std::string, std::string>{{"a/Dockerfile", "A2"}, {"b/Dockerfile", "B"}});
}

TEST_CASE("reading a missing file is an error that names it") {
    auto r = engine::read_text_file("/nonexistent/x.json");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("/nonexistent/x.json") != std::string::npos);
}

namespace {
std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
void spit(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
}  // namespace

TEST_CASE(
    "inputs: a FIFO, a device, a directory or a dangling symlink is refused at once, "
    "naming what it is",
    "[regression]") {
    TempDir tmp;
    fs::path fifo = tmp.path / "x.lock.json";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto r = engine::read_text_file(fifo);  // would block forever on an open for reading
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("FIFO") != std::string::npos);
    fs::path dev = tmp.path / "zero.json";
    fs::create_symlink("/dev/zero", dev);
    r = engine::read_text_file(dev);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("device") != std::string::npos);
    r = engine::read_text_file(tmp.path);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("directory") != std::string::npos);
    fs::create_symlink(tmp.path / "nowhere", tmp.path / "dangling.json");
    r = engine::read_text_file(tmp.path / "dangling.json");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("symlink to nothing") != std::string::npos);
}

TEST_CASE("inputs: a file over the cap is refused with both sizes", "[regression]") {
    TempDir tmp;
    spit(tmp.path / "big.json", std::string(2000, 'x'));
    auto r = engine::read_text_file(tmp.path / "big.json", 1000);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("2000 bytes, over the limit of 1000") != std::string::npos);
    CHECK(engine::read_text_file(tmp.path / "big.json", 2000).value() == std::string(2000, 'x'));
}

TEST_CASE("trees: nothing below the root is read or written through a symlink", "[regression]") {
    TempDir tmp;
    fs::path outside = tmp.path / "outside";
    fs::create_directories(outside);
    spit(outside / "Dockerfile", "FROM evil\n");
    fs::path tree = tmp.path / "dockerfiles";
    fs::create_directories(tree);
    fs::create_directory_symlink(outside, tree / "v-quick");  // a committed symlink
    auto read = engine::read_file_in_tree(tree, "v-quick/Dockerfile");
    REQUIRE_FALSE(read);
    CHECK(read.error().message.find("symlink") != std::string::npos);
    // Writing below it is refused too, and nothing lands in `outside`.
    auto st = engine::write_files(tree, {{"v-quick/Dockerfile", "FROM good\n"}});
    REQUIRE_FALSE(st);
    CHECK(slurp(outside / "Dockerfile") == "FROM evil\n");
    CHECK(engine::read_file_in_tree(tree, "../outside/Dockerfile")
              .error()
              .message.find("only plain names") != std::string::npos);
}

TEST_CASE("trees: a symlink at a file's own name is refused, its target never written",
          "[regression]") {
    TempDir tmp;
    fs::path victim = tmp.path / "bashrc";
    spit(victim, "keep me\n");
    fs::path work = tmp.path / "work" / "v-quick";
    fs::create_directories(work);
    fs::create_symlink(victim, work / "Dockerfile");
    fs::create_symlink(victim, work / "build.log");
    auto st = engine::write_files(tmp.path / "work", {{"v-quick/Dockerfile", "FROM x\n"}});
    REQUIRE_FALSE(st);
    CHECK(st.error().message.find("a symlink to " + victim.string()) != std::string::npos);
    auto log = engine::OutputFile::create(tmp.path / "work", "v-quick/build.log");
    REQUIRE_FALSE(log);
    CHECK(log.error().message.find("symlink") != std::string::npos);
    CHECK(slurp(victim) == "keep me\n");
    CHECK(fs::is_symlink(work / "Dockerfile"));
    CHECK(fs::is_symlink(work / "build.log"));
    // A regular file is replaced, as before.
    fs::remove(work / "Dockerfile");
    spit(work / "Dockerfile", "old\n");
    REQUIRE(engine::write_files(tmp.path / "work", {{"v-quick/Dockerfile", "FROM x\n"}}));
    CHECK(slurp(work / "Dockerfile") == "FROM x\n");
}

TEST_CASE(
    "writers: a device, FIFO, socket, symlink or directory at the name is refused and "
    "left as it was; nothing else is written",
    "[regression]") {
    TempDir tmp;
    fs::path dir = tmp.path;
    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0644) == 0);
    fs::create_symlink("/proc/self/fd/1", dir / "stdout");
    fs::create_symlink("/dev/null", dir / "null-link");
    fs::create_directory(dir / "sub");
    int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(sock >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string sock_path = (dir / "sock").string();
    REQUIRE(sock_path.size() < sizeof addr.sun_path);
    std::memcpy(addr.sun_path, sock_path.c_str(), sock_path.size() + 1);
    REQUIRE(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    // A device node only where this process may make one (root); /dev/null is a device anyway.
    const bool made_device = ::mknod((dir / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
    struct Case {
        std::string name, kind;
    };
    std::vector<Case> cases = {{"fifo", "a FIFO"},
                               {"stdout", "a symlink to /proc/self/fd/1"},
                               {"null-link", "a symlink to /dev/null"},
                               {"sub", "a directory"},
                               {"sock", "a socket"}};
    if (made_device) cases.push_back({"null", "a character device (1:3)"});
    for (const auto& c : cases) {
        INFO(c.name);
        struct stat before {};
        REQUIRE(::lstat((dir / c.name).c_str(), &before) == 0);
        auto st = engine::write_files(dir, {{c.name, "report\n"}});
        REQUIRE_FALSE(st);
        CHECK(st.error().kind == ErrorKind::Io);
        CHECK(st.error().message.find((dir / c.name).string()) != std::string::npos);
        CHECK(st.error().message.find("it is " + c.kind) != std::string::npos);
        CHECK(st.error().message.find("only regular files") != std::string::npos);
        auto early = engine::check_output_file("--json", (dir / c.name).string());
        REQUIRE_FALSE(early);
        CHECK(early.error().kind == ErrorKind::Usage);
        CHECK(early.error().message.find(c.name == "sub" ? "is a directory" : "it is " + c.kind) !=
              std::string::npos);
        struct stat after {};
        REQUIRE(::lstat((dir / c.name).c_str(), &after) == 0);
        CHECK(after.st_mode == before.st_mode);
        CHECK(after.st_ino == before.st_ino);
        CHECK(after.st_rdev == before.st_rdev);
    }
    ::close(sock);
    // No temp file left behind, and the device itself untouched.
    for (const auto& e : fs::directory_iterator(dir))
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
    auto host_null = engine::check_output_file("--junit", "/dev/null");
    REQUIRE_FALSE(host_null);
    CHECK(host_null.error().message.find("/dev/null: it is a character device (1:3)") !=
          std::string::npos);
    CHECK(host_null.error().message.find("--junit=-") != std::string::npos);
    CHECK(fs::is_character_file("/dev/null"));
    // A missing name and a regular file are still written.
    REQUIRE(engine::write_files(dir, {{"new.json", "a"}}));
    REQUIRE(engine::write_files(dir, {{"new.json", "b"}}));
    CHECK(slurp(dir / "new.json") == "b");
    CHECK(engine::check_output_file("--json", (dir / "new.json").string()));
}

TEST_CASE(
    "render --only: never writes into a tree torchdock did not render, nor through a "
    "symlink",
    "[regression]") {
    TempDir tmp;
    fs::path foreign = tmp.path / "foreign";
    fs::create_directories(foreign);
    spit(foreign / "index.json", "{\"my\": \"own\"}");
    auto st = engine::write_into_rendered_tree(foreign, {{"index.json", "{}"}});
    REQUIRE_FALSE(st);
    CHECK(st.error().kind == ErrorKind::Config);
    CHECK(slurp(foreign / "index.json") == "{\"my\": \"own\"}");
    fs::path rendered = tmp.path / "rendered";
    REQUIRE(engine::write_tree_atomically(
        rendered, {{"index.json", "{\n  \"generator\": \"torchdock\"\n}\n"}}));
    fs::create_directory_symlink(rendered, tmp.path / "link");
    CHECK_FALSE(engine::write_into_rendered_tree(tmp.path / "link", {{"a/Dockerfile", "x"}}));
    CHECK(engine::write_into_rendered_tree(rendered, {{"a/Dockerfile", "x"}}));
    CHECK(slurp(rendered / "a" / "Dockerfile") == "x");
}

TEST_CASE("report paths are checked before any work: empty, a directory, a missing directory",
          "[regression]") {
    TempDir tmp;
    CHECK(engine::check_output_file("--json", "").error().kind == ErrorKind::Usage);
    CHECK(engine::check_output_file("--json", tmp.path.string())
              .error()
              .message.find("is a directory") != std::string::npos);
    auto missing = engine::check_output_file("--json", (tmp.path / "no" / "x.json").string());
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("does not exist") != std::string::npos);
    CHECK_FALSE(fs::exists(tmp.path / "no"));  // no silent mkdir
    CHECK(engine::check_output_file("--json", (tmp.path / "x.json").string()));
}

TEST_CASE("logs: a device is refused, a FIFO is read like a pipe", "[regression]") {
    auto r = engine::read_blocks("/dev/zero", 4096, [](std::string_view) {});
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("device") != std::string::npos);
}
