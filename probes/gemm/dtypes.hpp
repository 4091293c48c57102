#pragma once
// The GEMM configurations of probe-gemm: per dtype the input and output formats, the cuBLAS
// types and compute type, the correctness operands' value range, and the unit roundoffs of
// the tolerance derivation in README.md.
#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>

#include <string>

#include "number_formats.hpp"

namespace gemm {

struct DType {
    const char* name;
    Format in, out;
    cudaDataType in_type, out_type;
    cublasComputeType_t compute;
    bool lt;         // through cublasLtMatmul
    int range;       // correctness operands: q in [-range, range]
    int scale_log2;  // value = q * 2^scale_log2
    double u_in, u_acc, u_out;
    // Timed-output check: max |C - FP64 reference| <= rel * sqrt(K) on uniform(-1,1) operands,
    // the rule (and factors) of the torch probe's matmul check, so both sides are judged alike.
    double timed_rel;
};
const DType kDTypes[] = {
    {"fp32", kF32, kF32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, false, 2048, -11, 0.0, 0x1p-24,
     0x1p-24, 1e-4},
    {"tf32", kF32, kF32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, false, 2048, -11,
     0x1p-10, 0x1p-24, 0x1p-24, 0x1p-7},
    {"fp16", kF16, kF16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, false, 2, -2, 0.0, 0x1p-24,
     0x1p-11, 0x1p-7},
    {"bf16", kBF16, kBF16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, false, 2, -2, 0.0, 0x1p-24,
     0x1p-8, 0x1p-5},
    {"fp8", kE4M3, kBF16, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, true, 2, -2, 0.0,
     0x1p-24, 0x1p-8, 0x1p-5},
};
inline const DType* find_dtype(const std::string& name) {
    for (const DType& d : kDTypes)
        if (name == d.name) return &d;
    return nullptr;
}

}  // namespace gemm
