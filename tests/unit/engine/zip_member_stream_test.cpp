// engine/zip_member_stream with the fatbin stream scanner: a synthetic wheel whose
// torch/lib/libtorch_cuda.so holds an nvcc-built object between other bytes is read in
// ranged chunks of many sizes, inflated piece by piece, and the reading stops where the
// containers end; damaged, cut-off and unreadable archives are clear errors.
#include "engine/zip_member_stream.hpp"

#include <atomic>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/kernels/fatbin_stream.hpp"
#include "core/pypi/zip_directory.hpp"
#include "kernels/kernel_fixtures.hpp"
#include "zip_fixture.hpp"

using namespace td;
using namespace td::engine;
using Catch::Matchers::ContainsSubstring;

namespace {

const char* const k_member = "torch/lib/libtorch_cuda.so";

// Pseudo-random bytes (deflate stores them) and text (deflate compresses it), so the
// stream has both kinds of blocks.
std::string filler(std::size_t n, unsigned seed) {
    std::string out;
    while (out.size() < n) {
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 20) % 4 == 0)
            out += "void at::native::kernel(float*, int) const; // " + std::to_string(seed % 97);
        else
            for (int i = 0; i < 64; ++i, seed = seed * 1103515245u + 12345u)
                out.push_back(static_cast<char>(seed >> 16));
    }
    out.resize(n);
    return out;
}

// 200 KB, then multi.o (two containers in .nv_fatbin) at an 8-aligned offset, then 300 KB.
std::string library() {
    return filler(200 * 1024, 1) + td::test::kernels::read_fixture("multi.o") +
           filler(300 * 1024, 2);
}

struct Wheel {
    std::string bytes;
    pypi::ZipEntry member;
};

Wheel make_wheel(const std::string& lib, int method = 8) {
    Wheel w;
    w.bytes = td::test::zip::archive({{"torch/__init__.py", std::string(5000, '#'), 8},
                                      {k_member, lib, method},
                                      {"torch-9.9.dist-info/METADATA", "Name: torch\n", 8}});
    auto loc = pypi::locate_central_directory(w.bytes, w.bytes.size());
    REQUIRE(loc);
    auto entries =
        pypi::parse_central_directory(std::string_view(w.bytes).substr(loc->offset, loc->size));
    REQUIRE(entries);
    for (const auto& e : entries.value())
        if (e.name == k_member) w.member = e;
    REQUIRE(w.member.name == k_member);
    return w;
}

// Range reads of an in-memory archive, counted.
struct MemoryFetch {
    const std::string& bytes;
    std::atomic<long> calls{0};
    Result<std::string> operator()(std::uint64_t offset, std::uint64_t length) {
        ++calls;
        if (offset > bytes.size()) return std::string();
        return bytes.substr(offset, length);
    }
};

struct MemberScan {
    Result<MemberStreamStats> stats = Error{ErrorKind::Config, "not run"};
    std::vector<td::kernels::FatbinContainer> containers;
    std::vector<std::string> problems;
    std::string copy;
};

MemberScan scan(const Wheel& w, const MemberStreamOptions& opts, bool stop = true,
                RangeFetch fetch = nullptr) {
    MemberScan out;
    td::kernels::FatbinStreamScanner scanner(
        [&](const td::kernels::FatbinContainer& c) { out.containers.push_back(c); });
    MemoryFetch memory{w.bytes};
    if (!fetch) fetch = [&](std::uint64_t o, std::uint64_t l) { return memory(o, l); };
    out.stats = stream_zip_member(
        fetch, w.bytes.size(), w.member, "torch-9.9-cp313-cp313-linux_x86_64.whl",
        [&](const unsigned char* p, std::size_t n) {
            out.copy.append(reinterpret_cast<const char*>(p), n);
            scanner.feed(p, n);
            return !(stop && scanner.done());
        },
        opts);
    scanner.finish();
    out.problems = scanner.problems();
    return out;
}

}  // namespace

TEST_CASE("zip_member_stream: chunks of any size find the containers and stop after them") {
    const std::string lib = library();
    const Wheel w = make_wheel(lib);
    auto chunk = GENERATE(std::uint64_t{1000}, std::uint64_t{4096}, std::uint64_t{65536},
                          std::uint64_t{1} << 20);
    auto ahead = GENERATE(0, 2);
    CAPTURE(chunk, ahead);
    MemberStreamOptions opts;
    opts.chunk_bytes = chunk;
    opts.ahead = ahead;
    auto got = scan(w, opts);
    REQUIRE(got.stats);
    CHECK(got.problems.empty());
    REQUIRE(got.containers.size() == 2);
    CHECK(got.containers[0].offset > 200 * 1024);
    CHECK(got.stats->stopped_early);
    CHECK_FALSE(got.stats->crc_checked);
    // The 300 KB after the object were not all inflated, nor (for small chunks) fetched.
    CHECK(got.stats->inflated < lib.size());
    CHECK(got.copy == lib.substr(0, got.copy.size()));
    if (chunk <= 65536) CHECK(got.stats->bytes_fetched < w.member.compressed_size);
    CHECK(got.stats->compressed_used <= got.stats->bytes_fetched);
}

TEST_CASE("zip_member_stream: read to its end, the member is whole and its CRC checked") {
    const std::string lib = library();
    auto method = GENERATE(0, 8);
    CAPTURE(method);
    const Wheel w = make_wheel(lib, method);
    MemberStreamOptions opts;
    opts.chunk_bytes = 7777;
    auto got = scan(w, opts, false);
    REQUIRE(got.stats);
    CHECK(got.copy == lib);
    CHECK(got.stats->crc_checked);
    CHECK_FALSE(got.stats->stopped_early);
    CHECK(got.stats->inflated == lib.size());
    CHECK(got.stats->compressed_used == w.member.compressed_size);
    CHECK(got.containers.size() == 2);
}

TEST_CASE("zip_member_stream: damaged, cut-off and unreadable members are clear errors") {
    const std::string lib = library();
    Wheel w = make_wheel(lib);
    MemberStreamOptions opts;
    opts.chunk_bytes = 30000;
    SECTION("corrupt deflate data: an error naming the member, whatever byte is hit") {
        const Wheel good = w;
        for (std::uint64_t at :
             {std::uint64_t{100}, good.member.compressed_size / 3, good.member.compressed_size / 2,
              good.member.compressed_size - 10}) {
            Wheel bad = good;
            auto data = good.member.local_header_offset + 30 + good.member.name.size() + 5;
            for (int i = 0; i < 8; ++i) bad.bytes[data + at + i] ^= '\x5a';
            auto got = scan(bad, opts, false);
            CAPTURE(at);
            REQUIRE_FALSE(got.stats);
            CHECK(got.stats.error().kind == ErrorKind::Config);
            CHECK_THAT(got.stats.error().message,
                       ContainsSubstring("torch-9.9-cp313-cp313-linux_x86_64.whl: " +
                                         std::string(k_member)));
        }
    }
    SECTION("the directory records less data than the stream needs") {
        w.member.compressed_size /= 2;
        auto got = scan(w, opts, false);
        REQUIRE_FALSE(got.stats);
        CHECK_THAT(got.stats.error().message, ContainsSubstring("deflate stream is cut off"));
    }
    SECTION("the directory records a smaller size than the data inflates to") {
        w.member.uncompressed_size = 1000;
        auto got = scan(w, opts, false);
        REQUIRE_FALSE(got.stats);
        CHECK_THAT(got.stats.error().message, ContainsSubstring("more than its recorded 1000"));
    }
    SECTION("a wrong CRC-32") {
        w.member.crc32 ^= 1;
        auto got = scan(w, opts, false);
        REQUIRE_FALSE(got.stats);
        CHECK_THAT(got.stats.error().message, ContainsSubstring("fails its CRC-32 check"));
    }
    SECTION("a data range past the archive's end") {
        w.member.compressed_size = w.bytes.size();
        auto got = scan(w, opts, false);
        REQUIRE_FALSE(got.stats);
        CHECK_THAT(got.stats.error().message, ContainsSubstring("runs past the archive's end"));
    }
    SECTION("a local header offset that points elsewhere") {
        w.member.local_header_offset += 3;
        auto got = scan(w, opts, false);
        REQUIRE_FALSE(got.stats);
        CHECK_THAT(got.stats.error().message, ContainsSubstring("bad local header"));
    }
    SECTION("a compression method other than stored and deflate") {
        w.member.method = 12;
        auto got = scan(w, opts, false);
        REQUIRE_FALSE(got.stats);
        CHECK_THAT(got.stats.error().message, ContainsSubstring("compression method 12"));
    }
    SECTION("a server that answers short") {
        const std::string cut = w.bytes.substr(0, w.bytes.size() / 2);
        MemoryFetch short_fetch{cut};
        auto got = scan(w, opts, false,
                        [&](std::uint64_t o, std::uint64_t l) { return short_fetch(o, l); });
        REQUIRE_FALSE(got.stats);
        CHECK(got.stats.error().kind == ErrorKind::Environment);
        CHECK_THAT(got.stats.error().message, ContainsSubstring("got "));
    }
    SECTION("a range request that fails") {
        std::atomic<int> calls{0};
        auto got =
            scan(w, opts, false, [&](std::uint64_t o, std::uint64_t l) -> Result<std::string> {
                if (++calls > 3) return Error{ErrorKind::Environment, "connection reset"};
                return w.bytes.substr(o, l);
            });
        REQUIRE_FALSE(got.stats);
        CHECK(got.stats.error().message == "connection reset");
    }
}
