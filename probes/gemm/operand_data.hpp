#pragma once
// The GEMM probe's operand data, made on the host. Two kinds:
//
// * correctness operands: q * 2^s with small integers q (a fifth of them zeros for R = 2),
//   exact in every input format, so an FP64 host reference is exact (main.cpp's tolerance);
// * timing operands: uniform random values in [-1, 1) rounded to the input format, the
//   distribution torch.rand(...) * 2 - 1 gives, with full mantissa entropy. Tensor-core GEMMs
//   are power-limited and draw less power on low-entropy or zero-rich data, so only these
//   give the throughput users see.
//
// Both are deterministic functions of (seed, index): element i comes from splitmix64's mix of
// seed + (i + 1) * golden, a counter-based generator, so any split into threads gives the same
// bytes. Also here: statistics of operand bytes (distinct values, entropy, zeros, bit balance)
// reported in the probe's JSON, and CRC-32 (zlib's polynomial) to show that two programs timed
// identical bytes. Pure C++17 (threads only), no CUDA header.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "number_formats.hpp"

namespace gemm {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// splitmix64: the next value of the sequence that starts at `state`.
inline uint64_t splitmix64(uint64_t& state) { return mix64(state += kGolden); }

// Element i of the counter-based stream `seed` (equal to the i-th splitmix64(seed) call).
inline uint64_t random_at(uint64_t seed, uint64_t i) { return mix64(seed + (i + 1) * kGolden); }

// ---- Correctness operands ----------------------------------------------------------------------

// The integers q of one operand, uniform in [-range, range], deterministic for (seed, range).
inline std::vector<int16_t> random_ints(std::size_t count, int range, uint64_t seed) {
    std::vector<int16_t> q(count);
    const uint64_t span = static_cast<uint64_t>(2 * range + 1);
    for (auto& x : q)
        x = static_cast<int16_t>(static_cast<int64_t>(splitmix64(seed) % span) - range);
    return q;
}

// Device bytes of q * 2^scale_log2 in `f`, through a table of the 2*range+1 encodings; false
// when a value is not exact in `f`.
inline bool encode_all(const std::vector<int16_t>& q, int range, int scale_log2, const Format& f,
                       std::vector<unsigned char>& out) {
    std::vector<uint32_t> table(static_cast<std::size_t>(2 * range + 1));
    for (int v = -range; v <= range; ++v) {
        double x = std::ldexp(static_cast<double>(v), scale_log2);
        uint32_t& code = table[static_cast<std::size_t>(v + range)];
        if (!encode_exact(x, f.ebits, f.mbits, code)) return false;
        if (decode(code, f.ebits, f.mbits) != x) return false;
    }
    out.resize(q.size() * f.bytes);
    unsigned char* p = out.data();
    for (std::size_t i = 0; i < q.size(); ++i, p += f.bytes) {
        uint32_t b = table[static_cast<std::size_t>(q[i] + range)];
        std::memcpy(p, &b, f.bytes);  // little-endian: the low bytes hold the value
    }
    return true;
}

// ---- Timing operands ---------------------------------------------------------------------------

constexpr const char* kUniformDistribution = "uniform(-1,1)";

// The fp32 bits of element i: a multiple of 2^-23 in [-1, 1), each of the 2^24 equally likely
// (exact in fp32, like torch.rand's 24-bit floats scaled to [-1, 1)).
inline uint32_t uniform_f32_bits(uint64_t seed, uint64_t i) {
    const int32_t u = static_cast<int32_t>(random_at(seed, i) >> 40);  // 24 random bits
    const float x = static_cast<float>(u - (1 << 23)) * 0x1p-23f;
    uint32_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
}

// `count` uniform(-1,1) values rounded (to nearest even) to `f`, as device bytes; `threads`
// 0 = as many as the machine has (at most 16). The same bytes for any thread count.
inline std::vector<unsigned char> uniform_operand(const Format& f, std::size_t count, uint64_t seed,
                                                  unsigned threads = 0) {
    std::vector<unsigned char> out(count * f.bytes);
    // The element width as a constant, so the copy of each element is a plain store.
    auto fill_as = [&](auto width, std::size_t begin, std::size_t end) {
        constexpr std::size_t w = decltype(width)::value;
        unsigned char* p = out.data() + begin * w;
        for (std::size_t i = begin; i < end; ++i, p += w) {
            const uint32_t bits = round_from_f32(uniform_f32_bits(seed, i), f);
            std::memcpy(p, &bits, w);  // little-endian
        }
    };
    auto fill = [&](std::size_t begin, std::size_t end) {
        if (f.bytes == 4) fill_as(std::integral_constant<std::size_t, 4>(), begin, end);
        if (f.bytes == 2) fill_as(std::integral_constant<std::size_t, 2>(), begin, end);
        if (f.bytes == 1) fill_as(std::integral_constant<std::size_t, 1>(), begin, end);
    };
    if (threads == 0) threads = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
    const std::size_t per = std::max<std::size_t>(1 << 20, (count + threads - 1) / threads);
    std::vector<std::thread> pool;
    for (std::size_t begin = per; begin < count; begin += per)
        pool.emplace_back(fill, begin, std::min(count, begin + per));
    fill(0, std::min(count, per));
    for (auto& t : pool) t.join();
    return out;
}

// ---- Statistics of operand bytes ---------------------------------------------------------------

struct OperandStats {
    std::size_t sampled = 0;      // elements looked at
    std::size_t distinct = 0;     // distinct bit patterns among them
    double entropy_bits = 0;      // Shannon entropy of the patterns, bits per element
    double zero_fraction = 0;     // +0 and -0
    double bit_entropy = 0;       // mean over bit positions of H(fraction of ones), 0..1:
                                  // how much each bit toggles, which is what costs power
    double max_entropy_bits = 0;  // what the sample could show: min(width, log2(sampled))
};

// Statistics of up to `max_sample` elements of `width` bytes (evenly spaced through the data).
inline OperandStats operand_stats(const unsigned char* data, std::size_t count, std::size_t width,
                                  std::size_t max_sample = 1u << 20) {
    OperandStats s;
    if (count == 0 || width == 0 || width > 4) return s;
    const std::size_t n = std::min(count, max_sample), stride = count / n;
    const std::size_t bits = 8 * width;
    const uint32_t magnitude_mask = bits == 32 ? 0x7FFFFFFFu : (1u << (bits - 1)) - 1;
    std::vector<uint32_t> codes(n);
    std::vector<std::size_t> ones(bits, 0);
    std::size_t zeros = 0;
    for (std::size_t k = 0; k < n; ++k) {
        uint32_t c = 0;
        std::memcpy(&c, data + k * stride * width, width);
        codes[k] = c;
        if ((c & magnitude_mask) == 0) ++zeros;
        for (std::size_t b = 0; b < bits; ++b) ones[b] += (c >> b) & 1u;
    }
    std::sort(codes.begin(), codes.end());
    const double dn = static_cast<double>(n);
    for (std::size_t k = 0; k < n;) {
        std::size_t j = k;
        while (j < n && codes[j] == codes[k]) ++j;
        const double p = static_cast<double>(j - k) / dn;
        s.entropy_bits -= p * std::log2(p);
        ++s.distinct;
        k = j;
    }
    for (std::size_t b = 0; b < bits; ++b) {
        const double p = static_cast<double>(ones[b]) / dn;
        if (p > 0 && p < 1) s.bit_entropy -= p * std::log2(p) + (1 - p) * std::log2(1 - p);
    }
    s.bit_entropy /= static_cast<double>(bits);
    s.sampled = n;
    s.zero_fraction = static_cast<double>(zeros) / dn;
    s.max_entropy_bits = std::min(static_cast<double>(bits), std::log2(dn));
    return s;
}

// ---- CRC-32 ------------------------------------------------------------------------------------

// CRC-32 as zlib.crc32 computes it (reflected polynomial 0xEDB88320, initial and final
// complement); `crc` continues a previous call's value.
inline uint32_t crc32(const unsigned char* data, std::size_t size, uint32_t crc = 0) {
    static const std::vector<uint32_t> table = [] {
        std::vector<uint32_t> t(8 * 256);
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = c & 1u ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        for (std::size_t i = 0; i < 256; ++i)  // slicing-by-8 tables
            for (std::size_t k = 1; k < 8; ++k)
                t[k * 256 + i] = (t[(k - 1) * 256 + i] >> 8) ^ t[t[(k - 1) * 256 + i] & 0xFFu];
        return t;
    }();
    const uint32_t* t = table.data();
    crc = ~crc;
    for (; size >= 8; size -= 8, data += 8) {
        uint32_t lo = 0, hi = 0;
        std::memcpy(&lo, data, 4);  // little-endian host
        std::memcpy(&hi, data + 4, 4);
        lo ^= crc;
        crc = t[7 * 256 + (lo & 0xFFu)] ^ t[6 * 256 + ((lo >> 8) & 0xFFu)] ^
              t[5 * 256 + ((lo >> 16) & 0xFFu)] ^ t[4 * 256 + (lo >> 24)] ^
              t[3 * 256 + (hi & 0xFFu)] ^ t[2 * 256 + ((hi >> 8) & 0xFFu)] ^
              t[1 * 256 + ((hi >> 16) & 0xFFu)] ^ t[hi >> 24];
    }
    for (; size > 0; --size, ++data) crc = t[(crc ^ *data) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

// "crc32:0a1b2c3d"
inline std::string crc32_text(uint32_t crc) {
    static const char* digits = "0123456789abcdef";
    std::string s = "crc32:";
    for (int shift = 28; shift >= 0; shift -= 4) s += digits[(crc >> shift) & 0xFu];
    return s;
}

}  // namespace gemm
