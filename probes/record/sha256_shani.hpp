#pragma once
// SHA-256 block function on the x86 SHA extensions (SHA-NI: sha256rnds2, sha256msg1,
// sha256msg2), compiled for those instructions with a target attribute so the rest of the
// probe stays baseline x86-64; sha256_select() calls it only when CPUID says the CPU has
// SHA, SSSE3 and SSE4.1. On other architectures the portable function is the only one.
#include <cstddef>
#include <cstdint>

#include "sha256.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace record {

#if defined(__x86_64__)

#define RECORD_SHANI_TARGET __attribute__((target("sha,sse4.1,ssse3")))

// Four rounds of group `g` with message words `msg` (already in host word order).
RECORD_SHANI_TARGET inline void sha_ni_rounds(__m128i& abef, __m128i& cdgh, __m128i msg, int g) {
    const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kSha256K[4 * g]));
    __m128i wk = _mm_add_epi32(msg, k);
    cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
    wk = _mm_shuffle_epi32(wk, 0x0E);
    abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);
}

RECORD_SHANI_TARGET inline void sha256_blocks_shani(std::uint32_t state[8],
                                                    const unsigned char* data, std::size_t blocks) {
    // Big-endian words of the message into host order, four at a time.
    const __m128i byteswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    // The instructions keep the state as ABEF and CDGH rather than ABCD and EFGH.
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<__m128i*>(&state[0])), 0xB1);
    __m128i cdgh = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<__m128i*>(&state[4])), 0x1B);
    __m128i abef = _mm_alignr_epi8(tmp, cdgh, 8);
    cdgh = _mm_blend_epi16(cdgh, tmp, 0xF0);

    for (; blocks > 0; --blocks, data += 64) {
        const __m128i abef_saved = abef, cdgh_saved = cdgh;
        // Both loops unrolled (w[] in registers, the schedule of the next group computed
        // while this group's rounds run): 1.24 -> 1.80 GB/s a thread (bench/record_hash_bench).
        __m128i w[4];  // the last 16 message words, as groups g % 4
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
            w[g] = _mm_shuffle_epi8(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * g)), byteswap);
            sha_ni_rounds(abef, cdgh, w[g], g);
        }
#pragma GCC unroll 12
        for (int g = 4; g < 16; ++g) {
            // W[t] = W[t-16] + s0(W[t-15]) + W[t-7] + s1(W[t-2]), four words at once.
            const __m128i& prev1 = w[(g - 1) & 3];
            const __m128i& prev2 = w[(g - 2) & 3];
            __m128i next = _mm_sha256msg1_epu32(w[g & 3], w[(g - 3) & 3]);
            next = _mm_add_epi32(next, _mm_alignr_epi8(prev1, prev2, 4));
            next = _mm_sha256msg2_epu32(next, prev1);
            w[g & 3] = next;
            sha_ni_rounds(abef, cdgh, next, g);
        }
        abef = _mm_add_epi32(abef, abef_saved);
        cdgh = _mm_add_epi32(cdgh, cdgh_saved);
    }

    tmp = _mm_shuffle_epi32(abef, 0x1B);
    cdgh = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), _mm_blend_epi16(tmp, cdgh, 0xF0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), _mm_alignr_epi8(cdgh, tmp, 8));
}

inline bool cpu_has_sha_ni() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const bool ssse3 = c & (1u << 9), sse41 = c & (1u << 19);
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool sha = b & (1u << 29);
    return ssse3 && sse41 && sha;
}

#undef RECORD_SHANI_TARGET

#else

inline bool cpu_has_sha_ni() { return false; }

#endif

// The block function to use: SHA-NI when the CPU has it and `force_portable` is false.
// `name` becomes "sha-ni" or "portable" (the probe reports it as data.sha_impl).
inline Sha256BlockFn sha256_select([[maybe_unused]] bool force_portable, const char** name) {
#if defined(__x86_64__)
    if (!force_portable && cpu_has_sha_ni()) {
        *name = "sha-ni";
        return sha256_blocks_shani;
    }
#endif
    *name = "portable";
    return sha256_blocks_portable;
}

}  // namespace record
