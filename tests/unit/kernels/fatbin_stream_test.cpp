// core/kernels/fatbin_stream: the streaming scanner finds the same containers as the
// whole-object parser however the bytes are cut into pieces (a magic, a header, an entry
// split across pieces), stops where the run of containers ends, and turns damaged or
// cut-off input into problems.
#include "core/kernels/fatbin_stream.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/kernels/kernel_audit.hpp"
#include "kernel_fixtures.hpp"

using namespace td::kernels;
using namespace td::test::kernels;
using Catch::Matchers::ContainsSubstring;

namespace {

struct Streamed {
    std::vector<FatbinContainer> containers;
    std::vector<std::string> problems;
    bool done = false, truncated = false;
    std::uint64_t consumed = 0, run_begin = 0, run_end = 0;
};

// Feeds `bytes` in pieces of `piece` bytes (0: one piece), stopping once done, as the
// engine does; then finish().
Streamed stream(const std::string& bytes, std::size_t piece, const FatbinLimits& limits = {}) {
    Streamed out;
    FatbinStreamScanner s([&](const FatbinContainer& c) { out.containers.push_back(c); }, limits);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const std::size_t step = piece == 0 ? std::max<std::size_t>(bytes.size(), 1) : piece;
    for (std::size_t at = 0; at < bytes.size() && !s.done(); at += step)
        s.feed(p + at, std::min(step, bytes.size() - at));
    out.done = s.done();
    s.finish();
    out.problems = s.problems();
    out.truncated = s.truncated();
    out.consumed = s.consumed();
    out.run_begin = s.run_begin();
    out.run_end = s.run_end();
    return out;
}

std::vector<std::string> entries_of(const std::vector<FatbinContainer>& cs) {
    std::vector<std::string> out;
    for (const auto& c : cs)
        for (const auto& e : c.entries)
            out.push_back(std::string(e.kind == EntryKind::ptx ? "PTX " : "ELF ") +
                          e.arch.name("sm_") + " @" + std::to_string(e.offset));
    return out;
}

// What the whole-object parser finds in the same bytes (every container of every region).
std::vector<FatbinContainer> whole(const std::string& bytes, std::uint64_t from,
                                   std::uint64_t size) {
    std::vector<FatbinContainer> out;
    MemoryByteSource src(bytes.data(), bytes.size());
    scan_region(src, from, size, RegionMode::sequence, {},
                [&](const FatbinContainer& c) { out.push_back(c); });
    return out;
}

std::string junk(std::size_t n, unsigned seed) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        seed = seed * 1103515245u + 12345u;
        out.push_back(static_cast<char>((seed >> 16) & 0xff));
    }
    return out;
}

SyntheticEntry sass(std::uint32_t arch, std::uint64_t payload = 40) {
    SyntheticEntry e;
    e.arch = arch;
    e.payload = payload;
    return e;
}

}  // namespace

TEST_CASE("fatbin_stream: the nvcc fixtures give the containers of their .nv_fatbin") {
    auto name = GENERATE("sass_ptx", "sass_only", "ptx_only", "compress_all", "compress_none",
                         "family", "blackwell", "multi", "embedded");
    auto piece = GENERATE(std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{64},
                          std::size_t{333}, std::size_t{4096});
    CAPTURE(name, piece);
    const std::string bytes = read_fixture(std::string(name) + ".o");
    MemoryByteSource src(bytes.data(), bytes.size());
    auto audit = audit_object(src);
    const auto got = stream(bytes, piece);
    CHECK(got.problems.empty());
    // The same containers as the section's parser, at the same offsets.
    const auto& group = audit.executable.containers ? audit.executable : audit.embedded;
    CHECK(got.containers.size() == group.containers);
    REQUIRE_FALSE(got.containers.empty());
    const auto want = whole(bytes, got.run_begin, got.run_end - got.run_begin);
    CHECK(entries_of(got.containers) == entries_of(want));
}

TEST_CASE("fatbin_stream: a run of containers split anywhere, then an early stop") {
    // Junk before (no magic), three containers back to back, junk that is no container,
    // and a fourth container the scan must never reach.
    const std::string before = junk(1000, 7);
    const std::string run = container_bytes({sass(70), sass(80)}) +
                            container_bytes({sass(80, 4000)}) +
                            container_bytes({sass(90), sass(100, 8)});
    const std::string after = std::string(16, '\x01') + container_bytes({sass(120)});
    const std::size_t at = 1000 / 8 * 8 + 8;  // junk is not 8-aligned: pad to the boundary
    const std::string aligned = before + std::string(at - 1000, '\0') + run + after;
    REQUIRE(aligned.find(std::string("\x50\xed\x55\xba", 4)) == at);

    auto piece = GENERATE(range(std::size_t{1}, std::size_t{40}));
    CAPTURE(piece);
    const auto got = stream(aligned, piece);
    CHECK(got.problems.empty());
    CHECK(got.done);
    REQUIRE(got.containers.size() == 3);
    CHECK(got.run_begin == at);
    CHECK(got.run_end == at + run.size());
    CHECK(entries_of(got.containers) == entries_of(whole(aligned, at, run.size())));
    // Stopped in the bytes after the run: the fourth container was never fed.
    CHECK(got.consumed <= at + run.size() + 16 + piece);
}

TEST_CASE("fatbin_stream: the magic split at every byte between two pieces") {
    const std::string bytes = std::string(64, '\0') + container_bytes({sass(86)}) + "trailing";
    for (std::size_t cut = 60; cut < 64 + 20; ++cut) {
        CAPTURE(cut);
        Streamed out;
        FatbinStreamScanner s([&](const FatbinContainer& c) { out.containers.push_back(c); });
        const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
        s.feed(p, cut);
        s.feed(p + cut, bytes.size() - cut);
        s.finish();
        CHECK(s.problems().empty());
        REQUIRE(out.containers.size() == 1);
        CHECK(out.containers[0].offset == 64);
        CHECK(out.containers[0].entries.at(0).arch.number == 86);
    }
}

TEST_CASE("fatbin_stream: a stray magic in other data is not a container") {
    // A magic with a valid-looking container header but an entry of kind 77 (searching is
    // strict), then one with version 2: both skipped, the real one found.
    SyntheticEntry odd = sass(80);
    odd.kind = 77;
    const std::string bytes = container_bytes({odd}) + container_bytes({sass(75)}, 2) +
                              container_bytes({sass(86)}) + "end of it";
    auto piece = GENERATE(std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{100});
    CAPTURE(piece);
    const auto got = stream(bytes, piece);
    CHECK(got.problems.empty());
    REQUIRE(got.containers.size() == 1);
    CHECK(got.containers[0].entries.at(0).arch.number == 86);
}

TEST_CASE("fatbin_stream: cut-off or damaged input is a problem, never a crash") {
    const std::string good = container_bytes({sass(70)}) + container_bytes({sass(80, 256)});
    SECTION("the stream ends inside a container's payload") {
        auto got = stream(good.substr(0, good.size() - 100), 0);
        REQUIRE(got.problems.size() == 1);
        CHECK_THAT(got.problems[0], ContainsSubstring("the stream ends at 0x"));
        CHECK_THAT(got.problems[0], ContainsSubstring("inside the container at 0x"));
    }
    SECTION("the stream ends inside an entry header") {
        auto got = stream(good.substr(0, good.size() - 256 - 30), 3);
        REQUIRE(got.problems.size() == 1);
        CHECK_THAT(got.problems[0], ContainsSubstring("inside the container"));
    }
    SECTION("every cut of the stream: a problem, or the containers before the cut") {
        for (std::size_t n = 0; n <= good.size(); ++n) {
            auto got = stream(good.substr(0, n), 13);
            CAPTURE(n);
            if (got.problems.empty()) CHECK(got.run_end <= n);
        }
    }
    SECTION("an entry that runs past its container, in the second container") {
        SyntheticEntry bad = sass(90);
        bad.claimed_payload = 1u << 20;
        auto got = stream(container_bytes({sass(70)}) + container_bytes({bad}) + "x", 9);
        CHECK(got.done);
        REQUIRE(got.problems.size() == 1);
        CHECK_THAT(got.problems[0], ContainsSubstring("runs past the container's end"));
        CHECK(got.containers.size() == 1);
    }
    SECTION("bytes after the last entry that cannot hold one") {
        auto got = stream(container_bytes({sass(70)}, 1, 8) + std::string(8, '\0'), 0);
        REQUIRE(got.problems.size() == 1);
        CHECK_THAT(got.problems[0], ContainsSubstring("cut off by the container's end"));
    }
    SECTION("garbage: no container, no problem") {
        auto got = stream(junk(100000, 3), 4096);
        CHECK(got.containers.empty());
        CHECK(got.problems.empty());
    }
}

TEST_CASE("fatbin_stream: limits bound the work") {
    std::string run;
    for (int i = 0; i < 10; ++i) run += container_bytes({sass(80)});
    FatbinLimits few;
    few.max_containers = 4;
    auto got = stream(run, 17, few);
    CHECK(got.containers.size() == 4);
    CHECK(got.truncated);
    CHECK_THAT(got.problems.at(0), ContainsSubstring("stopped after 4 containers"));

    FatbinLimits search;
    search.max_search_bytes = 4096;
    auto lost = stream(std::string(8192, '\0') + run, 100, search);
    CHECK(lost.containers.empty());
    CHECK(lost.truncated);
    CHECK_THAT(lost.problems.at(0), ContainsSubstring("stopped searching after"));

    FatbinLimits entries;
    entries.max_entries_per_container = 1;
    auto cut = stream(container_bytes({sass(70), sass(80), sass(90)}) + run, 0, entries);
    REQUIRE(cut.containers.size() == 11);
    CHECK(cut.containers[0].entries_truncated);
    CHECK(cut.containers[0].entries.size() == 1);
}
