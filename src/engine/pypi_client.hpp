#pragma once
// Reads a Python package index over HTTP (libcurl): PEP 691 JSON project pages, and the
// core metadata of a wheel, through PEP 658 (<url>.metadata) when the index serves it,
// else with HTTP range requests of the wheel's ZIP central directory and of the METADATA
// member alone (never the whole wheel). Thread-safe: one client can serve several
// threads; it counts requests and bytes for the caller's report.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/pypi/metadata.hpp"
#include "core/pypi/simple_index.hpp"
#include "core/pypi/zip_directory.hpp"
#include "engine/http.hpp"
#include "util/result.hpp"

namespace td::engine {

// The index pip uses when none is configured, asked of the host's pip (`python3`): torchdock
// names no index host itself. Environment error when pip cannot say; `hint` (how to name one
// instead) ends its message.
Result<std::string> pip_default_index(const std::string& hint);

// A remote wheel's ZIP central directory (read with one or two range requests).
struct WheelDirectory {
    std::vector<pypi::ZipEntry> entries;
    std::uint64_t archive_size = 0;
};

struct WheelMetadata {
    pypi::CoreMetadata metadata;
    std::string text;  // METADATA as read
    bool via_pep658 = false;
};

class PypiClient {
  public:
    explicit PypiClient(std::string index_url);

    const std::string& index_url() const { return m_index; }
    // The project's page (name normalised, PEP 503). Environment errors when the index
    // cannot be reached; Config when it answers something that is not a PEP 691 page.
    Result<pypi::ProjectIndex> project(const std::string& name);
    Result<WheelMetadata> wheel_metadata(const pypi::IndexFile& wheel);
    // The wheel's central directory; Config errors name the wheel.
    Result<WheelDirectory> wheel_directory(const pypi::IndexFile& wheel);
    // Exactly `length` bytes of the wheel from `offset` (one range request; at most 64 MiB).
    Result<std::string> read_range(const pypi::IndexFile& wheel, std::uint64_t offset,
                                   std::uint64_t length);

    long requests() const { return m_requests.load(); }
    long long bytes() const { return m_bytes.load(); }

  private:
    std::string m_index;
    HttpSession m_session;  // one TLS handshake per host, not per range read
    std::atomic<long> m_requests{0};
    std::atomic<long long> m_bytes{0};

    // GET with an optional Range; `expect_partial` requires 206 and checks the
    // Content-Range; the body is capped at `cap` bytes.
    Result<std::string> get(const std::string& url, const std::string& range, std::size_t cap,
                            std::uint64_t* total_size = nullptr);
    Result<std::string> read_member_by_ranges(const pypi::IndexFile& wheel);
};

// Inflates a raw DEFLATE stream (ZIP method 8) of a known size; Error beyond `cap`.
Result<std::string> inflate_raw(const std::string& compressed, std::uint64_t expected_size,
                                std::size_t cap);

}  // namespace td::engine
