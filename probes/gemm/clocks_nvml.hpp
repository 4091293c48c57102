#pragma once
// NVML, dlopened (libnvidia-ml.so.1 comes with the driver, not the toolkit, and inside a
// container only when the "utility" driver capability is mounted): SM clock, power draw,
// temperature and clock event reasons of the GPU the probe times. The few declarations needed
// are written here, as nvml.h has them, because the toolkit does not always ship nvml.h.
#include <cstdio>
#include <string>

#include "clocks.hpp"
#include "probe.hpp"

namespace gemm {

class Nvml {
  public:
    // nvml.h: nvmlReturn_t is an int enum (NVML_SUCCESS = 0); nvmlDevice_t an opaque pointer;
    // NVML_CLOCK_SM = 1; NVML_TEMPERATURE_GPU = 0; power in milliwatts.
    using Device = void*;
    static constexpr int kSuccess = 0, kClockSm = 1, kTemperatureGpu = 0;

    // Loads NVML and finds the device at `pci_bus_id` ("0000:07:00.0", from the CUDA runtime,
    // so the index orders of CUDA and NVML need not agree). False with error() otherwise.
    bool open(const std::string& pci_bus_id) {
        m_lib = probe::Library({"libnvidia-ml.so.1"});
        if (!m_lib.ok()) return fail("libnvidia-ml.so.1 does not load: " + m_lib.error());
        m_init = m_lib.symbol<int (*)()>("nvmlInit_v2");
        m_error_string = m_lib.symbol<const char* (*)(int)>("nvmlErrorString");
        auto by_pci =
            m_lib.symbol<int (*)(const char*, Device*)>("nvmlDeviceGetHandleByPciBusId_v2");
        m_clock = m_lib.symbol<int (*)(Device, int, unsigned*)>("nvmlDeviceGetClockInfo");
        m_max_clock = m_lib.symbol<int (*)(Device, int, unsigned*)>("nvmlDeviceGetMaxClockInfo");
        m_power = m_lib.symbol<int (*)(Device, unsigned*)>("nvmlDeviceGetPowerUsage");
        m_limit = m_lib.symbol<int (*)(Device, unsigned*)>("nvmlDeviceGetEnforcedPowerLimit");
        m_temp = m_lib.symbol<int (*)(Device, int, unsigned*)>("nvmlDeviceGetTemperature");
        m_reasons = m_lib.symbol<int (*)(Device, unsigned long long*)>(
            "nvmlDeviceGetCurrentClocksEventReasons");
        if (!m_reasons)  // the name before NVML 12.x
            m_reasons = m_lib.symbol<int (*)(Device, unsigned long long*)>(
                "nvmlDeviceGetCurrentClocksThrottleReasons");
        if (!m_init || !by_pci || !m_clock)
            return fail(
                "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2 "
                "or nvmlDeviceGetClockInfo");
        int r = m_init();
        if (r != kSuccess) return fail("nvmlInit_v2: " + text(r));
        if ((r = by_pci(pci_bus_id.c_str(), &m_device)) != kSuccess)
            return fail("nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + "): " + text(r));
        return true;
    }
    const std::string& error() const { return m_error; }
    std::string path() const { return m_lib.path(); }

    ClockSample sample() const {
        ClockSample s;
        unsigned v = 0;
        unsigned long long bits = 0;
        if (m_clock && m_clock(m_device, kClockSm, &v) == kSuccess) s.sm_mhz = v;
        if (m_power && m_power(m_device, &v) == kSuccess) s.power_w = v / 1000.0;
        if (m_temp && m_temp(m_device, kTemperatureGpu, &v) == kSuccess) s.temperature_c = v;
        if (m_reasons && m_reasons(m_device, &bits) == kSuccess) {
            s.has_reasons = true;
            s.reasons = bits;
        }
        return s;
    }
    // Fills the limits of `c` (NaN where NVML does not say).
    void limits(ClockSummary& c) const {
        unsigned v = 0;
        if (m_limit && m_limit(m_device, &v) == kSuccess) c.power_limit_w = v / 1000.0;
        if (m_max_clock && m_max_clock(m_device, kClockSm, &v) == kSuccess) c.sm_mhz_limit = v;
    }

  private:
    bool fail(const std::string& why) {
        m_error = why;
        return false;
    }
    std::string text(int r) const {
        const char* s = m_error_string ? m_error_string(r) : nullptr;
        return std::string(s ? s : "nvmlReturn") + " (" + std::to_string(r) + ")";
    }

    probe::Library m_lib;
    Device m_device = nullptr;
    std::string m_error;
    int (*m_init)() = nullptr;
    const char* (*m_error_string)(int) = nullptr;
    int (*m_clock)(Device, int, unsigned*) = nullptr;
    int (*m_max_clock)(Device, int, unsigned*) = nullptr;
    int (*m_power)(Device, unsigned*) = nullptr;
    int (*m_limit)(Device, unsigned*) = nullptr;
    int (*m_temp)(Device, int, unsigned*) = nullptr;
    int (*m_reasons)(Device, unsigned long long*) = nullptr;
};

}  // namespace gemm
