#pragma once
// How the GEMM probe times: the plan (sustained or short), when a phase stops, how GEMMs are
// batched, and the summary of the per-GEMM times. Pure C++17: the loop that drives the GPU is
// in measure.hpp.
//
// Method: GEMMs run back to back on one stream with a CUDA event recorded between every two
// (event i before GEMM i, event i+1 after it), two batches in flight, so the GPU never waits
// for the host and each GEMM's time is elapsed(event i, event i+1). The figure is the median
// of those times (2*M*N*K / median). Sustained: a warm-up of `warmup_seconds`, then
// `seconds` of timed GEMMs, long enough for the power limit and the temperature to settle
// (the first and last halves' medians show whether they did). Short (CI): `warmup` and
// `repeats` GEMMs, exactly.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace gemm {

constexpr const char* kTimingMethod =
    "back-to-back GEMMs on one stream, a CUDA event between each two, two batches in flight; "
    "median per-GEMM time";

struct TimingPlan {
    bool sustained = true;
    double warmup_seconds = 2, seconds = 10;  // sustained
    int warmup = 5, repeats = 20;             // short: exact counts; sustained: minimums
    const char* mode() const { return sustained ? "sustained" : "short"; }
};

// When one phase (warm-up or timed) stops.
struct StopRule {
    long min_runs = 0;
    long max_runs = 0;  // 0: no maximum
    double min_seconds = 0;

    static StopRule warmup(const TimingPlan& p, long already) {
        const long rest = std::max(0L, static_cast<long>(p.warmup) - already);
        return p.sustained ? StopRule{rest, 0, p.warmup_seconds} : StopRule{rest, rest, 0};
    }
    static StopRule timed(const TimingPlan& p) {
        return p.sustained ? StopRule{p.repeats, 0, p.seconds} : StopRule{p.repeats, p.repeats, 0};
    }
    // Whether to enqueue more GEMMs, `enqueued` so far, `elapsed` seconds since the start.
    bool more(long enqueued, double elapsed) const {
        if (max_runs > 0 && enqueued >= max_runs) return false;
        return enqueued < min_runs || elapsed < min_seconds;
    }
    // How many GEMMs the next batch holds, `wanted` being the batch size aimed at.
    long next_batch(long enqueued, long wanted) const {
        return max_runs > 0 ? std::min(wanted, max_runs - enqueued) : wanted;
    }
};

// GEMMs per batch so that one batch is about `target_ms` of GPU work (1 to `cap`).
inline long batch_size(double est_ms_per_gemm, double target_ms = 50, long cap = 256) {
    if (!(est_ms_per_gemm > 0)) return 1;
    return std::max(1L, std::min(cap, static_cast<long>(std::ceil(target_ms / est_ms_per_gemm))));
}

inline double median_of(std::vector<double> xs) {
    if (xs.empty()) return NAN;
    std::sort(xs.begin(), xs.end());
    const std::size_t n = xs.size();
    return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

inline double tflops_of(double flops, double ms) {
    return ms > 0 ? flops / (ms * 1e-3) / 1e12 : NAN;
}

struct TimingSummary {
    std::string mode;
    long warmup_runs = 0, timed_runs = 0;
    double warmup_s = 0, timed_s = 0;  // wall-clock seconds of each phase
    double ms_median = NAN, ms_min = NAN, ms_max = NAN;
    double tflops_median = NAN;
    // Medians of the first and the second half of the timed GEMMs, in time order: close
    // together when the clocks had settled before timing began.
    double tflops_first_half = NAN, tflops_last_half = NAN;
};

// The summary of per-GEMM times `ms` (in the order they ran) of GEMMs doing `flops` each.
inline TimingSummary summarize(const std::vector<double>& ms, double flops) {
    TimingSummary t;
    t.timed_runs = static_cast<long>(ms.size());
    if (ms.empty()) return t;
    t.ms_median = median_of(ms);
    t.ms_min = *std::min_element(ms.begin(), ms.end());
    t.ms_max = *std::max_element(ms.begin(), ms.end());
    t.tflops_median = tflops_of(flops, t.ms_median);
    if (ms.size() >= 2) {
        const auto mid = ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2);
        t.tflops_first_half = tflops_of(flops, median_of(std::vector<double>(ms.begin(), mid)));
        t.tflops_last_half = tflops_of(flops, median_of(std::vector<double>(mid, ms.end())));
    }
    return t;
}

}  // namespace gemm
