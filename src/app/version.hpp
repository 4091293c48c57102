#pragma once
#include <string>

namespace td::app {

// "torchdock 0.1.0 (commit 1a2b3c4d5e6f[-dirty], knowledge base 2026-12-01)": the version and
// commit recorded at build time, and the date of the knowledge base this run would use
// (--data is not parsed yet for --version: $TORCHDOCK_DATA, else relative to the binary).
std::string version_text();

}  // namespace td::app
