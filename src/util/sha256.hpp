#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex, computed by OpenSSL's libcrypto
// (its SHA-NI and AVX2 code: a layer of gigabytes is hashed as it is unpacked). Records which
// manifest bytes an image was rendered from, and computes a manifest's digest when a registry omits
// the Docker-Content-Digest header.
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
    Sha256Stream();
    ~Sha256Stream();
    Sha256Stream(Sha256Stream&& other) noexcept;
    Sha256Stream& operator=(Sha256Stream&& other) noexcept;
    Sha256Stream(const Sha256Stream&) = delete;
    Sha256Stream& operator=(const Sha256Stream&) = delete;
    void update(std::string_view data);
    std::string hex();  // finishes the hash; call once
    std::uint64_t bytes() const { return m_bytes; }

  private:
    void* m_ctx = nullptr;  // OpenSSL's EVP_MD_CTX (SHA-NI where the CPU has it)
    std::uint64_t m_bytes = 0;
};

}  // namespace td
