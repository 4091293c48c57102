#include "engine/wheel_arch_reader.hpp"

#include <chrono>

#include "core/kernels/arch_census.hpp"
#include "core/kernels/fatbin_stream.hpp"
#include "core/pypi/release_facts.hpp"
#include "util/strings.hpp"

namespace td::engine {

Result<MemberFatbinScan> scan_member_fatbins(const RangeFetch& fetch, std::uint64_t archive_size,
                                             const pypi::ZipEntry& member,
                                             const std::string& file_name,
                                             const ArchScanOptions& opts) {
    MemberFatbinScan out;
    kernels::FatbinStreamScanner scanner(
        [&](const kernels::FatbinContainer& c) { out.census.add(c); });
    auto sink = [&](const unsigned char* p, std::size_t n) {
        if (opts.copy) opts.copy(p, n);
        scanner.feed(p, n);
        return !(opts.stop_at_end_of_containers && scanner.done());
    };
    auto stats = stream_zip_member(fetch, archive_size, member, file_name, sink, opts.stream);
    if (!stats) return stats.error();
    scanner.finish();
    const std::string where = file_name + ": " + member.name;
    if (!scanner.problems().empty())
        return Error{ErrorKind::Config, where + ": " + join(scanner.problems(), "; ")};
    if (scanner.truncated())
        return Error{ErrorKind::Config, where + ": a container has more entries than the limit"};
    out.run_begin = scanner.run_begin();
    out.run_end = scanner.run_end();
    out.stream = stats.value();
    return out;
}

Result<std::optional<WheelArchScan>> scan_archive_arch(
    const RangeFetch& fetch, std::uint64_t archive_size, const std::vector<pypi::ZipEntry>& entries,
    const std::string& file_name, const std::string& cite, const ArchScanOptions& opts) {
    const auto start = std::chrono::steady_clock::now();
    const pypi::ZipEntry* member = nullptr;
    for (const auto& e : entries)
        if (e.name == k_torch_cuda_library) member = &e;
    if (!member) return std::optional<WheelArchScan>{};
    auto read = scan_member_fatbins(fetch, archive_size, *member, file_name, opts);
    if (!read) return read.error();
    const kernels::ArchCensus& census = read->census;
    const std::string where = file_name + ": " + member->name;
    if (census.containers() == 0)
        return Error{ErrorKind::Config, where + ": no CUDA fatbin container in its " +
                                            std::to_string(read->stream.inflated) + " bytes"};
    WheelArchScan scan;
    scan.list.entries = census.arch_list();
    scan.census = census.describe();
    if (scan.list.entries.empty())
        return Error{ErrorKind::Config,
                     where + ": no target is in most fatbin containers (" + scan.census + ")"};
    scan.list.source = cite + ": " + scan.census + ", from " + member->name;
    scan.containers = census.containers();
    scan.run_begin = read->run_begin;
    scan.run_end = read->run_end;
    scan.stream = read->stream;
    scan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::optional<WheelArchScan>{std::move(scan)};
}

Result<std::optional<WheelArchScan>> scan_wheel_arch(PypiClient& client,
                                                     const pypi::IndexFile& wheel,
                                                     const std::string& index_label,
                                                     const ArchScanOptions& opts) {
    const auto start = std::chrono::steady_clock::now();
    auto dir = client.wheel_directory(wheel);
    if (!dir) return dir.error();
    auto fetch = [&](std::uint64_t offset, std::uint64_t length) {
        return client.read_range(wheel, offset, length);
    };
    auto scan = scan_archive_arch(fetch, dir->archive_size, dir->entries, wheel.filename,
                                  pypi::cite_wheel(index_label, "torch", wheel), opts);
    if (scan && scan.value()) {
        // The directory's requests count too.
        scan.value()->seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return scan;
}

Result<std::optional<WheelArchList>> FatbinArchReader::read(PypiClient& client,
                                                            const pypi::IndexFile& wheel) {
    auto scan = scan_wheel_arch(client, wheel, m_label, m_opts);
    if (!scan) return scan.error();
    if (!scan.value()) return std::optional<WheelArchList>{};
    std::lock_guard<std::mutex> lock(m_mutex);
    m_scans.emplace_back(wheel.filename, *scan.value());
    return std::optional<WheelArchList>{scan.value()->list};
}

std::vector<std::pair<std::string, WheelArchScan>> FatbinArchReader::scans() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_scans;
}

}  // namespace td::engine
