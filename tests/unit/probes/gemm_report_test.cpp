// probe-gemm's timing plan and summary (probes/gemm/timing.hpp) and its result entries
// (run_json.hpp): every figure says what it is (operands, shapes, timing method, clocks, or
// why there are none).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <nlohmann/json.hpp>
#include <vector>

#include "run_json.hpp"

using namespace gemm;
using Catch::Matchers::ContainsSubstring;
using json = nlohmann::json;

TEST_CASE("short timing runs exactly the counts asked for") {
    TimingPlan p;
    p.sustained = false;
    p.warmup = 5, p.repeats = 20;
    const StopRule warm = StopRule::warmup(p, 2), timed = StopRule::timed(p);
    CHECK(warm.more(2, 100.0));
    CHECK_FALSE(warm.more(3, 0.0));
    CHECK(warm.next_batch(0, 256) == 3);
    CHECK(timed.more(19, 1e9));
    CHECK_FALSE(timed.more(20, 0.0));
    CHECK(timed.next_batch(16, 8) == 4);
    CHECK(StopRule::warmup(p, 7).more(0, 0.0) == false);  // already warm enough
}

TEST_CASE("sustained timing runs until both the minimum count and the duration are reached") {
    TimingPlan p;  // sustained by default: 2 s warm-up, 10 s timed, at least 20 timed
    CHECK(std::string(p.mode()) == "sustained");
    const StopRule timed = StopRule::timed(p);
    CHECK(timed.more(100000, 9.99));
    CHECK(timed.more(19, 10.5));
    CHECK_FALSE(timed.more(20, 10.0));
    CHECK(timed.next_batch(5000, 256) == 256);  // no maximum
    CHECK(StopRule::warmup(p, 2).more(1000, 1.9));
    CHECK_FALSE(StopRule::warmup(p, 2).more(3, 2.0));
}

TEST_CASE("batches hold about 50 ms of work, 1 to 256 GEMMs") {
    CHECK(batch_size(0.7) == 72);
    CHECK(batch_size(21.5) == 3);
    CHECK(batch_size(500) == 1);
    CHECK(batch_size(0.001) == 256);
    CHECK(batch_size(0) == 1);
    CHECK(batch_size(NAN) == 1);
}

TEST_CASE("the summary is the median per-GEMM time, with the halves apart") {
    const double flops = 2.0 * 8192 * 8192 * 8192;  // 1.1e12
    const TimingSummary t = summarize({1.0, 1.0, 3.0, 1.2, 1.2, 1.2}, flops);
    CHECK(t.timed_runs == 6);
    CHECK(t.ms_median == 1.2);
    CHECK(t.ms_min == 1.0);
    CHECK(t.ms_max == 3.0);
    CHECK(std::fabs(t.tflops_median - flops / 1.2e-3 / 1e12) < 1e-9);
    CHECK(std::fabs(t.tflops_first_half - flops / 1.0e-3 / 1e12) < 1e-9);
    CHECK(std::fabs(t.tflops_last_half - flops / 1.2e-3 / 1e12) < 1e-9);
    CHECK(std::isnan(summarize({}, flops).tflops_median));
    CHECK(median_of({4.0, 1.0, 3.0, 2.0}) == 2.5);
}

namespace {

Run timed_run() {
    Run r;
    r.dtype = "bf16", r.m = 8192, r.n = 8192, r.k = 8192;
    r.check_operands = "q*2^-2, integers q uniform in [-2,2], exact in bf16";
    r.check = Check{true, true, 2048, 2048, 8192, 256, 0.0, 0.38};
    r.timed_rule = "max |C - FP64 reference| <= 0.03125*sqrt(K)";
    r.timed_check = Check{true, true, 8192, 8192, 8192, 256, 0.02, 2.83};
    r.operands.distribution = kUniformDistribution;
    r.operands.format = "bf16";
    r.operands.a.stats.entropy_bits = 10.0;
    r.operands.a.has_crc = true;
    r.operands.a.crc = 0xdeadbeef;
    r.operands.a.file = "/tmp/ops/bf16-8192x8192x8192-a.bin";
    r.timing = summarize(std::vector<double>(100, 1.4), 2.0 * 8192 * 8192 * 8192);
    r.timing.mode = "sustained";
    r.timing.warmup_runs = 1400, r.timing.warmup_s = 2.0, r.timing.timed_s = 10.0;
    return r;
}

}  // namespace

TEST_CASE("a result names its operands, sizes, timing method and clocks") {
    Run r = timed_run();
    r.clocks.available = true;
    r.clocks.power_limit_w = 700;
    ClockSample s;
    s.sm_mhz = 1980, s.power_w = 350, s.temperature_c = 40, s.has_reasons = true, s.reasons = 0;
    r.clocks.add(s);
    s.sm_mhz = 1755, s.power_w = 699.5, s.temperature_c = 70, s.reasons = 0x4;
    r.clocks.add(s);
    const json j = json::parse(run_json(r, 989.5).text());
    CHECK(j["dtype"] == "bf16");
    CHECK(j["m"] == 8192);
    CHECK(j["correct"] == true);
    CHECK(std::fabs(j["tflops_median"].get<double>() - 785.3) < 0.1);
    CHECK(std::fabs(j["fraction_of_peak"].get<double>() - 785.3 / 989.5) < 1e-3);
    CHECK(j["repeats"] == 100);
    CHECK(j["operands"]["distribution"] == "uniform(-1,1)");
    CHECK(j["operands"]["layout"] == "TN: A row-major MxK, B column-major KxN");
    CHECK(j["operands"]["a"]["crc32"] == "crc32:deadbeef");
    CHECK(j["operands"]["a"]["file"] == "/tmp/ops/bf16-8192x8192x8192-a.bin");
    CHECK(j["operands"]["b"]["crc32"].is_null());
    CHECK(j["check"]["m"] == 2048);
    CHECK(j["check"]["operands"] == "q*2^-2, integers q uniform in [-2,2], exact in bf16");
    CHECK(j["timed_check"]["correct"] == true);
    CHECK(j["timing"]["mode"] == "sustained");
    CHECK_THAT(j["timing"]["method"].get<std::string>(), ContainsSubstring("back-to-back"));
    CHECK(j["timing"]["warmup_runs"] == 1400);
    CHECK(j["clocks"]["source"] == "nvml");
    CHECK(j["clocks"]["start"]["sm_mhz"] == 1980);
    CHECK(j["clocks"]["end"]["sm_mhz"] == 1755);
    CHECK(j["clocks"]["end"]["reasons"] == json::array({"sw_power_cap"}));
    CHECK(j["clocks"]["sm_mhz_min"] == 1755);
    CHECK(j["clocks"]["power_limit_w"] == 700);
    CHECK(j["clocks"]["sm_mhz_limit"].is_null());
    CHECK(j["clocks_unavailable"].is_null());
    CHECK(j["error"].is_null());
}

TEST_CASE("without NVML the clocks are null with the reason") {
    Run r = timed_run();
    r.clocks.unavailable = "libnvidia-ml.so.1 does not load: not found";
    json j = json::parse(run_json(r, NAN).text());
    CHECK(j["clocks"].is_null());
    CHECK(j["clocks_unavailable"] == "libnvidia-ml.so.1 does not load: not found");
    CHECK(j["peak_tflops"].is_null());
    CHECK(j["fraction_of_peak"].is_null());
    r.clocks = ClockSummary();
    r.clocks.available = true;  // NVML there, but no sample taken
    j = json::parse(run_json(r, NAN).text());
    CHECK(j["clocks"].is_null());
    CHECK(j["clocks_unavailable"] == "no clock sample was taken");
}

TEST_CASE("correct is null unchecked, false when either check fails") {
    Run r = timed_run();
    r.timed_check.correct = false;
    CHECK(r.incorrect());
    CHECK(json::parse(run_json(r, NAN).text())["correct"] == false);
    r = Run();
    r.dtype = "fp8", r.error = "cublasLtMatmul: CUBLAS_STATUS_EXECUTION_FAILED (13)";
    const json j = json::parse(run_json(r, 1979).text());
    CHECK(j["correct"].is_null());
    CHECK(j["tflops_median"].is_null());
    CHECK(j["fraction_of_peak"].is_null());
    CHECK(j["error"] == "cublasLtMatmul: CUBLAS_STATUS_EXECUTION_FAILED (13)");
}

TEST_CASE("clock event reasons are named as nvml.h defines the bits") {
    CHECK(clock_reason_names(0).empty());
    CHECK(clock_reason_names(0x4) == std::vector<std::string>{"sw_power_cap"});
    CHECK(clock_reason_names(0x1 | 0x40 | 0x80 | 0x100) ==
          std::vector<std::string>{"gpu_idle", "hw_thermal", "hw_power_brake", "other"});
}
