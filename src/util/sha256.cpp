#include "util/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace td {
namespace {

EVP_MD_CTX* ctx_of(void* p) { return static_cast<EVP_MD_CTX*>(p); }

}  // namespace

Sha256Stream::Sha256Stream() : m_ctx(EVP_MD_CTX_new()) {
    if (!m_ctx || EVP_DigestInit_ex(ctx_of(m_ctx), EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("OpenSSL could not start a SHA-256");
}

Sha256Stream::~Sha256Stream() { EVP_MD_CTX_free(ctx_of(m_ctx)); }

Sha256Stream::Sha256Stream(Sha256Stream&& other) noexcept
    : m_ctx(other.m_ctx), m_bytes(other.m_bytes) {
    other.m_ctx = nullptr;
    other.m_bytes = 0;
}

Sha256Stream& Sha256Stream::operator=(Sha256Stream&& other) noexcept {
    if (this != &other) {
        EVP_MD_CTX_free(ctx_of(m_ctx));
        m_ctx = other.m_ctx;
        m_bytes = other.m_bytes;
        other.m_ctx = nullptr;
        other.m_bytes = 0;
    }
    return *this;
}

void Sha256Stream::update(std::string_view data) {
    m_bytes += data.size();
    EVP_DigestUpdate(ctx_of(m_ctx), data.data(), data.size());
}

std::string Sha256Stream::hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_of(m_ctx), digest, &len);
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < len; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 0xf];
    }
    return out;
}

std::string sha256_hex(std::string_view data) {
    Sha256Stream s;
    s.update(data);
    return s.hex();
}

}  // namespace td
