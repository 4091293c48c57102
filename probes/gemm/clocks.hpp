#pragma once
// What the GPU's clocks and power did while the probe timed GEMMs: samples taken through NVML
// (clocks_nvml.hpp) and their summary for the JSON. Pure C++17, no NVML or CUDA header.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace gemm {

// One NVML reading; NaN where NVML did not answer that query.
struct ClockSample {
    double sm_mhz = NAN;
    double power_w = NAN;
    double temperature_c = NAN;
    bool has_reasons = false;
    uint64_t reasons = 0;  // nvmlClocksThrottleReasons / nvmlClocksEventReasons bits
};

// Names of the clock event ("throttle") reason bits of nvml.h, in bit order.
inline std::vector<std::string> clock_reason_names(uint64_t bits) {
    static const char* const names[] = {"gpu_idle",    "applications_clocks", "sw_power_cap",
                                        "hw_slowdown", "sync_boost",          "sw_thermal",
                                        "hw_thermal",  "hw_power_brake"};
    std::vector<std::string> out;
    for (int b = 0; b < 8; ++b)
        if (bits & (uint64_t{1} << b)) out.emplace_back(names[b]);
    if (bits >> 8) out.emplace_back("other");
    return out;
}

// The clocks over one timed phase: first and last sample, extremes, and the limits.
struct ClockSummary {
    bool available = false;
    std::string unavailable;  // why not, when !available
    ClockSample start, end;
    double sm_mhz_min = NAN, sm_mhz_max = NAN, power_w_max = NAN;
    int samples = 0;
    double power_limit_w = NAN;  // enforced power limit
    double sm_mhz_limit = NAN;   // the SM clock's maximum (nvmlDeviceGetMaxClockInfo)

    void add(const ClockSample& s) {
        if (samples == 0) start = s;
        end = s;
        ++samples;
        if (std::isfinite(s.sm_mhz)) {
            sm_mhz_min = std::isfinite(sm_mhz_min) ? std::fmin(sm_mhz_min, s.sm_mhz) : s.sm_mhz;
            sm_mhz_max = std::isfinite(sm_mhz_max) ? std::fmax(sm_mhz_max, s.sm_mhz) : s.sm_mhz;
        }
        if (std::isfinite(s.power_w))
            power_w_max =
                std::isfinite(power_w_max) ? std::fmax(power_w_max, s.power_w) : s.power_w;
    }
};

}  // namespace gemm
