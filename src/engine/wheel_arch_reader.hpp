#pragma once
// Reads a torch wheel's CUDA arch list from its binaries: the fatbin containers of
// torch/lib/libtorch_cuda.so, streamed from the index with range requests
// (zip_member_stream), inflated piece by piece and scanned as they pass
// (core/kernels/fatbin_stream); the list is the targets most containers carry
// (core/kernels/arch_census). The reading stops where the containers end.
//
// Cost, measured with bench/arch_list_bench.cpp: deflate cannot be skipped through, and
// `.nv_fatbin` ends late in the library (what follows, symbols and strings, compresses
// well), so the reading stops only a few MB before the member's end. torch 2.9.1+cu128:
// containers at bytes 67..982 MB of 1023 MB, stopped at deflate byte 665.4 of 670.8 MB;
// 2.11.0 and 2.14.1 (cu130): stopped at 313.0 of 319.7 MB and 348.8 of 356.0 MB.
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/kernels/arch_census.hpp"
#include "engine/kb_refresh.hpp"
#include "engine/pypi_client.hpp"
#include "engine/zip_member_stream.hpp"

namespace td::engine {

inline constexpr const char* k_torch_cuda_library = "torch/lib/libtorch_cuda.so";

struct ArchScanOptions {
    MemberStreamOptions stream;
    // false: inflate the whole member even after the containers end (to compare).
    bool stop_at_end_of_containers = true;
    // When set, gets every inflated byte (the benchmark keeps a copy to audit).
    std::function<void(const unsigned char*, std::size_t)> copy;
};

struct WheelArchScan {
    WheelArchList list;  // entries and their source
    std::string census;  // what the containers carry, in words (ArchCensus::describe)
    std::uint64_t containers = 0;
    std::uint64_t run_begin = 0, run_end = 0;  // where the containers lie in the library
    MemberStreamStats stream;
    double seconds = 0;
};

// The fatbin containers of one member of an archive, read through `fetch` and scanned as
// they pass: the census of their targets. A member without containers has an empty census.
// Errors: the reading failed, or a container is damaged or has more entries than the limit.
struct MemberFatbinScan {
    kernels::ArchCensus census;
    std::uint64_t run_begin = 0, run_end = 0;
    MemberStreamStats stream;
};
Result<MemberFatbinScan> scan_member_fatbins(const RangeFetch& fetch, std::uint64_t archive_size,
                                             const pypi::ZipEntry& member,
                                             const std::string& file_name,
                                             const ArchScanOptions& opts = {});

// The arch list of torch/lib/libtorch_cuda.so in an archive read through `fetch` (a file at hand, a
// test's bytes): `entries` is its central directory, `file_name` starts errors, `cite` the
// evidence.
Result<std::optional<WheelArchScan>> scan_archive_arch(
    const RangeFetch& fetch, std::uint64_t archive_size, const std::vector<pypi::ZipEntry>& entries,
    const std::string& file_name, const std::string& cite, const ArchScanOptions& opts = {});

// nullopt: the wheel has no torch/lib/libtorch_cuda.so (a CPU build). Errors: the wheel
// could not be read, is damaged, or its library holds no fatbin container or no target
// that most containers carry (nothing to write as its arch list).
Result<std::optional<WheelArchScan>> scan_wheel_arch(PypiClient& client,
                                                     const pypi::IndexFile& wheel,
                                                     const std::string& index_label,
                                                     const ArchScanOptions& opts = {});

// The WheelArchReader that `kb refresh --arch-lists` passes to refresh_torch_data.
class FatbinArchReader final : public WheelArchReader {
  public:
    explicit FatbinArchReader(std::string index_label, ArchScanOptions opts = {})
        : m_label(std::move(index_label)), m_opts(std::move(opts)) {}
    Result<std::optional<WheelArchList>> read(PypiClient& client,
                                              const pypi::IndexFile& wheel) override;
    // What each read found (wheel file name and scan), for the command's report.
    std::vector<std::pair<std::string, WheelArchScan>> scans() const;

  private:
    std::string m_label;
    ArchScanOptions m_opts;
    mutable std::mutex m_mutex;
    std::vector<std::pair<std::string, WheelArchScan>> m_scans;
};

}  // namespace td::engine
