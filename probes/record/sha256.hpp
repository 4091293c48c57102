#pragma once
// SHA-256 (FIPS 180-4) for probe-record, without OpenSSL: the probe is a static executable
// that must not trust the image's libraries. Two block functions compute the same thing:
// a portable one and, on x86-64 CPUs with the SHA extensions, one on the SHA-NI
// instructions (sha256_shani.hpp), chosen at run time. Sha256 is the streaming interface
// over either.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace record {

// Compresses `blocks` consecutive 64-byte blocks of `data` into `state`.
using Sha256BlockFn = void (*)(std::uint32_t state[8], const unsigned char* data,
                               std::size_t blocks);

inline constexpr std::uint32_t kSha256K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline std::uint32_t rotr32(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

inline void sha256_blocks_portable(std::uint32_t state[8], const unsigned char* data,
                                   std::size_t blocks) {
    for (; blocks > 0; --blocks, data += 64) {
        std::uint32_t w[64];
        for (int t = 0; t < 16; ++t)
            w[t] = std::uint32_t(data[4 * t]) << 24 | std::uint32_t(data[4 * t + 1]) << 16 |
                   std::uint32_t(data[4 * t + 2]) << 8 | std::uint32_t(data[4 * t + 3]);
        for (int t = 16; t < 64; ++t) {
            const std::uint32_t s0 =
                rotr32(w[t - 15], 7) ^ rotr32(w[t - 15], 18) ^ (w[t - 15] >> 3);
            const std::uint32_t s1 = rotr32(w[t - 2], 17) ^ rotr32(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int t = 0; t < 64; ++t) {
            const std::uint32_t t1 = h + (rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25)) +
                                     ((e & f) ^ (~e & g)) + kSha256K[t] + w[t];
            const std::uint32_t t2 =
                (rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        state[0] += a;
        state[1] += b;
        state[2] += c;
        state[3] += d;
        state[4] += e;
        state[5] += f;
        state[6] += g;
        state[7] += h;
    }
}

// Streaming SHA-256 over a chosen block function.
class Sha256 {
  public:
    explicit Sha256(Sha256BlockFn blocks) : m_blocks(blocks) {}

    void update(const unsigned char* data, std::size_t len) {
        m_length += len;
        if (m_buffered > 0) {
            const std::size_t take = len < 64 - m_buffered ? len : 64 - m_buffered;
            std::memcpy(m_buffer + m_buffered, data, take);
            m_buffered += take;
            data += take;
            len -= take;
            if (m_buffered < 64) return;
            m_blocks(m_state, m_buffer, 1);
            m_buffered = 0;
        }
        if (len >= 64) {
            m_blocks(m_state, data, len / 64);
            data += len / 64 * 64;
            len %= 64;
        }
        std::memcpy(m_buffer, data, len);
        m_buffered = len;
    }

    // The 32-byte digest; the object is spent afterwards.
    void finish(unsigned char digest[32]) {
        const std::uint64_t bits = m_length * 8;
        unsigned char pad[72] = {0x80};
        const std::size_t pad_len = (m_buffered < 56 ? 56 : 120) - m_buffered;
        for (int i = 0; i < 8; ++i)
            pad[pad_len + i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
        update(pad, pad_len + 8);
        for (int i = 0; i < 8; ++i)
            for (int k = 0; k < 4; ++k)
                digest[4 * i + k] = static_cast<unsigned char>(m_state[i] >> (24 - 8 * k));
    }

  private:
    Sha256BlockFn m_blocks;
    std::uint32_t m_state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    unsigned char m_buffer[64] = {};
    std::size_t m_buffered = 0;
    std::uint64_t m_length = 0;
};

// RECORD's encoding of a digest: URL-safe base64 without padding (PEP 376 / 427).
inline std::string urlsafe_b64_nopad(const unsigned char* bytes, std::size_t len) {
    static const char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    std::size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        const std::uint32_t v = bytes[i] << 16 | bytes[i + 1] << 8 | bytes[i + 2];
        for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
    }
    if (len - i == 1) {
        const std::uint32_t v = bytes[i] << 16;
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
    } else if (len - i == 2) {
        const std::uint32_t v = bytes[i] << 16 | bytes[i + 1] << 8;
        for (int s = 18; s >= 6; s -= 6) out += kAlphabet[(v >> s) & 63];
    }
    return out;
}

}  // namespace record
