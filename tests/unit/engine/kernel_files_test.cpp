#include "engine/kernel_files.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/kernels/kernel_audit.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("engine: a file audited through pread gives what the bytes in memory give") {
    auto file = td::engine::KernelFile::open(td::test::source_path("tests/data/kernels/family.o"));
    REQUIRE(file);
    const td::kernels::ByteSource& src = *file.value();
    auto k = td::kernels::audit_object(src);
    CHECK(k.executable.entries == 6);
    CHECK(k.runnable().sass.size() == 4);
    unsigned char b[4];
    CHECK_FALSE(src.read(src.size() - 2, b, sizeof b));  // past the end: refused, not short
    CHECK(src.read(0, b, sizeof b));
    CHECK(b[1] == 'E');
}

TEST_CASE("engine: a missing file or a directory is an Io error naming it") {
    auto missing = td::engine::KernelFile::open("/nonexistent/libx.so");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().kind == td::ErrorKind::Io);
    CHECK_THAT(missing.error().message, ContainsSubstring("/nonexistent/libx.so: cannot open"));
    auto dir = td::engine::KernelFile::open(td::test::source_path("tests"));
    REQUIRE_FALSE(dir);
    CHECK_THAT(dir.error().message, ContainsSubstring("not a regular file"));
}
