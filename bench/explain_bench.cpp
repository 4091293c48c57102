// explain benchmark: prints figures, asserts nothing.
//  1. Streaming: writes a generated log of --mb MiB (default 1024) to a temporary file
//     (training-log lines with timestamps and rank prefixes, ANSI colours, tqdm progress bars
//     joined by lone CRs, NCCL INFO lines; the failure on the last line), then reads it in
//     blocks through engine::read_blocks into a LogScanner, as `torchdock explain` does:
//     MB/s and this process's peak RSS.
//  2. Whole process (with --binary PATH): `torchdock explain FILE` and the same log through a
//     pipe (`explain -`): seconds and the child's peak RSS (wait4).
//  3. The corpus (tests/data/explain_corpus): time per log, mean and slowest.
// First it prints how long loading the data files takes (what every `explain` pays at start).
// Usage: explain_bench [--mb N] [--binary PATH] [--keep FILE]
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/diagnose/explain.hpp"
#include "diagnose/explain_corpus.hpp"
#include "engine/files.hpp"
#include "engine/project_loader.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

double peak_rss_mib(const rusage& ru) { return static_cast<double>(ru.ru_maxrss) / 1024.0; }

// Writes `mib` MiB of log to `path` in 1 MiB pieces; the failure is the last line.
void write_log(const fs::path& path, std::size_t mib) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::size_t target = mib << 20;
    std::size_t written = 0, step = 0;
    std::string piece;
    while (written < target) {
        piece.clear();
        while (piece.size() < (1u << 20)) {
            ++step;
            std::string ts = "2026-05-0" + std::to_string(1 + step % 9) +
                             "T12:" + std::to_string(10 + step % 50) + ":01.123Z ";
            switch (step % 8) {
                case 0:
                    for (int p = 0; p < 100; p += 5)  // a tqdm bar: lone CRs, no newline
                        piece += "Epoch 3: " + std::to_string(p) + "%|#####     | " +
                                 std::to_string(step % 1000) + "/1000 [00:12<00:40, 3.1it/s]\r";
                    piece += "\n";
                    break;
                case 1:
                    piece += ts + "[rank" + std::to_string(step % 8) +
                             "]: \x1b[32mINFO\x1b[0m step " + std::to_string(step) +
                             " loss 2.3456 lr 3.0e-04 grad_norm 0.873 tokens/s 182345.6\n";
                    break;
                case 2:
                    piece += "node-" + std::to_string(step % 4) + ":1234:1290 [" +
                             std::to_string(step % 8) +
                             "] NCCL INFO Channel 03/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n";
                    break;
                case 3:
                    piece += "pod/trainer-worker-" + std::to_string(step % 16) + " " + ts +
                             "WARNING torch/utils/data/dataloader.py:558: UserWarning: This "
                             "DataLoader will create 16 worker processes in total.\n";
                    break;
                default:
                    piece += ts + "0: [default0]:iteration " + std::to_string(step) +
                             "/ 100000 | consumed samples: 4096 | elapsed time per iteration "
                             "(ms): 812.3 | learning rate: 2.999E-04 | global batch size: 512\n";
            }
        }
        out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
        written += piece.size();
    }
    out << "[rank0]: ImportError: libcudart.so.12: cannot open shared object file: No such "
           "file or directory\n";
}

struct ChildRun {
    double seconds = -1, rss_mib = -1;
    int status = -1;
};

// Runs `torchdock explain ARG`; with `pipe_from`, streams that file into its stdin.
ChildRun run_child(const std::string& binary, const std::string& arg, const fs::path* pipe_from) {
    int fds[2] = {-1, -1};
    if (pipe_from && ::pipe(fds) != 0) return {};
    auto start = Clock::now();
    pid_t pid = ::fork();
    if (pid == 0) {
        if (pipe_from) {
            ::dup2(fds[0], 0);
            ::close(fds[0]);
            ::close(fds[1]);
        }
        int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::execl(binary.c_str(), binary.c_str(), "explain", arg.c_str(),
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    if (pipe_from) {
        ::close(fds[0]);
        std::ifstream in(*pipe_from, std::ios::binary);
        std::vector<char> buf(1 << 20);
        while (in) {
            in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
            for (std::streamsize off = 0, n = in.gcount(); off < n;) {
                ssize_t w = ::write(fds[1], buf.data() + off, static_cast<std::size_t>(n - off));
                if (w <= 0) break;
                off += w;
            }
        }
        ::close(fds[1]);
    }
    ChildRun r;
    rusage ru{};
    if (::wait4(pid, &r.status, 0, &ru) != pid) return {};
    r.seconds = seconds_since(start);
    r.rss_mib = peak_rss_mib(ru);
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t mib = 1024;
    std::string binary, keep;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--mb" && i + 1 < argc)
            mib = std::stoul(argv[++i]);
        else if (a == "--binary" && i + 1 < argc)
            binary = argv[++i];
        else if (a == "--keep" && i + 1 < argc)
            keep = argv[++i];
        else {
            std::fprintf(stderr, "usage: explain_bench [--mb N] [--binary PATH] [--keep FILE]\n");
            return 2;
        }
    }
    const fs::path root = TORCHDOCK_SOURCE_DIR;
    auto kb = td::engine::load_knowledge_base(root / "data");
    auto t_load = Clock::now();
    auto sigs = td::engine::load_error_signatures(root / "data");
    double load_s = seconds_since(t_load);
    if (!kb || !sigs) {
        std::fprintf(stderr, "explain_bench: %s\n",
                     (!kb ? kb.error() : sigs.error()).message.c_str());
        return 2;
    }
    std::size_t catalog_entries = 0;
    for (const auto& s : sigs->signatures) catalog_entries += s.catalog ? 1 : 0;
    std::printf(
        "signatures and entries: %zu (%zu from catalogs), templates: %zu, anchor automaton "
        "states: %zu; loading them (error_signatures/, vocabularies/, catalogs/): %.0f ms\n",
        sigs->signatures.size(), catalog_entries, sigs->templates.size(), sigs->anchors.states(),
        load_s * 1000.0);

    // 1. Streaming in-process.
    fs::path log = keep.empty() ? fs::temp_directory_path() /
                                      ("explain_bench_" + std::to_string(::getpid()) + ".log")
                                : fs::path(keep);
    auto t0 = Clock::now();
    write_log(log, mib);
    double bytes = static_cast<double>(fs::file_size(log));
    std::printf("generated %.0f MiB log in %.1f s (%s)\n", bytes / 1048576.0, seconds_since(t0),
                log.c_str());
    t0 = Clock::now();
    td::LogScanner scanner(sigs.value());
    auto read = td::engine::read_blocks(log.string(), 256 * 1024,
                                        [&](std::string_view b) { scanner.feed(b); });
    scanner.finish();
    auto found = scanner.explanations(nullptr, kb.value());
    double secs = seconds_since(t0);
    rusage self{};
    ::getrusage(RUSAGE_SELF, &self);
    std::printf(
        "in-process stream: %.0f MiB, %llu lines in %.2f s = %.0f MB/s; found %s; peak "
        "RSS of this process %.1f MiB\n",
        bytes / 1048576.0, static_cast<unsigned long long>(scanner.lines()), secs,
        bytes / 1e6 / secs, found.empty() ? "nothing" : found.front().id.c_str(),
        peak_rss_mib(self));
    if (!read) std::printf("read error: %s\n", read.error().message.c_str());

    // 2. Whole process.
    if (!binary.empty()) {
        ChildRun f = run_child(binary, log.string(), nullptr);
        std::printf("torchdock explain FILE: %.2f s = %.0f MB/s, peak RSS %.1f MiB, exit %d\n",
                    f.seconds, bytes / 1e6 / f.seconds, f.rss_mib, WEXITSTATUS(f.status));
        ChildRun p = run_child(binary, "-", &log);
        std::printf("torchdock explain - (pipe): %.2f s = %.0f MB/s, peak RSS %.1f MiB, exit %d\n",
                    p.seconds, bytes / 1e6 / p.seconds, p.rss_mib, WEXITSTATUS(p.status));
    }
    if (keep.empty()) fs::remove(log);

    // 3. The corpus.
    auto corpus = td::test::load_corpus(root / "tests/data/explain_corpus");
    std::vector<double> per_log;
    std::string slowest;
    for (const auto& c : corpus) {
        constexpr int k_runs = 20;
        auto start = Clock::now();
        for (int r = 0; r < k_runs; ++r)
            (void)td::explain_log(c.log, sigs.value(), nullptr, kb.value());
        per_log.push_back(seconds_since(start) / k_runs);
        if (per_log.back() >= *std::max_element(per_log.begin(), per_log.end())) slowest = c.file;
    }
    if (!per_log.empty()) {
        double sum = 0;
        for (double s : per_log) sum += s;
        std::printf("corpus: %zu logs, mean %.1f us per log, slowest %.1f us (%s)\n",
                    per_log.size(), sum / static_cast<double>(per_log.size()) * 1e6,
                    *std::max_element(per_log.begin(), per_log.end()) * 1e6, slowest.c_str());
    }
    return 0;
}
