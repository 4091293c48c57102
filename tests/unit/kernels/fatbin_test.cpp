#include "core/kernels/fatbin.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/kernels/kernel_audit.hpp"
#include "kernel_fixtures.hpp"

using namespace td::kernels;
using namespace td::test::kernels;
using Catch::Matchers::ContainsSubstring;

namespace {

std::vector<std::string> names(const std::vector<Arch>& archs, const char* prefix) {
    std::vector<std::string> out;
    for (const auto& a : archs) out.push_back(a.name(prefix));
    return out;
}

std::vector<std::string> names(const std::vector<PtxTarget>& ptx) {
    std::vector<std::string> out;
    for (const auto& p : ptx) out.push_back(p.arch.name("compute_") + "@" + p.isa.text());
    return out;
}

ObjectKernels audit(const std::string& bytes, const AuditLimits& limits = {}) {
    MemoryByteSource src(bytes.data(), bytes.size());
    return audit_object(src, limits);
}

RegionScan scan_bytes(const std::string& bytes, RegionMode mode, std::vector<FatbinContainer>& out,
                      const FatbinLimits& limits = {}) {
    MemoryByteSource src(bytes.data(), bytes.size());
    return scan_region(src, 0, bytes.size(), mode, limits,
                       [&](const FatbinContainer& c) { out.push_back(c); });
}

}  // namespace

TEST_CASE("kernels: every nvcc fixture lists the entries cuobjdump lists, in its order") {
    auto name = GENERATE("sass_ptx", "sass_only", "ptx_only", "compress_all", "compress_none",
                         "family", "blackwell", "rdc", "multi");
    CAPTURE(name);
    auto want = oracle(name);
    REQUIRE_FALSE(want.empty());  // the oracle really lists something
    CHECK(listing(read_fixture(std::string(name) + ".o")) == want);
    CHECK(audit(read_fixture(std::string(name) + ".o")).problems.empty());
}

TEST_CASE("kernels: architecture sets, PTX ISA versions and compression of the fixtures") {
    auto k = audit(read_fixture("sass_ptx.o"));
    CHECK(k.is_elf);
    CHECK(k.error.empty());
    CHECK(k.has_fatbin());
    CHECK(names(k.executable.images.sass, "sm_") == std::vector<std::string>{"sm_75", "sm_80"});
    // nvcc 13.0 writes PTX ISA 9.0 and compresses PTX by default, not SASS.
    CHECK(names(k.executable.images.ptx) == std::vector<std::string>{"compute_80@9.0"});
    CHECK(k.executable.compressed_entries == 1);
    CHECK(k.executable.sections == std::vector<std::string>{".nv_fatbin"});

    auto all = audit(read_fixture("compress_all.o"));
    CHECK(all.executable.entries == 3);
    CHECK(all.executable.compressed_entries == 3);
    auto none = audit(read_fixture("compress_none.o"));
    CHECK(none.executable.entries == 2);
    CHECK(none.executable.compressed_entries == 0);

    auto ptx = audit(read_fixture("ptx_only.o"));
    CHECK(ptx.executable.images.sass.empty());
    CHECK(names(ptx.runnable().ptx) ==
          std::vector<std::string>{"compute_75@9.0", "compute_90@9.0"});
}

TEST_CASE("kernels: arch-specific and family-specific targets keep their suffix") {
    auto k = audit(read_fixture("family.o"));
    CHECK(names(k.executable.images.sass, "sm_") ==
          std::vector<std::string>{"sm_90a", "sm_100a", "sm_100f", "sm_120f"});
    CHECK(names(k.executable.images.ptx) ==
          std::vector<std::string>{"compute_100f@9.0", "compute_120a@9.0"});
    // Blackwell entries carry longer headers (96 to 112 bytes seen): still one entry each.
    auto b = audit(read_fixture("blackwell.o"));
    CHECK(names(b.executable.images.sass, "sm_") ==
          std::vector<std::string>{"sm_100", "sm_103", "sm_110", "sm_120", "sm_121"});
    CHECK(b.executable.entries == 6);
}

TEST_CASE("kernels: containers, profiles, relocatable and embedded fatbins") {
    auto multi = audit(read_fixture("multi.o"));
    CHECK(multi.executable.containers == 2);
    REQUIRE(multi.profiles.size() == 2);
    CHECK(names(multi.profiles[0].images.sass, "sm_") ==
          std::vector<std::string>{"sm_75", "sm_80"});
    CHECK(names(multi.profiles[1].images.sass, "sm_") ==
          std::vector<std::string>{"sm_80", "sm_90"});

    // -rdc objects keep device code for device linking only: not runnable as is.
    auto rdc = audit(read_fixture("rdc.o"));
    CHECK(rdc.has_fatbin());
    CHECK(rdc.executable.containers == 0);
    CHECK(rdc.relocatable.containers == 1);
    CHECK(rdc.runnable().empty());
    CHECK(rdc.profiles.empty());

    // A container in .rodata after other data holding a false magic (version 2): found by
    // the search, the false one skipped without a problem.
    auto emb = audit(read_fixture("embedded.o"));
    CHECK(emb.executable.containers == 0);
    CHECK(emb.embedded.containers == 1);
    CHECK(emb.embedded.sections == std::vector<std::string>{".rodata"});
    CHECK(names(emb.runnable().sass, "sm_") == std::vector<std::string>{"sm_75", "sm_86"});
    CHECK(emb.problems.empty());
    std::vector<std::string> seq;
    for (const auto& a : emb.embedded.images.sass) seq.push_back("ELF " + a.name("sm_"));
    for (const auto& p : emb.embedded.images.ptx) seq.push_back("PTX " + p.arch.name("sm_"));
    CHECK(seq == oracle("embedded"));

    auto plain = audit(read_fixture("plain.o"));
    CHECK(plain.is_elf);
    CHECK(plain.error.empty());
    CHECK_FALSE(plain.has_fatbin());
    CHECK(plain.problems.empty());
}

TEST_CASE("kernels: what is not an ELF64 little-endian object is said, not guessed") {
    CHECK(audit("").error == "too short for an ELF header");
    CHECK(audit("hello, world").error == "not an ELF file");
    CHECK_FALSE(audit("hello, world").is_elf);
    std::string elf32 = read_fixture("plain.o");
    elf32[4] = 1;
    CHECK(audit(elf32).error == "ELF32 object (only ELF64 is read)");
    std::string be = read_fixture("plain.o");
    be[5] = 2;
    CHECK_THAT(audit(be).error, ContainsSubstring("big-endian"));
    std::string shifted = read_fixture("sass_ptx.o");
    shifted[40] = '\x7f';  // e_shoff far past the end
    CHECK(audit(shifted).error == "section table outside the file");
}

TEST_CASE("kernels: a truncated copy never crashes and never passes silently") {
    const std::string full = read_fixture("sass_ptx.o");
    const auto complete = audit(full);
    for (std::size_t n = 0; n < full.size(); n += 7) {
        auto k = audit(full.substr(0, n));
        CAPTURE(n);
        // Either the object is refused, or something is reported, or (cut inside bytes
        // the audit never reads) the result is the complete one.
        if (k.error.empty() && k.problems.empty()) CHECK(k.runnable() == complete.runnable());
    }
}

TEST_CASE("kernels: malformed containers in a fatbin section are problems") {
    std::vector<FatbinContainer> got;
    SyntheticEntry ok;
    SECTION("well formed: two entries, LTO-IR counted apart") {
        SyntheticEntry ltoir;
        ltoir.kind = 8;
        auto scan = scan_bytes(container_bytes({ok, ltoir}), RegionMode::sequence, got);
        CHECK(scan.problems.empty());
        REQUIRE(got.size() == 1);
        REQUIRE(got[0].entries.size() == 2);
        CHECK(got[0].entries[1].kind == EntryKind::ltoir);
    }
    SECTION("an entry whose payload runs past the container") {
        SyntheticEntry bad = ok;
        bad.claimed_payload = 1u << 20;
        auto scan = scan_bytes(container_bytes({ok, bad}), RegionMode::sequence, got);
        CHECK(got.empty());
        REQUIRE(scan.problems.size() == 1);
        CHECK_THAT(scan.problems[0], ContainsSubstring("runs past the container's end"));
    }
    SECTION("an entry header smaller than 64 bytes") {
        SyntheticEntry bad = ok;
        bad.header_size = 8;
        auto scan = scan_bytes(container_bytes({bad}), RegionMode::sequence, got);
        REQUIRE(scan.problems.size() == 1);
        CHECK_THAT(scan.problems[0], ContainsSubstring("header size of 8"));
    }
    SECTION("an unknown container version") {
        auto scan = scan_bytes(container_bytes({ok}, 2), RegionMode::sequence, got);
        REQUIRE(scan.problems.size() == 1);
        CHECK_THAT(scan.problems[0], ContainsSubstring("has version 2"));
    }
    SECTION("a container claiming more bytes than its section has") {
        auto scan = scan_bytes(container_bytes({ok}, 1, 4096), RegionMode::sequence, got);
        REQUIRE(scan.problems.size() == 1);
        CHECK_THAT(scan.problems[0], ContainsSubstring("runs past the end of its section"));
    }
    SECTION("stray bytes after the last entry") {
        auto scan = scan_bytes(container_bytes({ok}, 1, 8) + std::string(8, '\0'),
                               RegionMode::sequence, got);
        CHECK(got.empty());
        CHECK_THAT(scan.problems.at(0), ContainsSubstring("cut off by the container's end"));
    }
    SECTION("while searching, the same garbage is simply not a container") {
        SyntheticEntry bad = ok;
        bad.claimed_payload = 1u << 20;
        auto scan = scan_bytes(container_bytes({bad}), RegionMode::search, got);
        CHECK(got.empty());
        CHECK(scan.problems.empty());
    }
}

TEST_CASE("kernels: limits cut the work and say so") {
    std::vector<FatbinContainer> got;
    SyntheticEntry e;
    const std::string two = container_bytes({e}) + container_bytes({e});
    FatbinLimits one_container;
    one_container.max_containers = 1;
    auto scan = scan_bytes(two, RegionMode::sequence, got, one_container);
    CHECK(got.size() == 1);
    CHECK(scan.truncated);

    got.clear();
    FatbinLimits one_entry;
    one_entry.max_entries_per_container = 1;
    scan_bytes(container_bytes({e, e, e}), RegionMode::sequence, got, one_entry);
    REQUIRE(got.size() == 1);
    CHECK(got[0].entries.size() == 1);
    CHECK(got[0].entries_truncated);

    AuditLimits tiny;
    tiny.max_search_bytes = 16;  // the container sits 24 bytes into .rodata
    auto k = audit(read_fixture("embedded.o"), tiny);
    CHECK(k.truncated);
    CHECK(k.embedded.containers == 0);
    CHECK(k.bytes_searched <= 16);
}

TEST_CASE("kernels: bytes two sections share are read once") {
    // embedded.o with its .symtab header rewritten to name .rodata's bytes, as ALLOC
    // PROGBITS: a damaged object whose section table repeats a range.
    std::string bytes = read_fixture("embedded.o");
    MemoryByteSource src(bytes.data(), bytes.size());
    auto elf = read_elf_sections(src);
    std::size_t rodata = 0, symtab = 0;
    for (std::size_t i = 0; i < elf.sections.size(); ++i) {
        if (elf.sections[i].name == ".rodata") rodata = i;
        if (elf.sections[i].name == ".symtab") symtab = i;
    }
    REQUIRE(rodata != 0);
    REQUIRE(symtab != 0);
    const std::uint64_t shoff = le::u64(reinterpret_cast<const unsigned char*>(bytes.data()) + 40);
    std::string hdr;
    put(hdr, 0, 4);  // sh_name: keep a valid offset below
    put(hdr, kShtProgbits, 4);
    put(hdr, kShfAlloc, 8);
    put(hdr, 0, 8);
    put(hdr, elf.sections[rodata].offset, 8);
    put(hdr, elf.sections[rodata].size, 8);
    hdr.replace(0, 4, bytes.substr(shoff + symtab * 64, 4));
    bytes.replace(shoff + symtab * 64, hdr.size(), hdr);
    auto k = audit(bytes);
    CHECK(k.embedded.containers == 1);
    CHECK(k.bytes_searched <= bytes.size());
    REQUIRE(k.problems.size() == 1);
    CHECK(k.problems[0] == ".symtab: overlaps a section read before; not read again");
}

TEST_CASE("kernels: flipped bytes anywhere in a fixture never crash the audit") {
    const std::string base = read_fixture("family.o");
    std::uint32_t state = 12345;  // a fixed LCG: the same mutations every run
    for (int round = 0; round < 400; ++round) {
        std::string m = base;
        for (int flips = 0; flips < 4; ++flips) {
            state = state * 1664525u + 1013904223u;
            m[state % m.size()] = static_cast<char>(state >> 24);
        }
        auto k = audit(m);
        CHECK(k.problems.size() <= kMaxProblems);
    }
}
