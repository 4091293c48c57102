#pragma once
// The binary number formats of the GEMM probe (fp32, fp16, bf16, fp8 e4m3): exact encoding
// of small values, decoding, and round-to-nearest-even from fp32. Pure C++17, no CUDA header,
// so the unit tests (tests/unit/probes) compile it as well.
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace gemm {

struct Format {
    const char* name;  // "f32", "f16", "bf16", "e4m3"
    std::size_t bytes;
    int ebits, mbits;  // fp32: 8, 23; fp16: 5, 10; bf16: 8, 7; e4m3: 4, 3
    int bias() const { return (1 << (ebits - 1)) - 1; }
};
const Format kF32{"f32", 4, 8, 23};
const Format kF16{"f16", 2, 5, 10};
const Format kBF16{"bf16", 2, 8, 7};
const Format kE4M3{"e4m3", 1, 4, 3};

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

// The bits of the fp32 value `f32` (its IEEE bit pattern) rounded to nearest, ties to even, in
// `to`: what the hardware and torch's .to(dtype) do. Contract: f32 is finite and its magnitude
// is at most the largest finite value of `to` (there is no overflow or saturation handling;
// the probe converts values in [-1, 1] only), and `to` has no more mantissa bits than fp32
// and a minimum exponent no smaller than fp32's (true of every Format above).
inline uint32_t round_from_f32(uint32_t f32, const Format& to) {
    const uint32_t sign = f32 >> 31;
    const int e = static_cast<int>((f32 >> 23) & 0xFFu);
    const uint32_t m = f32 & 0x7FFFFFu;
    const uint32_t sign_bit = sign << (to.ebits + to.mbits);
    if (e == 0 && m == 0) return sign_bit;
    // value = sig * 2^(exp - 23), sig with the implicit bit for normals
    const uint32_t sig = e ? (m | 0x800000u) : m;
    const int exp = e ? e - 127 : -126;
    const int emin = 1 - to.bias();  // smallest normal exponent of the target
    // Exponent of the target's unit in the last place at this value: fp32 subnormals lie
    // below every target's smallest normal, so they fall in its subnormal spacing.
    const int lead = e ? exp : emin - 1;
    int q = (lead > emin ? lead : emin) - to.mbits;
    const int shift = q - (exp - 23);  // bits of sig below the target's last place, >= 0
    uint32_t r;
    if (shift == 0) {
        r = sig;
    } else if (shift > 25) {
        r = 0;  // below half the smallest subnormal: rounds to zero
    } else {
        // sig + half - 1 rounds up above the half; + the kept lowest bit breaks a tie to even
        // (no branch: the low bits of random data would defeat a branch predictor).
        r = (sig + (1u << (shift - 1)) - 1 + ((sig >> shift) & 1u)) >> shift;
    }
    if (r == 0) return sign_bit;
    const uint32_t one = 1u << to.mbits;
    if (r < one) return sign_bit | r;  // subnormal (biased exponent 0)
    if (r == 2 * one) r = one, ++q;    // rounding carried into the next binade
    const uint32_t biased = static_cast<uint32_t>(q + to.mbits + to.bias());
    return sign_bit | (biased << to.mbits) | (r - one);
}

}  // namespace gemm
