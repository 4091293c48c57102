#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex. Used to record which
// manifest bytes an image was rendered from, and later to verify registry digests.
#include <string>
#include <string_view>

namespace td {

std::string sha256_hex(std::string_view data);

}  // namespace td
