#pragma once
// The kernel audit of one ELF object: which GPU code it carries, read from its fatbins
// without a GPU. Three groups, because the loader treats them differently:
//
// * executable: `.nv_fatbin`, the fatbins the CUDA runtime registers at load (what
//   cuobjdump lists by default);
// * embedded: containers inside other allocated, non-executable PROGBITS sections, which a
//   library loads itself with cuModuleLoadData (cuBLASLt and cuDNN keep kernels in
//   `.cask_resource`, cuFFT most of its kernels in `.ldata`, cuSPARSE and CUPTI some in
//   `.rodata`); an object without a section table is searched whole, as embedded;
// * relocatable: `__nv_relfatbin`, device code kept for device linking by users of the
//   library (NCCL, NVSHMEM); never loaded as is, so not judged.
//
// The SASS and PTX that can run are the union of executable and embedded. Bounded by
// AuditLimits; nothing larger than headers is read outside the searched sections.
// Part of the kernels domain: pure, C++17, standard library only (see arch.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/kernels/arch.hpp"
#include "core/kernels/byte_source.hpp"
#include "core/kernels/fatbin.hpp"

namespace td::kernels {

struct PtxTarget {
    Arch arch;   // compute_XY[a|f]
    PtxIsa isa;  // the PTX ISA version it was written in
    bool operator==(const PtxTarget& o) const { return arch == o.arch && isa == o.isa; }
    bool operator<(const PtxTarget& o) const {
        return arch != o.arch ? arch < o.arch : isa < o.isa;
    }
};

// What an object (or one container) carries: distinct, sorted.
struct KernelImages {
    std::vector<Arch> sass;
    std::vector<PtxTarget> ptx;
    bool empty() const { return sass.empty() && ptx.empty(); }
    bool operator==(const KernelImages& o) const { return sass == o.sass && ptx == o.ptx; }
};

struct FatbinGroup {
    std::uint64_t containers = 0;
    std::uint64_t entries = 0;
    std::uint64_t sass_entries = 0;
    std::uint64_t ptx_entries = 0;
    std::uint64_t other_entries = 0;  // LTO-IR and kinds not known here
    std::uint64_t compressed_entries = 0;
    KernelImages images;
    std::vector<std::string> sections;  // where the containers were found
};

// Containers with the same images, counted: tells "every container has sm_120" from
// "only some do" without listing thousands of containers.
struct ContainerProfile {
    KernelImages images;
    std::uint64_t containers = 0;
};

struct AuditLimits {
    FatbinLimits fatbin;
    std::uint64_t max_search_bytes = std::uint64_t{4} << 30;  // per object, all sections
    std::size_t max_profiles = 64;
};

struct ObjectKernels {
    bool is_elf = false;
    std::string error;  // not an ELF object, or its section table is unreadable
    std::uint64_t size = 0;
    FatbinGroup executable, embedded, relocatable;
    std::vector<ContainerProfile> profiles;  // of executable and embedded containers
    bool profiles_truncated = false;         // more distinct profiles than max_profiles
    std::uint64_t bytes_searched = 0;
    bool truncated = false;             // a limit cut the audit short
    std::vector<std::string> problems;  // at most kMaxProblems, each "section: what"

    bool has_fatbin() const {
        return executable.containers + embedded.containers + relocatable.containers > 0;
    }
    // SASS and PTX that the driver can load: executable and embedded together.
    KernelImages runnable() const;
};

ObjectKernels audit_object(const ByteSource& src, const AuditLimits& limits = {});

// Adds `more` into `into`, keeping it distinct and sorted.
void merge_images(KernelImages& into, const KernelImages& more);

}  // namespace td::kernels
