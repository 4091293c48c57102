#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex. Records which manifest bytes an
// image was rendered from, and computes a manifest's digest when a registry omits the
// Docker-Content-Digest header.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace td {

std::string sha256_hex(std::string_view data);

// The same hash fed in pieces (a download streamed through it, never held whole):
// update() any number of times, then hex() once; the result equals sha256_hex of the
// concatenated pieces.
class Sha256Stream {
  public:
    void update(std::string_view data);
    std::string hex();  // finishes the hash; call once
    std::uint64_t bytes() const { return m_bytes; }

  private:
    std::array<std::uint32_t, 8> m_state = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                            0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::array<unsigned char, 64> m_block{};
    std::size_t m_filled = 0;
    std::uint64_t m_bytes = 0;
};

}  // namespace td
