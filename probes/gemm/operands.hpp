#pragma once
// The GEMM probe's operands: the number formats it uses (exact encode/decode of small values),
// the dtype table behind the tolerance derivation in main.cpp, and deterministic host data.
#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gemm {

// ---- Number formats ---------------------------------------------------------------------------

// Bits of an exactly representable value v in a binary format with `ebits` exponent and
// `mbits` mantissa bits (IEEE-style bias, subnormals; e4m3's missing infinities do not matter
// for the small values used here). Returns false when v is not exact in that format.
inline bool encode_exact(double v, int ebits, int mbits, uint32_t& bits) {
    const int bias = (1 << (ebits - 1)) - 1;
    uint32_t sign = std::signbit(v) ? 1u : 0u;
    double a = std::fabs(v);
    bits = sign << (ebits + mbits);
    if (a == 0) return true;
    int e = 0;
    double f = std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
    int exponent = e - 1;          // a = (2f) * 2^exponent, 2f in [1, 2)
    int biased = exponent + bias;
    double mant;
    if (biased >= 1) {
        if (biased >= (1 << ebits) - 1) return false;
        mant = (2 * f - 1) * std::ldexp(1.0, mbits);
    } else {  // subnormal: a = mant * 2^(1 - bias - mbits)
        biased = 0;
        mant = a * std::ldexp(1.0, bias - 1 + mbits);
    }
    if (mant != std::floor(mant) || mant >= std::ldexp(1.0, mbits)) return false;
    bits |= (static_cast<uint32_t>(biased) << mbits) | static_cast<uint32_t>(mant);
    return true;
}

inline double decode(uint32_t bits, int ebits, int mbits) {
    const int bias = (1 << (ebits - 1)) - 1;
    double sign = (bits >> (ebits + mbits)) & 1u ? -1.0 : 1.0;
    uint32_t biased = (bits >> mbits) & ((1u << ebits) - 1);
    uint32_t mant = bits & ((1u << mbits) - 1);
    if (biased == (1u << ebits) - 1 && ebits > 4) return mant ? NAN : sign * INFINITY;  // not e4m3
    if (biased == 0) return sign * std::ldexp(static_cast<double>(mant), 1 - bias - mbits);
    return sign * std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -mbits),
                             static_cast<int>(biased) - bias);
}

struct Format {
    cudaDataType type;
    size_t bytes;
    int ebits, mbits;  // fp32: 8, 23; fp16: 5, 10; bf16: 8, 7; e4m3: 4, 3
};
const Format kF32{CUDA_R_32F, 4, 8, 23};
const Format kF16{CUDA_R_16F, 2, 5, 10};
const Format kBF16{CUDA_R_16BF, 2, 8, 7};
const Format kE4M3{CUDA_R_8F_E4M3, 1, 4, 3};

// One GEMM configuration (see the tolerance derivation at the top).
struct DType {
    const char* name;
    Format in, out;
    cublasComputeType_t compute;
    bool lt;         // through cublasLtMatmul
    int range;       // q in [-range, range]
    int scale_log2;  // value = q * 2^scale_log2
    double u_in, u_acc, u_out;
};
const DType kDTypes[] = {
    {"fp32", kF32, kF32, CUBLAS_COMPUTE_32F, false, 2048, -11, 0.0, 0x1p-24, 0x1p-24},
    {"tf32", kF32, kF32, CUBLAS_COMPUTE_32F_FAST_TF32, false, 2048, -11, 0x1p-10, 0x1p-24, 0x1p-24},
    {"fp16", kF16, kF16, CUBLAS_COMPUTE_32F, false, 2, -2, 0.0, 0x1p-24, 0x1p-11},
    {"bf16", kBF16, kBF16, CUBLAS_COMPUTE_32F, false, 2, -2, 0.0, 0x1p-24, 0x1p-8},
    {"fp8", kE4M3, kBF16, CUBLAS_COMPUTE_32F, true, 2, -2, 0.0, 0x1p-24, 0x1p-8},
};
inline const DType* find_dtype(const std::string& name) {
    for (const DType& d : kDTypes)
        if (name == d.name) return &d;
    return nullptr;
}

// ---- Host data --------------------------------------------------------------------------------

inline uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The integers q of one operand, deterministic for (seed, range).
inline std::vector<int16_t> random_ints(size_t count, int range, uint64_t seed) {
    std::vector<int16_t> q(count);
    const uint64_t span = static_cast<uint64_t>(2 * range + 1);
    for (auto& x : q)
        x = static_cast<int16_t>(static_cast<int64_t>(splitmix64(seed) % span) - range);
    return q;
}

// Device bytes of q * 2^scale_log2 in `f`, through a table of the 2*range+1 encodings.
inline bool encode_all(const std::vector<int16_t>& q, int range, int scale_log2, const Format& f,
                       std::vector<unsigned char>& out) {
    std::vector<uint32_t> table(2 * range + 1);
    for (int v = -range; v <= range; ++v) {
        double x = std::ldexp(static_cast<double>(v), scale_log2);
        if (!encode_exact(x, f.ebits, f.mbits, table[v + range])) return false;
        if (decode(table[v + range], f.ebits, f.mbits) != x) return false;
    }
    out.resize(q.size() * f.bytes);
    unsigned char* p = out.data();
    for (size_t i = 0; i < q.size(); ++i, p += f.bytes) {
        uint32_t b = table[q[i] + range];
        std::memcpy(p, &b, f.bytes);  // little-endian: the low bytes hold the value
    }
    return true;
}

}  // namespace gemm
