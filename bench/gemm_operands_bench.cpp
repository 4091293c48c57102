// How long probe-gemm takes to make its timing operands on the host (the alternative was a
// device kernel or cuRAND, which the dlopen-only probes cannot link): both 8192 x 8192
// operands per format, on one thread and on all (at most 16), plus the entropy statistics and
// the CRC-32 of the operand files. Prints seconds; compare them with the 12 s a sustained
// timing of one dtype takes.  Usage: gemm_operands_bench [N=8192]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "operand_data.hpp"

using namespace gemm;

namespace {
double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 8192;
    const std::size_t count = n * n;
    const unsigned all = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
    std::printf("operands %zux%zu (A and B), %u hardware threads\n", n, n, all);
    for (const Format* f : {&kF32, &kF16, &kBF16, &kE4M3}) {
        double gen[2] = {0, 0};
        std::vector<unsigned char> a;
        for (int i = 0; i < 2; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            a = uniform_operand(*f, count, 1, i == 0 ? 1 : all);
            const auto b = uniform_operand(*f, count, 2, i == 0 ? 1 : all);
            gen[i] = since(t0);
        }
        auto t0 = std::chrono::steady_clock::now();
        const OperandStats s = operand_stats(a.data(), count, f->bytes);
        const double stats = 2 * since(t0);
        t0 = std::chrono::steady_clock::now();
        const uint32_t crc = crc32(a.data(), a.size());
        const double crc_s = 2 * since(t0);
        std::printf(
            "%-4s: generate %.2f s on 1 thread, %.2f s on %u; statistics %.2f s; CRC-32 "
            "%.2f s (%s); entropy %.2f bits\n",
            f->name, gen[0], gen[1], all, stats, crc_s, crc32_text(crc).c_str(), s.entropy_bits);
    }
    return 0;
}
