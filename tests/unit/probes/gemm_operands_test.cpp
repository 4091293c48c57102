// probe-gemm's operands (probes/gemm/operand_data.hpp, number_formats.hpp): the timing
// operands have full entropy in every format and no zero bias; the correctness operands stay
// exact; rounding from fp32 is round-to-nearest-even; CRC-32 is zlib's.
#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "operand_data.hpp"

using namespace gemm;

namespace {

uint32_t f32_bits(float x) {
    uint32_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

// Every finite non-negative value of `f` with its code, sorted by value: the reference that
// round_from_f32 is checked against by searching, not by the same arithmetic.
std::vector<std::pair<double, uint32_t>> finite_values(const Format& f) {
    std::vector<std::pair<double, uint32_t>> out;
    const uint32_t codes = 1u << (f.ebits + f.mbits);  // sign bit excluded
    for (uint32_t c = 0; c < codes; ++c) {
        const double v = decode(c, f.ebits, f.mbits);
        if (std::isfinite(v) && !(f.ebits == 4 && c == 0x7F)) out.emplace_back(v, c);  // e4m3 NaN
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The nearest value of `f` to |x| (ties to the even code), with x's sign.
uint32_t nearest(const std::vector<std::pair<double, uint32_t>>& table, const Format& f, double x) {
    const double a = std::fabs(x);
    auto hi = std::lower_bound(table.begin(), table.end(), std::make_pair(a, 0u));
    uint32_t code;
    if (hi == table.begin())
        code = hi->second;
    else if (hi == table.end())
        code = std::prev(hi)->second;
    else {
        auto lo = std::prev(hi);
        const double dl = a - lo->first, dh = hi->first - a;
        code = dl < dh   ? lo->second
               : dh < dl ? hi->second
                         : (lo->second % 2 ? hi->second : lo->second);
    }
    return (std::signbit(x) ? 1u << (f.ebits + f.mbits) : 0u) | code;
}

OperandStats uniform_stats(const Format& f, std::size_t count) {
    const std::vector<unsigned char> bytes = uniform_operand(f, count, 0x1234);
    return operand_stats(bytes.data(), count, f.bytes);
}

}  // namespace

TEST_CASE("round_from_f32 rounds to nearest, ties to even, like the hardware's conversion") {
    for (const Format* f : {&kF16, &kBF16, &kE4M3}) {
        INFO(f->name);
        const auto table = finite_values(*f);
        std::vector<float> xs = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-30f, -1e-30f, 1e-40f};
        uint64_t seed = 7;
        for (int i = 0; i < 20000; ++i)
            xs.push_back(
                static_cast<float>(static_cast<double>(splitmix64(seed) >> 40) * 0x1p-23 - 1.0));
        // every midpoint between neighbours (a tie), and a hair either side of it
        for (std::size_t i = 0; i + 1 < table.size(); ++i) {
            const float mid = static_cast<float>((table[i].first + table[i + 1].first) / 2);
            xs.insert(xs.end(),
                      {mid, -mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)});
        }
        for (float x : xs) {
            INFO(x);
            CHECK(round_from_f32(f32_bits(x), *f) == nearest(table, *f, x));
        }
    }
}

TEST_CASE("round_from_f32 keeps fp32 values and matches the bf16 bit trick") {
    uint64_t seed = 11;
    for (int i = 0; i < 20000; ++i) {
        const uint32_t b = uniform_f32_bits(seed, static_cast<uint64_t>(i));
        CHECK(round_from_f32(b, kF32) == b);
        CHECK(round_from_f32(b, kBF16) == (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
    }
}

TEST_CASE("timing operands: uniform(-1,1), deterministic for any thread count") {
    const std::size_t count = (3u << 20) + 5;  // more than one thread's share
    const auto one = uniform_operand(kE4M3, count, 99, 1);
    CHECK(uniform_operand(kE4M3, count, 99, 3) == one);
    CHECK(uniform_operand(kE4M3, count, 100, 3) != one);
    const auto f32 = uniform_operand(kF32, 1u << 16, 5);
    std::size_t negative = 0;
    for (std::size_t i = 0; i < (1u << 16); ++i) {
        float x = 0;
        std::memcpy(&x, f32.data() + 4 * i, 4);
        REQUIRE(x >= -1.0f);
        REQUIRE(x < 1.0f);
        REQUIRE(std::ldexp(static_cast<double>(x), 23) ==
                std::floor(std::ldexp(static_cast<double>(x), 23)));
        negative += x < 0;
    }
    CHECK(std::fabs(static_cast<double>(negative) / (1 << 16) - 0.5) < 0.01);  // no sign bias
}

// The bounds: a million elements can show at most 20 bits of entropy; the expected values
// for uniform(-1,1) are about 24 (fp32, capped at 20 here), 13 (fp16), 10 (bf16) and 6
// (e4m3) bits, each bit toggling with an entropy of 0.65-0.85 on average; the correctness
// operands {-2..2} x 2^-2 have log2(5) = 2.32 bits and a fifth of zeros.
TEST_CASE("timing operands have full entropy and no zero bias in every format") {
    struct Bound {
        const Format* f;
        double min_entropy;
        std::size_t min_distinct;
        double max_zero_fraction;
    };
    for (const Bound& b : {Bound{&kF32, 19.9, 1000000, 1e-5}, Bound{&kF16, 12.5, 15000, 1e-5},
                           Bound{&kBF16, 9.5, 2500, 1e-5}, Bound{&kE4M3, 5.5, 100, 0.002}}) {
        INFO(b.f->name);
        const OperandStats s = uniform_stats(*b.f, 1u << 20);
        CHECK(s.sampled == (1u << 20));
        CHECK(s.entropy_bits >= b.min_entropy);
        CHECK(s.distinct >= b.min_distinct);
        CHECK(s.zero_fraction <= b.max_zero_fraction);
        CHECK(s.bit_entropy >= 0.6);
        CHECK(s.max_entropy_bits == std::min(20.0, 8.0 * static_cast<double>(b.f->bytes)));
    }
    // The correctness operands, for contrast (what the throughput used to be timed on).
    std::vector<unsigned char> exact;
    REQUIRE(encode_all(random_ints(1u << 20, 2, 3), 2, -2, kBF16, exact));
    const OperandStats s = operand_stats(exact.data(), 1u << 20, 2);
    CHECK(s.distinct == 5);
    CHECK(s.entropy_bits < 2.33);
    CHECK(std::fabs(s.zero_fraction - 0.2) < 0.01);
    CHECK(uniform_stats(kBF16, 1u << 20).entropy_bits - s.entropy_bits > 7);
}

TEST_CASE("correctness operands stay exact in their input formats") {
    struct Case {
        const Format* f;
        int range, scale_log2;
    };
    for (const Case& c :
         {Case{&kF32, 2048, -11}, Case{&kF16, 2, -2}, Case{&kBF16, 2, -2}, Case{&kE4M3, 2, -2}}) {
        INFO(c.f->name);
        auto q = random_ints(4096, c.range, 42);
        q.push_back(static_cast<int16_t>(-c.range));  // the extremes, surely
        q.push_back(static_cast<int16_t>(c.range));
        std::vector<unsigned char> bytes;
        REQUIRE(encode_all(q, c.range, c.scale_log2, *c.f, bytes));
        for (std::size_t i = 0; i < q.size(); ++i) {
            uint32_t code = 0;
            std::memcpy(&code, bytes.data() + i * c.f->bytes, c.f->bytes);
            REQUIRE(decode(code, c.f->ebits, c.f->mbits) == std::ldexp(q[i], c.scale_log2));
        }
        CHECK(*std::min_element(q.begin(), q.end() - 2) >= -c.range);
        CHECK(*std::max_element(q.begin(), q.end() - 2) <= c.range);
    }
    std::vector<unsigned char> bytes;  // 2049/2048 needs 12 significant bits: not in e4m3
    CHECK_FALSE(encode_all({2049}, 2048, -11, kE4M3, bytes));
}

TEST_CASE("crc32 is zlib's, in one piece or several") {
    const std::string check = "123456789";
    const auto* p = reinterpret_cast<const unsigned char*>(check.data());
    CHECK(crc32(p, check.size()) == 0xCBF43926u);
    CHECK(crc32(p, 0) == 0u);
    CHECK(crc32(p + 4, 5, crc32(p, 4)) == 0xCBF43926u);
    const auto data = uniform_operand(kE4M3, 1000, 1);
    for (std::size_t split : {0u, 1u, 7u, 8u, 9u, 500u, 999u})
        CHECK(crc32(data.data() + split, 1000 - split, crc32(data.data(), split)) ==
              crc32(data.data(), 1000));
    CHECK(crc32_text(0x0a1b2c3d) == "crc32:0a1b2c3d");
}
