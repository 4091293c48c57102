#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex. Records which manifest bytes an
// image was rendered from, and computes a manifest's digest when a registry omits the
// Docker-Content-Digest header.
#include <string>
#include <string_view>

namespace td {

std::string sha256_hex(std::string_view data);

}  // namespace td
