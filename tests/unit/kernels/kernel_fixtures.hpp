#pragma once
// Helpers of the kernel-audit tests: the nvcc-built fixtures in tests/data/kernels/ (made
// by make_fixtures.sh) and their cuobjdump listings, and a builder of synthetic fatbin
// containers for the cases nvcc does not produce (malformed ones).
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/kernels/elf_sections.hpp"
#include "core/kernels/fatbin.hpp"
#include "test_support.hpp"

namespace td::test::kernels {

inline std::string read_fixture(const std::string& name) {
    std::ifstream in(source_path("tests/data/kernels/" + name), std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// cuobjdump --list-elf --list-ptx, as make_fixtures.sh reduced it: "ELF 1 sm_75" lines,
// in the order cuobjdump walks the entries. Returns "ELF sm_75", "PTX sm_80", ...
inline std::vector<std::string> oracle(const std::string& name) {
    std::istringstream in(read_fixture(name + ".cuobjdump.txt"));
    std::vector<std::string> out;
    std::string kind, index, arch;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        if (words >> kind >> index >> arch && (kind == "ELF" || kind == "PTX"))
            out.push_back(kind + " " + arch);
    }
    return out;
}

// The same list from our parser: the entries of `.nv_fatbin` (or, when there is none,
// `__nv_relfatbin`, as cuobjdump does), in order. cuobjdump names an sm_100f cubin
// "sm_100" (it prints the family suffix only for PTX), so ours is written the same way.
inline std::vector<std::string> listing(const std::string& bytes,
                                        std::size_t* containers = nullptr) {
    td::kernels::MemoryByteSource src(bytes.data(), bytes.size());
    auto elf = td::kernels::read_elf_sections(src);
    std::vector<std::string> out;
    std::size_t count = 0;
    for (const char* wanted : {".nv_fatbin", "__nv_relfatbin"}) {
        for (const auto& s : elf.sections) {
            if (s.name != wanted) continue;
            td::kernels::scan_region(
                src, s.offset, s.size, td::kernels::RegionMode::sequence, {},
                [&](const td::kernels::FatbinContainer& c) {
                    ++count;
                    for (const auto& e : c.entries) {
                        auto a = e.arch;
                        if (e.kind == td::kernels::EntryKind::sass) {
                            if (a.suffix == td::kernels::ArchSuffix::family_specific)
                                a.suffix = td::kernels::ArchSuffix::none;
                            out.push_back("ELF " + a.name("sm_"));
                        } else if (e.kind == td::kernels::EntryKind::ptx) {
                            out.push_back("PTX " + a.name("sm_"));
                        }
                    }
                });
        }
        if (!out.empty()) break;
    }
    if (containers) *containers = count;
    return out;
}

// Little-endian writers for synthetic containers.
inline void put(std::string& b, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

struct SyntheticEntry {
    std::uint16_t kind = 2;
    std::uint32_t arch = 80;
    std::uint64_t flags = 0x11;
    std::uint16_t major = 1, minor = 8;
    std::uint32_t header_size = 64;
    std::uint64_t payload = 8;                          // bytes of payload (zeros)
    std::uint64_t claimed_payload = ~std::uint64_t{0};  // written size; default: payload
};

inline std::string entry_bytes(const SyntheticEntry& e) {
    std::string b;
    put(b, e.kind, 2);
    put(b, 0x0101, 2);
    put(b, e.header_size, 4);
    put(b, e.claimed_payload == ~std::uint64_t{0} ? e.payload : e.claimed_payload, 8);
    put(b, 0, 4);
    put(b, 0, 4);
    put(b, e.minor, 2);
    put(b, e.major, 2);
    put(b, e.arch, 4);
    put(b, 0, 8);
    put(b, e.flags, 8);
    put(b, 0, 16);
    b.append(e.header_size > 64 ? e.header_size - 64 : 0, '\0');
    b.append(static_cast<std::size_t>(e.payload), '\0');
    return b;
}

inline std::string container_bytes(const std::vector<SyntheticEntry>& entries,
                                   std::uint16_t version = 1, std::int64_t size_delta = 0) {
    std::string body;
    for (const auto& e : entries) body += entry_bytes(e);
    std::string b;
    put(b, td::kernels::kFatbinMagic, 4);
    put(b, version, 2);
    put(b, 16, 2);
    put(b, static_cast<std::uint64_t>(static_cast<std::int64_t>(body.size()) + size_delta), 8);
    return b + body;
}

}  // namespace td::test::kernels
