#include "engine/files.hpp"

#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
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
