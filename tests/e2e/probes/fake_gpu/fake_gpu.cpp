// A pretend GPU on the CPU, for testing probe-gemm's GPU code path on machines without one:
// the few functions of libcudart, libcuda, libcublas, libcublasLt and libnvidia-ml that the
// probe dlopens, built into one shared library and symlinked under each soname (the loader
// maps the one file once, so they share state). Memory is host memory, GEMMs run on the CPU
// (FP64 accumulation, output rounded to nearest even), events read the host clock.
// Not a CUDA emulator: only what probe-gemm calls, with the signatures of the real headers.
//
// Environment: FAKE_GPU_CC ("9.0" default; "8.0" makes fp8 unavailable), FAKE_GPU_WRONG=1
// (every GEMM's entry (0,0) is off by 1), FAKE_GPU_NO_NVML_DEVICE=1 (NVML finds no device).
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "number_formats.hpp"

struct CUevent_st {
    double ms = 0;
};
struct cublasContext {
    int math = 0;
};
struct cublasLtContext {
    int unused = 0;
};

namespace {

int cc_major() { return std::atoi(std::getenv("FAKE_GPU_CC") ? std::getenv("FAKE_GPU_CC") : "9"); }
int cc_minor() {
    const char* cc = std::getenv("FAKE_GPU_CC");
    const char* dot = cc ? std::strchr(cc, '.') : nullptr;
    return dot ? std::atoi(dot + 1) : 0;
}
double now_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
const gemm::Format* format_of(cudaDataType t) {
    switch (t) {
        case CUDA_R_32F:
            return &gemm::kF32;
        case CUDA_R_16F:
            return &gemm::kF16;
        case CUDA_R_16BF:
            return &gemm::kBF16;
        case CUDA_R_8F_E4M3:
            return &gemm::kE4M3;
        default:
            return nullptr;
    }
}
std::vector<double> to_doubles(const void* p, size_t count, const gemm::Format& f) {
    std::vector<double> out(count);
    const unsigned char* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < count; ++i) {
        uint32_t code = 0;
        std::memcpy(&code, b + i * f.bytes, f.bytes);
        out[i] = gemm::decode(code, f.ebits, f.mbits);
    }
    return out;
}
// C = op(A) op(B), column-major, the TN case only (what the probe uses): A is k x m (lda),
// B is k x n (ldb), C is m x n (ldc).
cublasStatus_t gemm_tn(int m, int n, int k, const void* a, cudaDataType ta, int lda, const void* b,
                       cudaDataType tb, int ldb, void* c, cudaDataType tc, int ldc) {
    const gemm::Format *fa = format_of(ta), *fb = format_of(tb), *fc = format_of(tc);
    if (!fa || !fb || !fc || lda < k || ldb < k || ldc < m) return CUBLAS_STATUS_NOT_SUPPORTED;
    const std::vector<double> da = to_doubles(a, static_cast<size_t>(lda) * m, *fa);
    const std::vector<double> db = to_doubles(b, static_cast<size_t>(ldb) * n, *fb);
    const bool wrong = std::getenv("FAKE_GPU_WRONG") != nullptr;
    unsigned char* out = static_cast<unsigned char*>(c);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double s = 0;
            for (int kk = 0; kk < k; ++kk)
                s += da[static_cast<size_t>(i) * lda + kk] * db[static_cast<size_t>(j) * ldb + kk];
            if (wrong && i == 0 && j == 0) s += 1;
            const float x = static_cast<float>(s);
            uint32_t bits = 0;
            std::memcpy(&bits, &x, sizeof bits);
            bits = gemm::round_from_f32(bits, *fc);
            std::memcpy(out + (static_cast<size_t>(j) * ldc + i) * fc->bytes, &bits, fc->bytes);
        }
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

// ---- libcudart ------------------------------------------------------------------------------
cudaError_t cudaRuntimeGetVersion(int* v) { return *v = 13000, cudaSuccess; }
cudaError_t cudaDriverGetVersion(int* v) { return *v = 13000, cudaSuccess; }
cudaError_t cudaGetDeviceCount(int* n) { return *n = 1, cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr attr, int device) {
    if (device != 0) return cudaErrorInvalidDevice;
    switch (attr) {
        case cudaDevAttrComputeCapabilityMajor:
            return *v = cc_major(), cudaSuccess;
        case cudaDevAttrComputeCapabilityMinor:
            return *v = cc_minor(), cudaSuccess;
        case cudaDevAttrPciDomainId:
            return *v = 0, cudaSuccess;
        case cudaDevAttrPciBusId:
            return *v = 7, cudaSuccess;
        case cudaDevAttrPciDeviceId:
            return *v = 0, cudaSuccess;
        default:
            return cudaErrorInvalidValue;
    }
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
    *free_bytes = *total = size_t{1} << 30;
    return cudaSuccess;
}
cudaError_t cudaMalloc(void** p, size_t size) {
    *p = std::malloc(size ? size : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void* p) { return std::free(p), cudaSuccess; }
cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind) {
    return std::memcpy(dst, src, n), cudaSuccess;
}
cudaError_t cudaMemset(void* p, int value, size_t n) {
    return std::memset(p, value, n), cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaEventCreate(cudaEvent_t* e) { return *e = new CUevent_st, cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) { return e->ms = now_ms(), cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
    return *ms = static_cast<float>(b->ms - a->ms), cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) { return delete e, cudaSuccess; }
const char* cudaGetErrorName(cudaError_t) { return "cudaErrorFake"; }
const char* cudaGetErrorString(cudaError_t) { return "fake error"; }
cudaError_t cudaGetLastError() { return cudaSuccess; }

// ---- libcuda ---------------------------------------------------------------------------------
CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice* d, int ordinal) { return *d = ordinal, CUDA_SUCCESS; }
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
    std::strncpy(name, "Fake GPU (CPU)", static_cast<size_t>(len));
    return CUDA_SUCCESS;
}

// ---- libcublas -------------------------------------------------------------------------------
cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
    return *h = new cublasContext, CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) { return delete h, CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) {
    return h->math = static_cast<int>(m), CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetProperty(libraryPropertyType t, int* v) {
    *v = t == MAJOR_VERSION ? 13 : t == MINOR_VERSION ? 1 : 0;
    return CUBLAS_STATUS_SUCCESS;
}
const char* cublasGetStatusName(cublasStatus_t) { return "CUBLAS_STATUS_FAKE"; }
cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const void*, const void* a, cudaDataType atype, int lda,
                            const void* b, cudaDataType btype, int ldb, const void*, void* c,
                            cudaDataType ctype, int ldc, cublasComputeType_t, cublasGemmAlgo_t) {
    if (ta != CUBLAS_OP_T || tb != CUBLAS_OP_N) return CUBLAS_STATUS_NOT_SUPPORTED;
    return gemm_tn(m, n, k, a, atype, lda, b, btype, ldb, c, ctype, ldc);
}

// ---- libcublasLt (a layout keeps type, rows, cols, ld in data[0..3]) -------------------------
cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) {
    return *h = new cublasLtContext, CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) { return delete h, CUBLAS_STATUS_SUCCESS; }
size_t cublasLtGetVersion() { return 130100; }
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t,
                                        cudaDataType) {
    return *d = new cublasLtMatmulDescOpaque_t(), CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
    return delete d, CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t,
                                              const void*, size_t) {
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
    *l = new cublasLtMatrixLayoutOpaque_t();
    (*l)->data[0] = static_cast<uint64_t>(type), (*l)->data[1] = rows, (*l)->data[2] = cols;
    (*l)->data[3] = static_cast<uint64_t>(ld);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
    return delete l, CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) {
    return *p = new cublasLtMatmulPreferenceOpaque_t(), CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
    return delete p, CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                                    cublasLtMatmulPreferenceAttributes_t,
                                                    const void*, size_t) {
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t,
                                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                              cublasLtMatmulPreference_t, int requested,
                                              cublasLtMatmulHeuristicResult_t* out, int* found) {
    // like cuBLASLt for fp8: dimensions must be multiples of 16
    if (requested < 1 || a->data[1] % 16 || a->data[2] % 16)
        return *found = 0, CUBLAS_STATUS_NOT_SUPPORTED;
    *out = cublasLtMatmulHeuristicResult_t{};
    out->state = CUBLAS_STATUS_SUCCESS;
    return *found = 1, CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void* a,
                              cublasLtMatrixLayout_t la, const void* b, cublasLtMatrixLayout_t lb,
                              const void*, const void*, cublasLtMatrixLayout_t, void* d,
                              cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t*, void*, size_t,
                              cudaStream_t) {
    // TRANSA = T: A's layout is k x m; B's k x n; D's m x n
    return gemm_tn(static_cast<int>(la->data[2]), static_cast<int>(lb->data[2]),
                   static_cast<int>(la->data[1]), a, static_cast<cudaDataType>(la->data[0]),
                   static_cast<int>(la->data[3]), b, static_cast<cudaDataType>(lb->data[0]),
                   static_cast<int>(lb->data[3]), d, static_cast<cudaDataType>(ld->data[0]),
                   static_cast<int>(ld->data[3]));
}

// ---- libnvidia-ml: SM clock falls from 1980 to 1755 MHz over the first samples ---------------
static int g_clock_reads = 0;
int nvmlInit_v2() { return 0; }
const char* nvmlErrorString(int r) { return r == 6 ? "Not Found" : "Unknown Error"; }
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, void** device) {
    static int handle = 0;
    if (std::getenv("FAKE_GPU_NO_NVML_DEVICE") || std::string(bus) != "0000:07:00.0") return 6;
    return *device = &handle, 0;
}
int nvmlDeviceGetClockInfo(void*, int type, unsigned* mhz) {
    if (type != 1) return 3;  // NVML_ERROR_NOT_SUPPORTED: only the SM clock is asked for
    const int step = g_clock_reads++;
    *mhz = static_cast<unsigned>(step >= 3 ? 1755 : 1980 - 75 * step);
    return 0;
}
int nvmlDeviceGetMaxClockInfo(void*, int, unsigned* mhz) { return *mhz = 1980, 0; }
int nvmlDeviceGetPowerUsage(void*, unsigned* mw) { return *mw = 699500, 0; }
int nvmlDeviceGetEnforcedPowerLimit(void*, unsigned* mw) { return *mw = 700000, 0; }
int nvmlDeviceGetTemperature(void*, int, unsigned* c) { return *c = 61, 0; }
int nvmlDeviceGetCurrentClocksEventReasons(void*, unsigned long long* bits) {
    return *bits = 0x4, 0;
}

}  // extern "C"
