// probe-gemm: is cuBLAS's matrix multiply correct on this GPU, and how fast is it?
//
//   --sizes=8192          comma list of square sizes N or MxNxK
//   --dtypes=fp32,tf32,fp16,bf16,fp8
//   --repeats=20 --warmup=5
//   --peak-tflops=bf16:989,fp16:989,...   (optional; gives fraction_of_peak)
//   --device=0
//
// For each size and dtype: one GEMM whose sampled entries are compared with an FP64 host
// reference (correctness first), then `warmup` untimed and `repeats` timed GEMMs, each
// timed with a pair of CUDA events; TFLOP/s = 2*M*N*K / median time.
//
// fp32, tf32, fp16, bf16 go through cublasGemmEx with fp32 accumulation (CUBLAS_COMPUTE_32F,
// or CUBLAS_COMPUTE_32F_FAST_TF32 for tf32); fp8 (e4m3 x e4m3 -> bf16) through cublasLtMatmul,
// only on devices of compute capability 8.9 or newer whose cuBLASLt (11.11+) has an algorithm
// for it; otherwise it is listed under `skipped`.
//
// All operands are in the "TN" layout cuBLAS (and fp8, which requires it) prefer: A is stored
// as A^T, column-major K x M (lda = K), op(A) = T; B column-major K x N (ldb = K), op(B) = N;
// C column-major M x N (ldc = M). So A(i,k) = a[i*K + k], B(k,j) = b[j*K + k], C(i,j) = c[j*M + i].
//
// ---- Tolerance (also in README.md) ----------------------------------------------------------
// Inputs are q * s with integer q drawn uniformly from [-R, R]:
//   fp16, bf16, fp8:  R = 2,    s = 1/4     values {0, +-1/4, +-1/2}, exact in every input type
//   fp32, tf32:       R = 2048, s = 2^-11   12 significant bits: exact in fp32, NOT in tf32
// The reference c_ij = sum_k a_ik b_kj is computed exactly (integer products summed in int64,
// then scaled: an FP64 value with no rounding at all).
// Error of the GPU result (standard floating-point analysis, u = unit roundoff):
//   * input rounding: a~ = a(1+d), |d| <= u_in, so |a~b~ - ab| <= (2 u_in + u_in^2) |a||b|.
//     u_in = 0 where inputs are exact (fp32, fp16, bf16, fp8); tf32 keeps 10 explicit mantissa
//     bits and the hardware may truncate instead of round, so u_in = 2^-10 (2^-11 if rounded).
//   * accumulation in fp32 of K products (any summation order, split-K included as long as
//     partial sums stay in fp32): |error| <= gamma_K * sum_k |a_ik||b_kj|,
//     gamma_K = K u_acc / (1 - K u_acc), u_acc = 2^-24.
//   * rounding of the result to the output type: <= u_out |c_ij|, u_out = 2^-24 (fp32/tf32
//     output), 2^-11 (fp16), 2^-8 (bf16; also fp8, whose output is bf16; an e4m3 output would
//     be 2^-4).
//   tol_ij = (2 u_in + u_in^2 + gamma_K) * S_ij + u_out * (|c_ij| + gamma_K * S_ij),
//   S_ij = sum_k |a_ik||b_kj|.
// The probe reports one tolerance per run, the bound taken at the largest S_ij and |c_ij| of
// the sampled entries, and calls the run correct when the largest sampled |error| is within it.
// The bound is loose (worst case), but errors it misses are far below what a wrong layout,
// a wrong type or corrupted memory cause (those are of the size of |c| itself, ~sqrt(K)*|a||b|).
// To keep it valid the probe forbids reductions in the output type: cuBLAS with
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, cuBLASLt with a reduction-scheme mask that
// admits only none or compute-type (fp32) split-K; fp8 keeps fast accumulation off (the
// default), so cuBLASLt promotes the tensor cores' partial sums to fp32.
#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../cuda/cudart.hpp"
#include "operands.hpp"

namespace {

using probe::Json;
using probe::split;
using probe::cuda::Runtime;
using namespace gemm;

// ---- cuBLAS and cuBLASLt, dlopened ----------------------------------------------------------

// cublas_api.h overloads cublasGemmEx in C++ (a wrapper taking cudaDataType computeType), so
// its pointer type is spelled out: the exported C function.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);

#define PROBE_FN(name) decltype(&::name) name = nullptr
struct Blas {
    probe::Library blas, lt;
    PROBE_FN(cublasCreate_v2);
    PROBE_FN(cublasDestroy_v2);
    PROBE_FN(cublasSetMathMode);
    PROBE_FN(cublasGetProperty);
    PROBE_FN(cublasGetStatusName);  // optional (cuBLAS 11.4.2+)
    GemmExFn cublasGemmEx = nullptr;
    PROBE_FN(cublasLtCreate);
    PROBE_FN(cublasLtDestroy);
    PROBE_FN(cublasLtGetVersion);
    PROBE_FN(cublasLtMatmulDescCreate);
    PROBE_FN(cublasLtMatmulDescDestroy);
    PROBE_FN(cublasLtMatmulDescSetAttribute);
    PROBE_FN(cublasLtMatrixLayoutCreate);
    PROBE_FN(cublasLtMatrixLayoutDestroy);
    PROBE_FN(cublasLtMatmulPreferenceCreate);
    PROBE_FN(cublasLtMatmulPreferenceDestroy);
    PROBE_FN(cublasLtMatmulPreferenceSetAttribute);
    PROBE_FN(cublasLtMatmulAlgoGetHeuristic);
    PROBE_FN(cublasLtMatmul);
    std::string missing;  // functions dlsym did not find

    // False when libcublas does not load or lacks a function cublasGemmEx needs. cuBLASLt
    // problems are reported by lt_ok() and only matter to fp8.
    bool load() {
        blas = probe::Library({"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"});
        lt = probe::Library({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"});
        if (!blas.ok()) return false;
#define PROBE_LOAD(from, name, type) \
    name = from.symbol<type>(#name); \
    if (!name) missing += std::string(missing.empty() ? "" : ", ") + #name;
        PROBE_LOAD(blas, cublasCreate_v2, decltype(&::cublasCreate_v2))
        PROBE_LOAD(blas, cublasDestroy_v2, decltype(&::cublasDestroy_v2))
        PROBE_LOAD(blas, cublasSetMathMode, decltype(&::cublasSetMathMode))
        PROBE_LOAD(blas, cublasGetProperty, decltype(&::cublasGetProperty))
        PROBE_LOAD(blas, cublasGemmEx, GemmExFn)
        bool blas_ok = missing.empty();
        cublasGetStatusName = blas.symbol<decltype(&::cublasGetStatusName)>("cublasGetStatusName");
        if (lt.ok()) {
            PROBE_LOAD(lt, cublasLtCreate, decltype(&::cublasLtCreate))
            PROBE_LOAD(lt, cublasLtDestroy, decltype(&::cublasLtDestroy))
            PROBE_LOAD(lt, cublasLtGetVersion, decltype(&::cublasLtGetVersion))
            PROBE_LOAD(lt, cublasLtMatmulDescCreate, decltype(&::cublasLtMatmulDescCreate))
            PROBE_LOAD(lt, cublasLtMatmulDescDestroy, decltype(&::cublasLtMatmulDescDestroy))
            PROBE_LOAD(lt, cublasLtMatmulDescSetAttribute,
                       decltype(&::cublasLtMatmulDescSetAttribute))
            PROBE_LOAD(lt, cublasLtMatrixLayoutCreate, decltype(&::cublasLtMatrixLayoutCreate))
            PROBE_LOAD(lt, cublasLtMatrixLayoutDestroy, decltype(&::cublasLtMatrixLayoutDestroy))
            PROBE_LOAD(lt, cublasLtMatmulPreferenceCreate,
                       decltype(&::cublasLtMatmulPreferenceCreate))
            PROBE_LOAD(lt, cublasLtMatmulPreferenceDestroy,
                       decltype(&::cublasLtMatmulPreferenceDestroy))
            PROBE_LOAD(lt, cublasLtMatmulPreferenceSetAttribute,
                       decltype(&::cublasLtMatmulPreferenceSetAttribute))
            PROBE_LOAD(lt, cublasLtMatmulAlgoGetHeuristic,
                       decltype(&::cublasLtMatmulAlgoGetHeuristic))
            PROBE_LOAD(lt, cublasLtMatmul, decltype(&::cublasLtMatmul))
        }
#undef PROBE_LOAD
        return blas_ok;
    }
    bool lt_ok() const { return lt.ok() && cublasLtMatmul && missing.empty(); }

    std::string status(cublasStatus_t s) const {
        const char* n = cublasGetStatusName ? cublasGetStatusName(s) : nullptr;
        return std::string(n ? n : "cublasStatus") + " (" + std::to_string(static_cast<int>(s)) +
               ")";
    }
    std::string path() const {
        std::string p = blas.path();
        return p.empty() ? blas.soname() : p;
    }
    // "13.1.0" from cublasGetProperty, or "" when it fails.
    std::string version() const {
        int major = 0, minor = 0, patch = 0;
        if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
            cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
            cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
            return {};
        return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    }
};
#undef PROBE_FN

// ---- Device memory ----------------------------------------------------------------------------

class DeviceBuffer {
  public:
    DeviceBuffer(const Runtime& rt) : m_rt(rt) {}
    ~DeviceBuffer() {
        if (m_ptr) m_rt.cudaFree(m_ptr);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    cudaError_t alloc(size_t bytes) { return m_rt.cudaMalloc(&m_ptr, bytes); }
    void* get() const { return m_ptr; }

  private:
    const Runtime& m_rt;
    void* m_ptr = nullptr;
};

// ---- One run ----------------------------------------------------------------------------------

struct Shape {
    long m, n, k;
};

struct Run {
    const DType* dtype = nullptr;
    Shape shape{0, 0, 0};
    bool done = false;  // the GEMM ran and was checked
    bool correct = false;
    double max_abs_err = 0, tolerance = 0;
    double tflops = NAN;
    int repeats = 0;
    std::string error;    // the probe could not run it (an API failure)
    std::string skipped;  // not applicable here (fp8 without support)
};

// Everything one GEMM call needs, for cublasGemmEx or cublasLtMatmul.
struct Gemm {
    const Runtime& rt;
    const Blas& blas;
    cublasHandle_t handle = nullptr;
    cublasLtHandle_t lt_handle = nullptr;
    // cuBLASLt state of the current fp8 run
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t heuristic{};
    void* workspace = nullptr;
    size_t workspace_bytes = 0;

    Gemm(const Runtime& r, const Blas& b) : rt(r), blas(b) {}
    ~Gemm() { release_lt(); }

    void release_lt() {
        if (pref) blas.cublasLtMatmulPreferenceDestroy(pref);
        if (la) blas.cublasLtMatrixLayoutDestroy(la);
        if (lb) blas.cublasLtMatrixLayoutDestroy(lb);
        if (lc) blas.cublasLtMatrixLayoutDestroy(lc);
        if (op) blas.cublasLtMatmulDescDestroy(op);
        pref = nullptr, la = lb = lc = nullptr, op = nullptr;
    }

    // Prepares the cuBLASLt fp8 matmul; "" when ready, else why not. `unsupported` tells a
    // missing algorithm (skip) from an API failure (error).
    std::string prepare_lt(const DType& d, const Shape& s, bool& unsupported) {
        unsupported = false;
        release_lt();
        cublasStatus_t st;
        auto fail = [&](const char* what) { return std::string(what) + ": " + blas.status(st); };
        if ((st = blas.cublasLtMatmulDescCreate(&op, d.compute, CUDA_R_32F)) !=
            CUBLAS_STATUS_SUCCESS)
            return fail("cublasLtMatmulDescCreate");
        int32_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        if ((st = blas.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta,
                                                      sizeof ta)) != CUBLAS_STATUS_SUCCESS ||
            (st = blas.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb,
                                                      sizeof tb)) != CUBLAS_STATUS_SUCCESS)
            return fail("cublasLtMatmulDescSetAttribute(TRANSA/B)");
        int8_t fast_accum = 0;  // the default, said explicitly: promote partial sums to fp32
        if ((st = blas.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                      &fast_accum, sizeof fast_accum)) !=
            CUBLAS_STATUS_SUCCESS)
            return fail("cublasLtMatmulDescSetAttribute(FAST_ACCUM)");
        if ((st = blas.cublasLtMatrixLayoutCreate(&la, d.in.type, s.k, s.m, s.k)) !=
                CUBLAS_STATUS_SUCCESS ||
            (st = blas.cublasLtMatrixLayoutCreate(&lb, d.in.type, s.k, s.n, s.k)) !=
                CUBLAS_STATUS_SUCCESS ||
            (st = blas.cublasLtMatrixLayoutCreate(&lc, d.out.type, s.m, s.n, s.m)) !=
                CUBLAS_STATUS_SUCCESS)
            return fail("cublasLtMatrixLayoutCreate");
        if ((st = blas.cublasLtMatmulPreferenceCreate(&pref)) != CUBLAS_STATUS_SUCCESS)
            return fail("cublasLtMatmulPreferenceCreate");
        uint64_t ws = workspace_bytes;
        uint32_t reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;  // or none; never in bf16
        if ((st = blas.cublasLtMatmulPreferenceSetAttribute(
                 pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) !=
                CUBLAS_STATUS_SUCCESS ||
            (st = blas.cublasLtMatmulPreferenceSetAttribute(
                 pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reduction, sizeof reduction)) !=
                CUBLAS_STATUS_SUCCESS)
            return fail("cublasLtMatmulPreferenceSetAttribute");
        int found = 0;
        heuristic = cublasLtMatmulHeuristicResult_t{};
        st = blas.cublasLtMatmulAlgoGetHeuristic(lt_handle, op, la, lb, lc, lc, pref, 1, &heuristic,
                                                 &found);
        if (st != CUBLAS_STATUS_SUCCESS || found < 1 || heuristic.state != CUBLAS_STATUS_SUCCESS) {
            unsupported = true;
            return "cuBLASLt has no fp8 (e4m3 x e4m3 -> bf16) algorithm for " +
                   std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                   " here: " +
                   (st != CUBLAS_STATUS_SUCCESS ? blas.status(st) : std::string("none found"));
        }
        return {};
    }

    cublasStatus_t run(const DType& d, const Shape& s, const void* a, const void* b,
                       void* c) const {
        const float alpha = 1.0f, beta = 0.0f;  // scale type fp32 for every configuration here
        if (d.lt)
            return blas.cublasLtMatmul(lt_handle, op, &alpha, a, la, b, lb, &beta, c, lc, c, lc,
                                       &heuristic.algo, workspace, heuristic.workspaceSize,
                                       nullptr);
        return blas.cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.m),
                                 static_cast<int>(s.n), static_cast<int>(s.k), &alpha, a, d.in.type,
                                 static_cast<int>(s.k), b, d.in.type, static_cast<int>(s.k), &beta,
                                 c, d.out.type, static_cast<int>(s.m), d.compute,
                                 CUBLAS_GEMM_DEFAULT);
    }
};

// Host operands, regenerated only when the shape or value range changes.
struct HostOperands {
    Shape shape{0, 0, 0};
    int range = -1;
    std::vector<int16_t> qa, qb;  // A(i,k) = qa[i*K + k], B(k,j) = qb[j*K + k]
    void make(const Shape& s, int r) {
        if (s.m == shape.m && s.n == shape.n && s.k == shape.k && r == range) return;
        shape = s, range = r;
        qa = random_ints(static_cast<size_t>(s.m) * s.k, r,
                         0x5EED0001ull + static_cast<uint64_t>(r));
        qb = random_ints(static_cast<size_t>(s.k) * s.n, r,
                         0x5EED0002ull + static_cast<uint64_t>(r));
    }
};

// The sampled output entries: the four corners and pseudo-random others, at least 64.
std::vector<std::pair<long, long>> sample_entries(const Shape& s, size_t count) {
    std::vector<std::pair<long, long>> out = {
        {0, 0}, {s.m - 1, s.n - 1}, {0, s.n - 1}, {s.m - 1, 0}};
    uint64_t seed = 0xC0FFEEull;
    while (out.size() < count)
        out.emplace_back(static_cast<long>(splitmix64(seed) % static_cast<uint64_t>(s.m)),
                         static_cast<long>(splitmix64(seed) % static_cast<uint64_t>(s.n)));
    return out;
}

// Correctness first, then timing. Fills run.done/correct/... or run.error/skipped.
void measure(Run& run, Gemm& gemm, HostOperands& host, const Runtime& rt, int warmup, int repeats) {
    const DType& d = *run.dtype;
    const Shape& s = run.shape;
    host.make(s, d.range);
    std::vector<unsigned char> ha, hb;
    if (!encode_all(host.qa, d.range, d.scale_log2, d.in, ha) ||
        !encode_all(host.qb, d.range, d.scale_log2, d.in, hb)) {
        run.error = "internal: input values are not exact in the input type";
        return;
    }
    if (d.lt) {
        bool unsupported = false;
        std::string why = gemm.prepare_lt(d, s, unsupported);
        if (!why.empty()) {
            (unsupported ? run.skipped : run.error) = why;
            return;
        }
    }
    DeviceBuffer da(rt), db(rt), dc(rt);
    const size_t c_bytes = static_cast<size_t>(s.m) * s.n * d.out.bytes;
    cudaError_t e;
    if ((e = da.alloc(ha.size())) != cudaSuccess || (e = db.alloc(hb.size())) != cudaSuccess ||
        (e = dc.alloc(c_bytes)) != cudaSuccess) {
        run.error = rt.describe("cudaMalloc", e);
        rt.cudaGetLastError();
        return;
    }
    if ((e = rt.cudaMemcpy(da.get(), ha.data(), ha.size(), cudaMemcpyHostToDevice)) !=
            cudaSuccess ||
        (e = rt.cudaMemcpy(db.get(), hb.data(), hb.size(), cudaMemcpyHostToDevice)) !=
            cudaSuccess ||
        (e = rt.cudaMemset(dc.get(), 0xFF, c_bytes)) !=
            cudaSuccess) {  // NaN-ish fill: unwritten output shows
        run.error = rt.describe("cudaMemcpy", e);
        return;
    }
    ha.clear(), ha.shrink_to_fit(), hb.clear(), hb.shrink_to_fit();

    // 1. Correctness.
    cublasStatus_t st = gemm.run(d, s, da.get(), db.get(), dc.get());
    if (st != CUBLAS_STATUS_SUCCESS) {
        run.error =
            std::string(d.lt ? "cublasLtMatmul" : "cublasGemmEx") + ": " + gemm.blas.status(st);
        return;
    }
    if ((e = rt.cudaDeviceSynchronize()) != cudaSuccess) {
        run.error = rt.describe("GEMM", e);
        return;
    }
    const double scale2 = std::ldexp(1.0, 2 * d.scale_log2);
    const double kd = static_cast<double>(s.k), gamma = kd * d.u_acc / (1 - kd * d.u_acc);
    double max_sum_abs = 0, max_abs_c = 0, max_err = 0;
    for (const auto& ij : sample_entries(s, 256)) {
        const long i = ij.first, j = ij.second;
        const int16_t* a = &host.qa[static_cast<size_t>(i) * s.k];
        const int16_t* b = &host.qb[static_cast<size_t>(j) * s.k];
        int64_t dot = 0, dot_abs = 0;  // exact: |q| <= 2048, K < 2^31
        for (long k = 0; k < s.k; ++k) {
            int64_t p = static_cast<int64_t>(a[k]) * b[k];
            dot += p;
            dot_abs += p < 0 ? -p : p;
        }
        const double ref = static_cast<double>(dot) * scale2,
                     sum_abs = static_cast<double>(dot_abs) * scale2;
        uint32_t bits = 0;
        const size_t offset = (static_cast<size_t>(j) * s.m + i) * d.out.bytes;
        if ((e = rt.cudaMemcpy(&bits, static_cast<const unsigned char*>(dc.get()) + offset,
                               d.out.bytes, cudaMemcpyDeviceToHost)) != cudaSuccess) {
            run.error = rt.describe("cudaMemcpy", e);
            return;
        }
        const double got = decode(bits, d.out.ebits, d.out.mbits);
        const double err = std::isfinite(got) ? std::fabs(got - ref) : INFINITY;
        max_err = std::max(max_err, err);
        max_sum_abs = std::max(max_sum_abs, sum_abs);
        max_abs_c = std::max(max_abs_c, std::fabs(ref));
    }
    run.tolerance = (2 * d.u_in + d.u_in * d.u_in + gamma) * max_sum_abs +
                    d.u_out * (max_abs_c + gamma * max_sum_abs);
    run.max_abs_err = max_err;
    run.correct = max_err <= run.tolerance;  // false for NaN/inf too
    run.done = true;

    // 2. Throughput: warm-up, then each repeat timed alone by a pair of events.
    for (int w = 0; w < warmup; ++w)
        if ((st = gemm.run(d, s, da.get(), db.get(), dc.get())) != CUBLAS_STATUS_SUCCESS) {
            run.error = "warm-up: " + gemm.blas.status(st);
            return;
        }
    cudaEvent_t start = nullptr, stop = nullptr;
    if ((e = rt.cudaEventCreate(&start)) != cudaSuccess ||
        (e = rt.cudaEventCreate(&stop)) != cudaSuccess) {
        run.error = rt.describe("cudaEventCreate", e);
        return;
    }
    std::vector<double> ms;
    for (int r = 0; r < repeats; ++r) {
        float t = 0;
        rt.cudaEventRecord(start, nullptr);
        st = gemm.run(d, s, da.get(), db.get(), dc.get());
        rt.cudaEventRecord(stop, nullptr);
        if (st != CUBLAS_STATUS_SUCCESS) {
            run.error = "timed run: " + gemm.blas.status(st);
            break;
        }
        if ((e = rt.cudaEventSynchronize(stop)) != cudaSuccess ||
            (e = rt.cudaEventElapsedTime(&t, start, stop)) != cudaSuccess) {
            run.error = rt.describe("timed run", e);
            break;
        }
        ms.push_back(t);
    }
    rt.cudaEventDestroy(start);
    rt.cudaEventDestroy(stop);
    if (!run.error.empty() || ms.empty()) return;
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    const double median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    run.repeats = static_cast<int>(n);
    if (median_ms > 0)
        run.tflops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) *
                     static_cast<double>(s.k) / (median_ms * 1e-3) / 1e12;
}

// ---- Flags ------------------------------------------------------------------------------------

bool parse_long(const std::string& s, long lo, long hi, long& out) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 12)
        return false;
    out = std::stol(s);
    return out >= lo && out <= hi;
}

bool parse_double(const std::string& s, double& out) {
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return !s.empty() && end && *end == '\0' && std::isfinite(out) && out > 0;
}

struct Options {
    std::vector<Shape> shapes;
    std::vector<const DType*> dtypes;
    int repeats = 20, warmup = 5, device = 0;
    std::map<std::string, double> peak;
};

// "" when the flags are good, else what is wrong with them.
std::string parse_options(const std::map<std::string, std::string>& flags, Options& o) {
    const long kMaxDim = 1L << 20;  // also keeps every leading dimension within int
    for (const auto& f : flags) {
        const std::string& key = f.first;
        const std::string& val = f.second;
        if (key == "sizes") {
            o.shapes.clear();
            for (const std::string& item : split(val, ',')) {
                std::vector<std::string> dims = split(item, 'x');
                long v[3];
                if (dims.size() != 1 && dims.size() != 3)
                    return "--sizes: \"" + item + "\" is neither N nor MxNxK";
                for (size_t i = 0; i < dims.size(); ++i)
                    if (!parse_long(dims[i], 1, kMaxDim, v[i]))
                        return "--sizes: \"" + item + "\" needs dimensions from 1 to " +
                               std::to_string(kMaxDim);
                o.shapes.push_back(dims.size() == 1 ? Shape{v[0], v[0], v[0]}
                                                    : Shape{v[0], v[1], v[2]});
            }
        } else if (key == "dtypes") {
            o.dtypes.clear();
            for (const std::string& item : split(val, ',')) {
                const DType* d = find_dtype(item);
                if (!d)
                    return "--dtypes: unknown dtype \"" + item + "\" (fp32, tf32, fp16, bf16, fp8)";
                if (std::find(o.dtypes.begin(), o.dtypes.end(), d) == o.dtypes.end())
                    o.dtypes.push_back(d);
            }
        } else if (key == "repeats" || key == "warmup" || key == "device") {
            long v = 0;
            if (!parse_long(val, key == "repeats" ? 1 : 0, 100000, v))
                return "--" + key + ": bad value \"" + val + "\"";
            (key == "repeats"  ? o.repeats
             : key == "warmup" ? o.warmup
                               : o.device) = static_cast<int>(v);
        } else if (key == "peak-tflops") {
            for (const std::string& item : split(val, ',')) {
                std::vector<std::string> kv = split(item, ':');
                double p = 0;
                if (kv.size() != 2 || !find_dtype(kv[0]) || !parse_double(kv[1], p))
                    return "--peak-tflops: \"" + item + "\" is not DTYPE:TFLOPS";
                o.peak[kv[0]] = p;
            }
        } else if (key == "?") {
            return "unexpected argument \"" + val + "\"";
        } else {
            return "unknown flag --" + key;
        }
    }
    if (o.shapes.empty()) o.shapes.push_back({8192, 8192, 8192});
    if (o.dtypes.empty())
        for (const DType& d : kDTypes) o.dtypes.push_back(&d);
    return {};
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
        data.set("results", Json::array());
        data.set("skipped", Json::array());
        data.set("error", gpus.error_json());
        return probe::finish(kName, gpus.usable() ? probe::kError : probe::kWaived, why, data);
    }

    cudaError_t e = rt.cudaSetDevice(opt.device);
    int major = 0, minor = 0;
    probe::cuda::compute_capability(rt, opt.device, major, minor);
    const std::string name = probe::cuda::device_name(opt.device);
    data.set("device", Json::object({{"index", opt.device},
                                     {"name", name.empty() ? Json() : Json(name)},
                                     {"cc", std::to_string(major) + "." + std::to_string(minor)}}));
    std::printf("gemm: device %d: %s, cc %d.%d\n", opt.device, name.c_str(), major, minor);

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

    HostOperands host;
    Json results = Json::array(), skipped = Json::array();
    int incorrect = 0, errors = 0;
    std::string first_problem;
    for (const Shape& s : opt.shapes) {
        for (const DType* d : opt.dtypes) {
            Run run;
            run.dtype = d;
            run.shape = s;
            if (d->lt && !fp8_unavailable.empty())
                run.skipped = fp8_unavailable;
            else {
                try {
                    measure(run, gemm, host, rt, opt.warmup, opt.repeats);
                } catch (const std::exception& ex) {  // std::bad_alloc for host operands too large
                    run.error = std::string("host: ") + ex.what();
                    host = HostOperands();
                }
            }
            const std::string shape =
                std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
            if (!run.skipped.empty()) {
                std::printf("gemm: %-4s %s skipped: %s\n", d->name, shape.c_str(),
                            run.skipped.c_str());
                skipped.push(Json::object({{"dtype", d->name},
                                           {"m", s.m},
                                           {"n", s.n},
                                           {"k", s.k},
                                           {"reason", run.skipped}}));
                continue;
            }
            if (run.done && !run.correct) {
                ++incorrect;
                if (first_problem.empty())
                    first_problem = std::string(d->name) + " " + shape +
                                    " incorrect: max_abs_err " + Json(run.max_abs_err).text() +
                                    " > tolerance " + Json(run.tolerance).text();
            }
            if (!run.error.empty()) {
                ++errors;
                if (first_problem.empty())
                    first_problem = std::string(d->name) + " " + shape + ": " + run.error;
            }
            auto peak = opt.peak.find(d->name);
            const bool has_peak = peak != opt.peak.end();
            std::printf("gemm: %-4s %s %s max_abs_err %g (tolerance %g), %.1f TFLOP/s%s%s\n",
                        d->name, shape.c_str(),
                        !run.done     ? "NOT RUN"
                        : run.correct ? "correct"
                                      : "INCORRECT",
                        run.max_abs_err, run.tolerance,
                        std::isfinite(run.tflops) ? run.tflops : 0.0,
                        run.error.empty() ? "" : "; error: ", run.error.c_str());
            Json r = Json::object(
                {{"dtype", d->name},
                 {"m", s.m},
                 {"n", s.n},
                 {"k", s.k},
                 {"correct", run.done ? Json(run.correct) : Json()},
                 {"max_abs_err", run.done ? Json(run.max_abs_err) : Json()},
                 {"tolerance", run.done ? Json(run.tolerance) : Json()},
                 {"tflops_median", Json(run.tflops)},
                 {"repeats", run.repeats},
                 {"peak_tflops", has_peak ? Json(peak->second) : Json()},
                 {"fraction_of_peak", has_peak ? Json(run.tflops / peak->second) : Json()}});
            r.set("error", run.error.empty() ? Json() : Json(run.error));
            results.push(r);
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
