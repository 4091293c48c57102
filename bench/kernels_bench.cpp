// Kernel-audit benchmark: prints figures, asserts nothing.
// For each object: the audit (core/kernels) through pread, as probes/kernels does, and
// through an mmap, each the median wall time of 5 runs and the peak RSS of those runs
// (VmHWM, reset through /proc/self/clear_refs before each mode); then which GPU models of
// the knowledge base (data/gpus.json) the object's code can run on.
// Goal (the kernel-audit issue): libtorch_cuda.so (about 1 GB) in under 5 s and 200 MB.
// Usage: kernels_bench [--cold] [OBJECT...]  (default: /usr/local/cuda/lib64/libcublasLt.so.13)
// Warm page cache by default; --cold evicts the object's own pages before every run
// (posix_fadvise DONTNEED on that file only, nothing system-wide), so each run reads the
// disk.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/kernels/kernel_audit.hpp"
#include "core/kernels/kernel_judge.hpp"
#include "engine/kernel_files.hpp"
#include "engine/project_loader.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace tk = td::kernels;

double median(std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    return xs[xs.size() / 2];
}

// Peak resident set size (kB) since the last reset_peak_rss().
long peak_rss_kb() {
    std::ifstream in("/proc/self/status");
    std::string key;
    long value = -1;
    while (in >> key) {
        if (key == "VmHWM:") {
            in >> value;
            break;
        }
        in.ignore(1 << 12, '\n');
    }
    return value;
}

void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

struct Run {
    double seconds = 0;
    long peak_kb = 0;
    tk::ObjectKernels result;
};

bool g_cold = false;

void evict(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

template <typename Audit>
Run measure(const std::string& path, Audit audit) {
    reset_peak_rss();
    std::vector<double> times;
    Run run;
    for (int i = 0; i < 5; ++i) {
        if (g_cold) evict(path);
        auto t0 = Clock::now();
        run.result = audit();
        times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    run.seconds = median(times);
    run.peak_kb = peak_rss_kb();
    return run;
}

std::string list(const tk::KernelImages& k) {
    std::string s;
    for (const auto& a : k.sass) s += (s.empty() ? "" : " ") + a.name("sm_");
    for (const auto& p : k.ptx)
        s += (s.empty() ? "" : " ") + p.arch.name("compute_") + "(ISA " + p.isa.text() + ")";
    return s.empty() ? "none" : s;
}

int bench(const std::string& path, const td::KnowledgeBase* kb) {
    auto file = td::engine::KernelFile::open(path);
    if (!file) {
        std::fprintf(stderr, "kernels_bench: %s\n", file.error().message.c_str());
        return 1;
    }
    const tk::ByteSource& src = *file.value();
    Run pread_run = measure(path, [&] { return tk::audit_object(src); });

    // The mapping is made inside each run, so --cold can evict the pages between runs.
    bool mapped = true;
    Run mmap_run = measure(path, [&] {
        tk::ObjectKernels out;
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        void* map =
            fd >= 0 ? ::mmap(nullptr, src.size(), PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        if (fd >= 0) ::close(fd);
        if (map == MAP_FAILED) {
            mapped = false;
            return out;
        }
        tk::MemoryByteSource mem(map, static_cast<std::size_t>(src.size()));
        out = tk::audit_object(mem);
        ::munmap(map, src.size());
        return out;
    });

    const tk::ObjectKernels& k = pread_run.result;
    std::printf("%s\n", path.c_str());
    std::printf(
        "  size %.1f MB; containers: %llu executable, %llu embedded, %llu relocatable; "
        "entries %llu (%llu compressed); searched %.1f MB\n",
        static_cast<double>(k.size) / 1e6, static_cast<unsigned long long>(k.executable.containers),
        static_cast<unsigned long long>(k.embedded.containers),
        static_cast<unsigned long long>(k.relocatable.containers),
        static_cast<unsigned long long>(k.executable.entries + k.embedded.entries),
        static_cast<unsigned long long>(k.executable.compressed_entries +
                                        k.embedded.compressed_entries),
        static_cast<double>(k.bytes_searched) / 1e6);
    std::printf("  code: %s\n", list(k.runnable()).c_str());
    for (const auto& p : k.problems) std::printf("  problem: %s\n", p.c_str());
    std::printf("  pread: %.3f s median of 5%s, peak RSS %.1f MB\n", pread_run.seconds,
                g_cold ? " (cold)" : "", static_cast<double>(pread_run.peak_kb) / 1024.0);
    if (mapped)
        std::printf("  mmap:  %.3f s median of 5%s, peak RSS %.1f MB\n", mmap_run.seconds,
                    g_cold ? " (cold)" : "", static_cast<double>(mmap_run.peak_kb) / 1024.0);
    if (!kb) return 0;
    const std::string name = path.substr(path.find_last_of('/') + 1);
    for (const auto& model : kb->gpu_names()) {
        const td::GpuModel* g = kb->gpu(model);
        auto cc = g ? tk::parse_compute_capability(g->cc) : std::nullopt;
        if (!cc) continue;
        tk::GpuTarget target{g->model + " (" + g->cc + ")", *cc, std::nullopt};
        auto v = tk::judge_kernels(name, k.runnable(), target, k.profiles, !k.profiles_truncated);
        std::printf("  %-4s %s\n", v.runs() ? "ok" : "FAIL", v.message.c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--cold")
            g_cold = true;
        else
            paths.push_back(argv[i]);
    }
    if (paths.empty()) paths.push_back("/usr/local/cuda/lib64/libcublasLt.so.13");
    auto kb = td::engine::load_knowledge_base(std::string(TORCHDOCK_SOURCE_DIR) + "/data");
    if (!kb) std::fprintf(stderr, "kernels_bench: no verdicts: %s\n", kb.error().message.c_str());
    int rc = 0;
    for (const auto& p : paths) rc |= bench(p, kb ? &kb.value() : nullptr);
    return rc;
}
