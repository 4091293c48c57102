#pragma once
// The section table of an ELF64 little-endian object (a CUDA shared library, an extension
// module): name, file range, type and flags of each section. That is all the kernel
// audit needs: fatbins live in sections (`.nv_fatbin`, `__nv_relfatbin`, and some
// libraries keep more in `.rodata`, `.ldata` or `.cask_resource`).
//
// Bounded on any input: at most kMaxSections sections, names of at most 256 bytes, every
// range checked against the source's size. Malformed input gives an error string.
// Part of the kernels domain: pure, C++17, standard library only (see arch.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/kernels/byte_source.hpp"

namespace td::kernels {

struct ElfSection {
    std::string name;
    std::uint32_t type = 0;     // SHT_* (1 PROGBITS, 8 NOBITS, ...)
    std::uint64_t flags = 0;    // SHF_* (0x2 ALLOC, 0x4 EXECINSTR, ...)
    std::uint64_t offset = 0;   // file offset
    std::uint64_t size = 0;     // bytes in the file (0 for NOBITS)
    bool outside_file = false;  // its range ends past the end of the file (size set to 0)
};

struct ElfSections {
    bool is_elf = false;  // starts with \x7fELF
    std::string error;    // empty when the section table was read; else why not
    std::uint16_t machine = 0;
    std::vector<ElfSection> sections;
};

inline constexpr std::size_t kMaxSections = 65536;
inline constexpr std::uint32_t kShtProgbits = 1;
inline constexpr std::uint32_t kShtNobits = 8;
inline constexpr std::uint64_t kShfAlloc = 0x2;
inline constexpr std::uint64_t kShfExecinstr = 0x4;

// Reads the section headers and their names. An object without a section table (e_shoff
// 0) gives is_elf true, no error and no sections.
ElfSections read_elf_sections(const ByteSource& src);

}  // namespace td::kernels
