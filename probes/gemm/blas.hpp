#pragma once
// cuBLAS and cuBLASLt as probe-gemm uses them: dlopened by versioned soname (never linked),
// one GEMM call for either API, and device memory. The configurations are in dtypes.hpp.
//
// All operands are in the "TN" layout cuBLAS (and fp8, which requires it) prefer: A is stored
// as A^T, column-major K x M (lda = K), op(A) = T; B column-major K x N (ldb = K), op(B) = N;
// C column-major M x N (ldc = M). So A(i,k) = a[i*K + k], B(k,j) = b[j*K + k], C(i,j) = c[j*M + i].
// In row-major terms (torch's): A is an M x K row-major tensor, B the transpose of an N x K
// row-major tensor, which is the layout torch.matmul and torch._scaled_mm hand to cuBLAS as TN.
#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>

#include <cstdint>
#include <string>

#include "../cuda/cudart.hpp"
#include "dtypes.hpp"

namespace gemm {

struct Shape {
    long m, n, k;
};

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
    DeviceBuffer(const probe::cuda::Runtime& rt) : m_rt(rt) {}
    ~DeviceBuffer() {
        if (m_ptr) m_rt.cudaFree(m_ptr);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    cudaError_t alloc(size_t bytes) { return m_rt.cudaMalloc(&m_ptr, bytes); }
    void* get() const { return m_ptr; }

  private:
    const probe::cuda::Runtime& m_rt;
    void* m_ptr = nullptr;
};

// Everything one GEMM call needs, for cublasGemmEx or cublasLtMatmul.
struct Gemm {
    const probe::cuda::Runtime& rt;
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

    Gemm(const probe::cuda::Runtime& r, const Blas& b) : rt(r), blas(b) {}
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
        if ((st = blas.cublasLtMatrixLayoutCreate(&la, d.in_type, s.k, s.m, s.k)) !=
                CUBLAS_STATUS_SUCCESS ||
            (st = blas.cublasLtMatrixLayoutCreate(&lb, d.in_type, s.k, s.n, s.k)) !=
                CUBLAS_STATUS_SUCCESS ||
            (st = blas.cublasLtMatrixLayoutCreate(&lc, d.out_type, s.m, s.n, s.m)) !=
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
                                 static_cast<int>(s.n), static_cast<int>(s.k), &alpha, a, d.in_type,
                                 static_cast<int>(s.k), b, d.in_type, static_cast<int>(s.k), &beta,
                                 c, d.out_type, static_cast<int>(s.m), d.compute,
                                 CUBLAS_GEMM_DEFAULT);
    }
};

}  // namespace gemm
