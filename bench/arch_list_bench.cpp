// Arch-list benchmark: prints figures, asserts nothing. Reads one torch wheel's CUDA arch
// list the way `torchdock kb refresh --arch-lists` does: torch/lib/libtorch_cuda.so
// streamed by range requests, inflated piece by piece, scanned for fatbin containers, the
// reading stopped where they end. Prints the bytes read by range, the bytes inflated, the
// seconds and the arch list. Goal (knowledge-base issue): under 300 MB of range reads.
//
// --whole FILE: then reads the whole member again without stopping, keeps it in FILE,
//   reads its ELF section table and scans `.nv_fatbin` and every other section with the
//   whole-object parser (core/kernels), and says where `.nv_fatbin` lies and whether both
//   readings give the same arch list.
// --wheel-file PATH: a wheel at hand instead of the index (no network: inflation alone).
// Usage: arch_list_bench [--release 2.9.1] [--index-url URL] [--chunk-mib 8] [--ahead 2]
//                        [--whole FILE] [--wheel-file PATH]
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "core/kernels/arch_census.hpp"
#include "core/kernels/elf_sections.hpp"
#include "core/kernels/kernel_audit.hpp"
#include "core/pypi/release_facts.hpp"
#include "engine/kernel_files.hpp"
#include "engine/wheel_arch_reader.hpp"
#include "util/strings.hpp"

namespace {

using namespace td;

double mb(std::uint64_t b) { return static_cast<double>(b) / 1e6; }

// A wheel file at hand, read with pread (thread-safe).
struct LocalWheel {
    int fd = -1;
    std::uint64_t size = 0;
    Result<std::string> read(std::uint64_t offset, std::uint64_t length) const {
        std::string out(static_cast<std::size_t>(length), '\0');
        std::size_t got = 0;
        while (got < out.size()) {
            auto n =
                ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(offset + got));
            if (n <= 0) break;
            got += static_cast<std::size_t>(n);
        }
        out.resize(got);
        return out;
    }
};

void print_scan(const char* what, const engine::WheelArchScan& s) {
    std::printf(
        "%s: %.1f MB read by range in %llu requests (member: %.1f MB compressed), %.1f MB "
        "inflated of %.1f MB, %.1f s\n",
        what, mb(s.stream.bytes_fetched), static_cast<unsigned long long>(s.stream.requests),
        mb(s.stream.compressed_size), mb(s.stream.inflated), mb(s.stream.uncompressed_size),
        s.seconds);
    std::printf("  %s; %s\n",
                s.stream.stopped_early ? "stopped where the containers end"
                                       : "read to the end, CRC-32 checked",
                s.stream.compressed_used < s.stream.compressed_size
                    ? ("deflate data used: " + std::to_string(s.stream.compressed_used) + " of " +
                       std::to_string(s.stream.compressed_size) + " bytes")
                          .c_str()
                    : "all deflate data used");
    std::printf("  containers: %llu at bytes %llu..%llu of the library\n",
                static_cast<unsigned long long>(s.containers),
                static_cast<unsigned long long>(s.run_begin),
                static_cast<unsigned long long>(s.run_end));
    std::printf("  arch list: %s\n  %s\n", join(s.list.entries, ";").c_str(),
                s.list.source.c_str());
}

// The whole library in `path`: where `.nv_fatbin` lies and what the whole-object parser
// finds there and elsewhere.
void audit_whole(const std::string& path, const engine::WheelArchScan& streamed) {
    auto file = engine::KernelFile::open(path);
    if (!file) {
        std::printf("whole: %s\n", file.error().message.c_str());
        return;
    }
    const auto& src = *file.value();
    auto elf = kernels::read_elf_sections(src);
    kernels::ArchCensus fatbin_section, elsewhere;
    for (const auto& s : elf.sections) {
        const bool executable = s.name == ".nv_fatbin";
        if (!executable && !(s.type == kernels::kShtProgbits && (s.flags & kernels::kShfAlloc) &&
                             !(s.flags & kernels::kShfExecinstr)))
            continue;
        auto& census = executable ? fatbin_section : elsewhere;
        kernels::scan_region(
            src, s.offset, s.size,
            executable ? kernels::RegionMode::sequence : kernels::RegionMode::search, {},
            [&](const kernels::FatbinContainer& c) { census.add(c); });
        if (executable)
            std::printf(
                "whole: .nv_fatbin at bytes %llu..%llu of %llu (%.1f%%..%.1f%%)\n",
                static_cast<unsigned long long>(s.offset),
                static_cast<unsigned long long>(s.offset + s.size),
                static_cast<unsigned long long>(src.size()),
                100.0 * static_cast<double>(s.offset) / static_cast<double>(src.size()),
                100.0 * static_cast<double>(s.offset + s.size) / static_cast<double>(src.size()));
    }
    std::printf("whole: .nv_fatbin: %llu containers, arch list %s: %s\n",
                static_cast<unsigned long long>(fatbin_section.containers()),
                join(fatbin_section.arch_list(), ";").c_str(), fatbin_section.describe().c_str());
    std::printf("whole: other sections: %llu containers\n",
                static_cast<unsigned long long>(elsewhere.containers()));
    auto audit = kernels::audit_object(src);
    std::printf("whole: kernel audit: %llu executable + %llu embedded containers, problems: %zu\n",
                static_cast<unsigned long long>(audit.executable.containers),
                static_cast<unsigned long long>(audit.embedded.containers), audit.problems.size());
    const bool same = fatbin_section.arch_list() == streamed.list.entries &&
                      fatbin_section.describe() + ", from " + engine::k_torch_cuda_library ==
                          streamed.list.source.substr(streamed.list.source.find("): ") + 3) &&
                      elsewhere.containers() == 0;
    std::printf("whole: same arch list and counts as the stopped stream: %s\n",
                same ? "yes" : "NO");
}

}  // namespace

int main(int argc, char** argv) {
    std::string release = "2.9.1", index_url, label = "PyPI";
    std::string whole, wheel_file;
    engine::ArchScanOptions opts;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i], v = argv[i + 1];
        if (a == "--release") release = v;
        if (a == "--index-url") index_url = v, label = "the package index";
        if (a == "--chunk-mib") opts.stream.chunk_bytes = std::stoull(v) << 20;
        if (a == "--ahead") opts.stream.ahead = std::stoi(v);
        if (a == "--whole") whole = v;
        if (a == "--wheel-file") wheel_file = v;
    }
    std::printf("chunks of %llu MiB, %d ahead\n",
                static_cast<unsigned long long>(opts.stream.chunk_bytes >> 20), opts.stream.ahead);

    if (index_url.empty() && wheel_file.empty()) {
        auto index = engine::pip_default_index("pass --index-url");
        if (!index) {
            std::printf("arch_list_bench: skipped, %s\n", index.error().message.c_str());
            return 0;
        }
        index_url = index.value();
    }
    std::function<Result<std::optional<engine::WheelArchScan>>(const engine::ArchScanOptions&)> run;
    engine::PypiClient client(index_url);
    LocalWheel local;
    pypi::IndexFile wheel;
    std::vector<pypi::ZipEntry> entries;
    if (!wheel_file.empty()) {
        local.fd = ::open(wheel_file.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat st {};
        if (local.fd < 0 || ::fstat(local.fd, &st) != 0) {
            std::printf("arch_list_bench: cannot open %s\n", wheel_file.c_str());
            return 2;
        }
        local.size = static_cast<std::uint64_t>(st.st_size);
        auto tail_len = std::min<std::uint64_t>(local.size, pypi::k_zip_tail_bytes);
        auto tail = local.read(local.size - tail_len, tail_len);
        auto loc = pypi::locate_central_directory(tail.value(), local.size);
        if (!loc) return std::printf("arch_list_bench: %s\n", loc.error().message.c_str()), 2;
        auto cd = local.read(loc->offset, loc->size);
        auto parsed = pypi::parse_central_directory(cd.value());
        if (!parsed) return std::printf("arch_list_bench: %s\n", parsed.error().message.c_str()), 2;
        entries = parsed.value();
        std::string name = wheel_file.substr(wheel_file.rfind('/') + 1);
        std::printf("wheel: %s (a file at hand, %.1f MB)\n", name.c_str(), mb(local.size));
        run = [&, name](const engine::ArchScanOptions& o) {
            auto fetch = [&](std::uint64_t off, std::uint64_t len) { return local.read(off, len); };
            return engine::scan_archive_arch(fetch, local.size, entries, name,
                                             "file " + name + " (hash not computed)", o);
        };
    } else {
        auto torch = client.project("torch");
        if (!torch) {
            std::printf("arch_list_bench: skipped, the index could not be read: %s\n",
                        torch.error().message.c_str());
            return 0;
        }
        auto rw = pypi::release_wheels(torch.value(), release);
        if (!rw) return std::printf("arch_list_bench: %s\n", rw.error().message.c_str()), 2;
        wheel = *rw->metadata_wheel;
        std::printf("wheel: %s (%.1f MB, sha256 %s)\n", wheel.filename.c_str(), mb(wheel.size),
                    wheel.sha256.c_str());
        run = [&](const engine::ArchScanOptions& o) {
            return engine::scan_wheel_arch(client, wheel, label, o);
        };
    }
    auto scan = run(opts);
    if (!scan) return std::printf("arch_list_bench: %s\n", scan.error().message.c_str()), 1;
    if (!scan.value()) return std::printf("no %s in the wheel\n", engine::k_torch_cuda_library), 0;
    print_scan("stopped stream", *scan.value());
    if (whole.empty()) return 0;

    std::ofstream out(whole, std::ios::binary | std::ios::trunc);
    engine::ArchScanOptions all = opts;
    all.stop_at_end_of_containers = false;
    all.copy = [&](const unsigned char* p, std::size_t n) {
        out.write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(n));
    };
    auto full = run(all);
    out.close();
    if (!full || !full.value())
        return std::printf("whole: %s\n", full ? "no member" : full.error().message.c_str()), 1;
    print_scan("whole member", *full.value());
    audit_whole(whole, *scan.value());
    return 0;
}
