// probe-gemm: is cuBLAS's matrix multiply correct on this GPU, and how fast is it on real data?
//
//   --sizes=8192          comma list of square sizes N or MxNxK
//   --dtypes=fp32,tf32,fp16,bf16,fp8
//   --timing=sustained    or short (CI): see timing.hpp
//   --seconds=10 --warmup-seconds=2   (sustained)   --repeats=20 --warmup=5   (short; minimums
//                                                    when sustained)
//   --check-max=2048      the correctness run's M and N are at most this
//   --peak-tflops=bf16:989,fp16:989,...   (optional; gives fraction_of_peak)
//   --dump-operands=DIR   also write the timed operands' bytes there (the GPU self-check times
//                         torch.matmul on them)
//   --device=0
//
// For each size and dtype, two separate parts (measure.hpp): correctness on exact
// small-integer operands at a smaller shape against an exact FP64 reference, then throughput
// on full-entropy uniform(-1,1) operands at the requested shape, with the SM clock and power
// read through NVML over the timed phase. tflops_median is always the latter: a figure on
// low-entropy operands (which draw less power, so run faster on a power-limited GPU) is
// neither measured nor reported.
//
// fp32, tf32, fp16, bf16 go through cublasGemmEx with fp32 accumulation (CUBLAS_COMPUTE_32F,
// or CUBLAS_COMPUTE_32F_FAST_TF32 for tf32); fp8 (e4m3 x e4m3 -> bf16) through cublasLtMatmul,
// only on devices of compute capability 8.9 or newer whose cuBLASLt (11.11+) has an algorithm
// for it; otherwise it is listed under `skipped`. Layout: blas.hpp.
#include <cstdio>
#include <exception>
#include <string>

#include "measure.hpp"
#include "options.hpp"

namespace {

using namespace gemm;
using probe::Json;

// "0000:07:00.0" for NVML, from the runtime's attributes; "" when they cannot be read.
std::string pci_bus_id(const Runtime& rt, int device) {
    int domain = 0, bus = 0, dev = 0;
    if (rt.cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, device) != cudaSuccess ||
        rt.cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, device) != cudaSuccess ||
        rt.cudaDeviceGetAttribute(&dev, cudaDevAttrPciDeviceId, device) != cudaSuccess)
        return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", static_cast<unsigned>(domain),
                  static_cast<unsigned>(bus), static_cast<unsigned>(dev));
    return buf;
}

std::string shape_text(long m, long n, long k) {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

// Both parts of one run; fills run.error or run.skipped when they cannot be done.
void measure(Run& run, const DType& d, const Shape& s, Gemm& gemm, ExactOperands& exact,
             UniformOperands& uniform, const Options& opt, const Nvml* nvml,
             const std::string& nvml_error) {
    char text[160];
    std::snprintf(text, sizeof text, "q*2^%d, integers q uniform in [-%d,%d], exact in %s",
                  d.scale_log2, d.range, d.range, d.in.name);
    run.check_operands = text;
    std::snprintf(text, sizeof text,
                  "max |C - FP64 reference| <= %g*sqrt(K) on uniform(-1,1) operands (the torch "
                  "probe's rule)",
                  d.timed_rel);
    run.timed_rule = text;
    run.clocks.unavailable = nvml_error;
    const Shape cs{std::min(s.m, opt.check_max), std::min(s.n, opt.check_max), s.k};
    bool unsupported = false;
    std::string err = check_exact(run, d, cs, gemm, exact, unsupported);
    if (err.empty())
        err = time_uniform(run, d, s, gemm, uniform, opt.plan, nvml, opt.dump_dir, unsupported);
    if (!err.empty()) (unsupported ? run.skipped : run.error) = err;
}

void print_run(const Run& r) {
    const std::string shape = shape_text(r.m, r.n, r.k);
    if (!r.skipped.empty()) {
        std::printf("gemm: %-4s %s skipped: %s\n", r.dtype.c_str(), shape.c_str(),
                    r.skipped.c_str());
        return;
    }
    std::printf(
        "gemm: %-4s %s %s: exact %s err %g (tolerance %g), timed output err %g "
        "(tolerance %g); %.1f TFLOP/s %s median of %ld in %.1f s (halves %.1f, %.1f)",
        r.dtype.c_str(), shape.c_str(),
        !r.check.done   ? "NOT CHECKED"
        : r.incorrect() ? "INCORRECT"
                        : "correct",
        shape_text(r.check.m, r.check.n, r.check.k).c_str(), r.check.max_abs_err, r.check.tolerance,
        r.timed_check.max_abs_err, r.timed_check.tolerance,
        std::isfinite(r.timing.tflops_median) ? r.timing.tflops_median : 0.0, r.timing.mode.c_str(),
        r.timing.timed_runs, r.timing.timed_s, r.timing.tflops_first_half,
        r.timing.tflops_last_half);
    if (r.clocks.available && r.clocks.samples > 0)
        std::printf("; SM %.0f -> %.0f MHz, %.0f -> %.0f W", r.clocks.start.sm_mhz,
                    r.clocks.end.sm_mhz, r.clocks.start.power_w, r.clocks.end.power_w);
    std::printf("%s%s\n", r.error.empty() ? "" : "; error: ", r.error.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    const char* kName = "gemm";
    Json data = Json::object();
    data.set("library", Json());
    Options opt;
    std::string bad = parse_options(probe::parse_flags(argc, argv), opt);
    if (!bad.empty()) return probe::finish(kName, probe::kError, bad, data);

    Runtime rt;
    Blas blas;
    const bool rt_ok = rt.load(), blas_ok = blas.load();
    data = Json::object();
    data.set("library", blas.blas.ok() ? Json(blas.path()) : Json());
    data.set("timing",
             Json::object(
                 {{"mode", opt.plan.mode()},
                  {"method", kTimingMethod},
                  {"seconds", opt.plan.sustained ? Json(opt.plan.seconds) : Json()},
                  {"warmup_seconds", opt.plan.sustained ? Json(opt.plan.warmup_seconds) : Json()},
                  {"repeats", opt.plan.repeats},
                  {"warmup", opt.plan.warmup}}));
    data.set("operands", Json::object({{"timing", kUniformDistribution},
                                       {"check", "exact small integers"},
                                       {"check_max", opt.check_max}}));
    if (!rt_ok || !blas_ok) {
        std::string why = !rt_ok ? (rt.lib.ok() ? "libcudart has no " + rt.missing
                                                : "no libcudart loads: " + rt.lib.error())
                                 : (blas.blas.ok() ? "libcublas lacks " + blas.missing
                                                   : "no libcublas loads: " + blas.blas.error());
        std::printf("gemm: %s\n", why.c_str());
        data.set("device", Json());
        data.set("results", Json::array());
        return probe::finish(kName, probe::kError, why, data);
    }
    const std::string version = blas.version();
    data.set("library_version", version.empty() ? Json() : Json(version));
    std::printf("gemm: cuBLAS %s from %s; cuBLASLt %s\n", version.c_str(), blas.path().c_str(),
                blas.lt_ok() ? std::to_string(blas.cublasLtGetVersion()).c_str() : "not loaded");

    probe::cuda::Gpus gpus = probe::cuda::query_gpus(rt);
    if (!gpus.usable() || opt.device >= gpus.count) {
        std::string why = gpus.usable() ? "no device " + std::to_string(opt.device) + " (" +
                                              std::to_string(gpus.count) + " present)"
                                        : gpus.reason();
        std::printf("gemm: %s\n", why.c_str());
        data.set("device", Json());
        data.set("nvml", Json());
        data.set("results", Json::array());
        data.set("skipped", Json::array());
        data.set("error", gpus.error_json());
        return probe::finish(kName, gpus.usable() ? probe::kError : probe::kWaived, why, data);
    }

    cudaError_t e = rt.cudaSetDevice(opt.device);
    int major = 0, minor = 0;
    probe::cuda::compute_capability(rt, opt.device, major, minor);
    const std::string name = probe::cuda::device_name(opt.device);
    const std::string bus = pci_bus_id(rt, opt.device);
    data.set("device", Json::object({{"index", opt.device},
                                     {"name", name.empty() ? Json() : Json(name)},
                                     {"cc", std::to_string(major) + "." + std::to_string(minor)},
                                     {"pci_bus_id", bus.empty() ? Json() : Json(bus)}}));
    std::printf("gemm: device %d: %s, cc %d.%d, PCI %s\n", opt.device, name.c_str(), major, minor,
                bus.c_str());
    Nvml nvml;
    std::string nvml_error =
        bus.empty() ? "the CUDA runtime gave no PCI bus id for NVML" : std::string();
    if (nvml_error.empty() && !nvml.open(bus)) nvml_error = nvml.error();
    data.set("nvml", Json::object({{"library", nvml.path().empty() ? Json() : Json(nvml.path())},
                                   {"error", nvml_error.empty() ? Json() : Json(nvml_error)}}));
    if (!nvml_error.empty()) std::printf("gemm: no clock readings: %s\n", nvml_error.c_str());

    Gemm gemm(rt, blas);
    std::string setup_error;
    cublasStatus_t st;
    if (e != cudaSuccess)
        setup_error = rt.describe("cudaSetDevice", e);
    else if ((st = blas.cublasCreate_v2(&gemm.handle)) != CUBLAS_STATUS_SUCCESS)
        setup_error = "cublasCreate: " + blas.status(st);
    else if ((st = blas.cublasSetMathMode(
                  gemm.handle,
                  static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                            CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION))) !=
             CUBLAS_STATUS_SUCCESS)
        setup_error = "cublasSetMathMode: " + blas.status(st);
    if (!setup_error.empty()) {
        data.set("results", Json::array());
        return probe::finish(kName, probe::kError, setup_error, data);
    }

    // fp8 needs Ada/Hopper or newer and a cuBLASLt that knows e4m3 (cuBLAS 11.11, CUDA 11.8).
    std::string fp8_unavailable;
    if (major * 10 + minor < 89)
        fp8_unavailable = "fp8 needs compute capability 8.9 or newer; this device is " +
                          std::to_string(major) + "." + std::to_string(minor);
    else if (!blas.lt_ok())
        fp8_unavailable =
            "cuBLASLt not usable: " + (blas.lt.ok() ? "missing " + blas.missing : blas.lt.error());
    else if (blas.cublasLtGetVersion() < 111100)
        fp8_unavailable =
            "cuBLASLt " + std::to_string(blas.cublasLtGetVersion()) + " predates fp8 (11.11)";
    DeviceBuffer workspace(rt);
    if (fp8_unavailable.empty()) {
        gemm.workspace_bytes = 32u << 20;  // what cuBLAS recommends for Hopper
        if ((st = blas.cublasLtCreate(&gemm.lt_handle)) != CUBLAS_STATUS_SUCCESS)
            fp8_unavailable = "cublasLtCreate: " + blas.status(st);
        else if ((e = workspace.alloc(gemm.workspace_bytes)) != cudaSuccess)
            fp8_unavailable = rt.describe("cudaMalloc(workspace)", e);
        gemm.workspace = workspace.get();
    }

    ExactOperands exact;
    UniformOperands uniform;
    Json results = Json::array(), skipped = Json::array();
    int incorrect = 0, errors = 0;
    std::string first_problem;
    for (const Shape& s : opt.shapes) {
        for (const DType* d : opt.dtypes) {
            Run run;
            run.dtype = d->name;
            run.m = s.m, run.n = s.n, run.k = s.k;
            if (d->lt && !fp8_unavailable.empty()) {
                run.skipped = fp8_unavailable;
            } else {
                try {
                    measure(run, *d, s, gemm, exact, uniform, opt,
                            nvml_error.empty() ? &nvml : nullptr, nvml_error);
                } catch (const std::exception& ex) {  // std::bad_alloc for host operands too large
                    run.error = std::string("host: ") + ex.what();
                    exact = ExactOperands();
                    uniform = UniformOperands();
                }
            }
            print_run(run);
            const std::string shape = shape_text(s.m, s.n, s.k);
            if (!run.skipped.empty()) {
                skipped.push(Json::object({{"dtype", d->name},
                                           {"m", s.m},
                                           {"n", s.n},
                                           {"k", s.k},
                                           {"reason", run.skipped}}));
                continue;
            }
            if (run.incorrect()) {
                ++incorrect;
                if (first_problem.empty())
                    first_problem =
                        std::string(d->name) + " " + shape + " incorrect: " +
                        (run.check.done && !run.check.correct
                             ? "exact operands: max_abs_err " + Json(run.check.max_abs_err).text() +
                                   " > tolerance " + Json(run.check.tolerance).text()
                             : "timed output: max_abs_err " +
                                   Json(run.timed_check.max_abs_err).text() + " > tolerance " +
                                   Json(run.timed_check.tolerance).text());
            }
            if (!run.error.empty()) {
                ++errors;
                if (first_problem.empty())
                    first_problem = std::string(d->name) + " " + shape + ": " + run.error;
            }
            auto peak = opt.peak.find(d->name);
            results.push(run_json(run, peak != opt.peak.end() ? peak->second : NAN));
        }
    }
    if (gemm.lt_handle) blas.cublasLtDestroy(gemm.lt_handle);
    blas.cublasDestroy_v2(gemm.handle);
    data.set("results", results);
    data.set("skipped", skipped);
    if (incorrect) return probe::finish(kName, probe::kFail, first_problem, data);
    if (errors) return probe::finish(kName, probe::kError, first_problem, data);
    return probe::finish(kName, probe::kPass, "", data);
}
