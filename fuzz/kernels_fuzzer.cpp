// libFuzzer target for core/kernels: any bytes, as an ELF object, as a bare fatbin
// region (searched and walked as a sequence) and as a stream fed in pieces (fatbin_stream,
// arch_census), must give a result or problems, never a crash, hang, sanitizer report or
// out-of-range container. Built from the kernels sources
// alone: the domain depends on nothing else (probes/kernels compiles the same files).
#include <cstdint>
#include <cstdlib>

#include "core/kernels/arch_census.hpp"
#include "core/kernels/fatbin_stream.hpp"
#include "core/kernels/kernel_audit.hpp"
#include "core/kernels/kernel_judge.hpp"

namespace tk = td::kernels;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tk::MemoryByteSource src(data, size);
    tk::AuditLimits limits;
    limits.fatbin.max_containers = 256;
    limits.fatbin.max_entries_per_container = 64;
    limits.max_profiles = 8;
    tk::ObjectKernels k = tk::audit_object(src, limits);
    if (k.problems.size() > tk::kMaxProblems || k.profiles.size() > limits.max_profiles)
        std::abort();
    if (!k.is_elf && k.has_fatbin()) std::abort();
    if (k.bytes_searched > size) std::abort();
    tk::GpuTarget gpu{"fuzz", {12, 0}, tk::PtxIsa{8, 7}};
    tk::KernelVerdict v = tk::judge_kernels("fuzz.so", k.runnable(), gpu, k.profiles);
    if (v.message.empty() || v.containers_without_image > v.containers_judged) std::abort();

    for (tk::RegionMode mode : {tk::RegionMode::sequence, tk::RegionMode::search}) {
        tk::RegionScan scan =
            tk::scan_region(src, 0, size, mode, limits.fatbin, [&](const tk::FatbinContainer& c) {
                if (c.offset > size || c.size > size - c.offset || c.size < 16) std::abort();
                if (c.entries.size() > limits.fatbin.max_entries_per_container) std::abort();
                for (const auto& e : c.entries)
                    if (e.offset < c.offset + 16 ||
                        e.offset + e.header_size + e.payload_size > c.offset + c.size)
                        std::abort();
            });
        if (scan.problems.size() > tk::kMaxProblems) std::abort();
    }

    // The same bytes as a stream, in pieces of 1 to 64 bytes (the first byte says which).
    const std::size_t piece = size == 0 ? 1 : 1 + data[0] % 64;
    tk::ArchCensus census;
    std::uint64_t seen_end = 0;
    tk::FatbinStreamScanner stream(
        [&](const tk::FatbinContainer& c) {
            if (c.offset < seen_end || c.size < 16) std::abort();  // in order, no overlap
            if (c.entries.size() > limits.fatbin.max_entries_per_container) std::abort();
            for (const auto& e : c.entries)
                if (e.offset < c.offset + 16 ||
                    e.offset + e.header_size + e.payload_size > c.offset + c.size)
                    std::abort();
            seen_end = c.offset + c.size;
            census.add(c);
        },
        limits.fatbin);
    for (std::size_t at = 0; at < size && !stream.done(); at += piece)
        stream.feed(data + at, std::min(piece, size - at));
    stream.finish();
    if (stream.problems().size() > tk::kMaxProblems || !stream.done()) std::abort();
    // A container that runs past the input is a problem, never a silent result.
    if (stream.problems().empty() && seen_end > size) std::abort();
    if (census.containers() != stream.containers()) std::abort();
    if (census.describe().empty()) std::abort();
    return 0;
}
