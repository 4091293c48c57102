#pragma once
// One GEMM run of probe-gemm (a dtype at a shape) as measured, and its entry in data.results.
// Pure C++17 with the probes' Json: the unit tests build entries from hand-made runs.
//
// Two figures must never be confused, so the entry says what each number is:
//   * correctness (`correct`, `max_abs_err`, `tolerance`, `check`): exact small-integer
//     operands, a smaller shape, an exact FP64 reference (TD143's evidence);
//   * throughput (`tflops_median`, `timing`, `operands`, `clocks`): full-entropy
//     uniform(-1,1) operands at the requested shape (TD144's evidence), whose output is also
//     checked on sampled entries (`timed_check`).
#include <cmath>
#include <cstdint>
#include <string>

#include "clocks.hpp"
#include "operand_data.hpp"
#include "probe.hpp"
#include "timing.hpp"

namespace gemm {

using probe::Json;

// One comparison of sampled GPU results with an FP64 host reference.
struct Check {
    bool done = false, correct = false;
    long m = 0, n = 0, k = 0;
    int samples = 0;
    double max_abs_err = NAN, tolerance = NAN;
};

struct OperandSide {
    OperandStats stats;
    bool has_crc = false;
    uint32_t crc = 0;
    std::string file;  // where the bytes were written (--dump-operands), else ""
};

struct TimedOperands {
    std::string distribution;  // kUniformDistribution
    std::string format;        // "bf16", "e4m3", ...
    uint64_t seed_a = 0, seed_b = 0;
    OperandSide a, b;
    double generate_s = NAN;  // host seconds to make both operands
};

struct Run {
    std::string dtype;
    long m = 0, n = 0, k = 0;
    std::string check_operands;  // "q*2^-2, integers q uniform in [-2,2]"
    Check check;                 // exact operands (smaller shape)
    std::string timed_rule;      // "max |C - FP64| <= 0.03125*sqrt(K)"
    Check timed_check;           // the timed operands' output, sampled
    TimedOperands operands;
    TimingSummary timing;
    ClockSummary clocks;
    std::string error;    // the probe could not run it (an API failure)
    std::string skipped;  // not applicable here (fp8 without support)

    // null (not checked), false (a check failed), true (the exact check passed and so did the
    // timed output's, where it ran).
    Json correct_json() const {
        if (!check.done) return Json();
        return Json(check.correct && (!timed_check.done || timed_check.correct));
    }
    bool incorrect() const {
        return (check.done && !check.correct) || (timed_check.done && !timed_check.correct);
    }
};

inline Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(); }

inline Json check_json(const Check& c) {
    return Json::object({{"m", c.m},
                         {"n", c.n},
                         {"k", c.k},
                         {"samples", c.samples},
                         {"max_abs_err", c.done ? finite_or_null(c.max_abs_err) : Json()},
                         {"tolerance", c.done ? finite_or_null(c.tolerance) : Json()},
                         {"correct", c.done ? Json(c.correct) : Json()}});
}

inline Json stats_json(const OperandSide& s) {
    Json j = Json::object({{"sampled", static_cast<unsigned long long>(s.stats.sampled)},
                           {"distinct", static_cast<unsigned long long>(s.stats.distinct)},
                           {"entropy_bits", s.stats.entropy_bits},
                           {"max_entropy_bits", s.stats.max_entropy_bits},
                           {"bit_entropy", s.stats.bit_entropy},
                           {"zero_fraction", s.stats.zero_fraction}});
    j.set("crc32", s.has_crc ? Json(crc32_text(s.crc)) : Json());
    j.set("file", s.file.empty() ? Json() : Json(s.file));
    return j;
}

inline Json sample_json(const ClockSample& s) {
    Json reasons = Json();
    if (s.has_reasons) reasons = Json::array_of(clock_reason_names(s.reasons));
    return Json::object({{"sm_mhz", finite_or_null(s.sm_mhz)},
                         {"power_w", finite_or_null(s.power_w)},
                         {"temperature_c", finite_or_null(s.temperature_c)},
                         {"reasons", reasons}});
}

inline Json clocks_json(const ClockSummary& c) {
    if (!c.available || c.samples == 0) return Json();
    return Json::object({{"source", "nvml"},
                         {"samples", c.samples},
                         {"start", sample_json(c.start)},
                         {"end", sample_json(c.end)},
                         {"sm_mhz_min", finite_or_null(c.sm_mhz_min)},
                         {"sm_mhz_max", finite_or_null(c.sm_mhz_max)},
                         {"power_w_max", finite_or_null(c.power_w_max)},
                         {"power_limit_w", finite_or_null(c.power_limit_w)},
                         {"sm_mhz_limit", finite_or_null(c.sm_mhz_limit)}});
}

inline Json timing_json(const TimingSummary& t) {
    return Json::object({{"mode", t.mode},
                         {"method", kTimingMethod},
                         {"warmup_runs", t.warmup_runs},
                         {"warmup_s", t.warmup_s},
                         {"timed_runs", t.timed_runs},
                         {"timed_s", t.timed_s},
                         {"ms_median", finite_or_null(t.ms_median)},
                         {"ms_min", finite_or_null(t.ms_min)},
                         {"ms_max", finite_or_null(t.ms_max)},
                         {"tflops_first_half", finite_or_null(t.tflops_first_half)},
                         {"tflops_last_half", finite_or_null(t.tflops_last_half)}});
}

// The entry of data.results; `peak` is the datasheet dense peak in TFLOP/s, or NaN.
inline Json run_json(const Run& r, double peak) {
    const bool timed = r.timing.timed_runs > 0;
    const bool has_peak = std::isfinite(peak) && peak > 0;
    Json check = check_json(r.check);
    check.set("operands", r.check_operands);
    Json timed_check = check_json(r.timed_check);
    timed_check.set("rule", r.timed_rule);
    Json operands = Json::object({{"distribution", r.operands.distribution},
                                  {"format", r.operands.format},
                                  {"layout", "TN: A row-major MxK, B column-major KxN"},
                                  {"generator", "splitmix64 counter stream on the host"},
                                  {"seed_a", static_cast<unsigned long long>(r.operands.seed_a)},
                                  {"seed_b", static_cast<unsigned long long>(r.operands.seed_b)},
                                  {"generate_s", finite_or_null(r.operands.generate_s)},
                                  {"a", stats_json(r.operands.a)},
                                  {"b", stats_json(r.operands.b)}});
    Json j = Json::object(
        {{"dtype", r.dtype},
         {"m", r.m},
         {"n", r.n},
         {"k", r.k},
         {"correct", r.correct_json()},
         {"max_abs_err", r.check.done ? finite_or_null(r.check.max_abs_err) : Json()},
         {"tolerance", r.check.done ? finite_or_null(r.check.tolerance) : Json()},
         {"tflops_median", timed ? finite_or_null(r.timing.tflops_median) : Json()},
         {"repeats", r.timing.timed_runs},
         {"peak_tflops", has_peak ? Json(peak) : Json()},
         {"fraction_of_peak",
          has_peak && timed ? finite_or_null(r.timing.tflops_median / peak) : Json()}});
    j.set("check", check);
    j.set("timed_check", timed_check);
    j.set("operands", operands);
    j.set("timing", timing_json(r.timing));
    const bool sampled = r.clocks.available && r.clocks.samples > 0;
    j.set("clocks", clocks_json(r.clocks));
    j.set("clocks_unavailable",
          sampled ? Json()
                  : Json(r.clocks.unavailable.empty() ? "no clock sample was taken"
                                                      : r.clocks.unavailable));
    j.set("error", r.error.empty() ? Json() : Json(r.error));
    return j;
}

}  // namespace gemm
