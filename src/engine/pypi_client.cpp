#include "engine/pypi_client.hpp"

#include <zlib.h>

#include <algorithm>

#include "core/build/settings.hpp"
#include "core/pypi/wheel_name.hpp"
#include "core/pypi/zip_directory.hpp"
#include "engine/http.hpp"
#include "engine/process.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace {

constexpr std::size_t k_page_cap = 64u << 20;       // a project page (torch's is ~0.5 MB)
constexpr std::size_t k_directory_cap = 64u << 20;  // a central directory
constexpr std::size_t k_metadata_cap = 16u << 20;   // one METADATA file
constexpr std::size_t k_range_cap = 64u << 20;      // one read_range

// "bytes 100-199/1000" -> 1000; 0 when absent or malformed.
std::uint64_t total_from_content_range(const std::string& header) {
    auto slash = header.rfind('/');
    if (!starts_with(header, "bytes ") || slash == std::string::npos) return 0;
    std::string total = header.substr(slash + 1);
    if (total.empty() || total.size() > 18 ||
        total.find_first_not_of("0123456789") != std::string::npos)
        return 0;
    return std::stoull(total);
}

std::string range_header(std::uint64_t from, std::uint64_t to_inclusive) {
    return "bytes=" + std::to_string(from) + "-" + std::to_string(to_inclusive);
}

// A server that ignores a Range header (or a page that grew without bound) must not make us
// download a whole wheel.
Error too_large(const std::string& url, std::size_t cap) {
    return Error{ErrorKind::Environment,
                 url + ": the answer is larger than " + std::to_string(cap) + " bytes; refused"};
}

}  // namespace

Result<std::string> pip_default_index(const std::string& hint) {
    ProcessSpec spec;
    spec.argv = {"python3", "-c",
                 "from pip._internal.models.index import PyPI; print(PyPI.simple_url)"};
    spec.env = environment_with({});
    spec.timeout = std::chrono::seconds(30);
    auto run = run_process(spec);
    std::string url = run && run->ok() ? run->out : "";
    while (!url.empty() && (url.back() == '\n' || url.back() == '\r')) url.pop_back();
    if (url.empty() || !check_index_url(url).empty())
        return Error{ErrorKind::Environment,
                     "cannot ask the host's pip for its default index (python3 -m pip): " + hint};
    return url;
}

PypiClient::PypiClient(std::string index_url) : m_index(std::move(index_url)) {
    if (!m_index.empty() && m_index.back() != '/') m_index += '/';
}

Result<std::string> PypiClient::get(const std::string& url, const std::string& range,
                                    std::size_t cap, std::uint64_t* total_size) {
    HttpRequest req;
    req.url = url;
    req.timeouts.connect = std::chrono::milliseconds(10000);
    req.timeouts.total = std::chrono::milliseconds(120000);
    req.max_body = cap;
    req.session = &m_session;
    if (!range.empty()) req.headers.push_back("Range: " + range);
    ++m_requests;
    auto res = http_request(req);
    if (!res) return res.error();
    if (res->truncated) return too_large(url, cap);
    m_bytes += static_cast<long long>(res->body.size());
    if (!range.empty()) {
        if (res->status == 200)
            return Error{ErrorKind::Environment,
                         url + ": the server ignored the Range request (answered 200)"};
        if (res->status != 206)
            return Error{ErrorKind::Environment,
                         url + ": HTTP " + std::to_string(res->status) + " for " + range};
        std::uint64_t total = total_from_content_range(res->header("content-range"));
        if (total == 0)
            return Error{ErrorKind::Environment, url + ": 206 answer without a Content-Range"};
        if (total_size) *total_size = total;
    } else if (res->status != 200) {
        return Error{ErrorKind::Environment, url + ": HTTP " + std::to_string(res->status)};
    }
    return std::move(res->body);
}

Result<pypi::ProjectIndex> PypiClient::project(const std::string& name) {
    std::string url = m_index + pypi::normalize_project_name(name) + "/";
    HttpRequest req;
    req.url = url;
    req.headers = {"Accept: application/vnd.pypi.simple.v1+json"};
    req.timeouts.connect = std::chrono::milliseconds(10000);
    req.timeouts.total = std::chrono::milliseconds(60000);
    req.max_body = k_page_cap;
    req.session = &m_session;
    ++m_requests;
    auto res = http_request(req);
    if (!res) return res.error();
    if (res->truncated) return too_large(url, k_page_cap);
    m_bytes += static_cast<long long>(res->body.size());
    if (res->status == 404)
        return Error{ErrorKind::Config, url + ": the index has no project " + quote_value(name)};
    if (res->status != 200)
        return Error{ErrorKind::Environment, url + ": HTTP " + std::to_string(res->status)};
    std::string type = to_lower(res->header("content-type"));
    if (type.find("application/vnd.pypi.simple.v1+json") == std::string::npos)
        return Error{ErrorKind::Config,
                     url + ": the index answered " + quote_value(type) +
                         ", not the PEP 691 JSON form (application/vnd.pypi.simple.v1+json)"};
    return pypi::parse_project_index(res->body, url);
}

Result<std::string> inflate_raw(const std::string& compressed, std::uint64_t expected_size,
                                std::size_t cap) {
    if (expected_size > cap)
        return Error{ErrorKind::Config, "a member of " + std::to_string(expected_size) +
                                            " bytes is over the limit of " + std::to_string(cap)};
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
        return Error{ErrorKind::Environment, "zlib: inflateInit2 failed"};
    std::string out(static_cast<std::size_t>(expected_size), '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
    zs.avail_in = static_cast<uInt>(compressed.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    int rc = inflate(&zs, Z_FINISH);
    std::uint64_t produced = zs.total_out;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END || produced != expected_size)
        return Error{ErrorKind::Config, "zip member does not inflate to its recorded size"};
    return out;
}

Result<WheelDirectory> PypiClient::wheel_directory(const pypi::IndexFile& wheel) {
    std::uint64_t size = 0;
    auto tail = get(wheel.url, "bytes=-" + std::to_string(pypi::k_zip_tail_bytes),
                    pypi::k_zip_tail_bytes, &size);
    if (!tail) return tail.error();
    if (wheel.size > 0 && static_cast<std::uint64_t>(wheel.size) != size)
        return Error{ErrorKind::Config, wheel.filename + ": the server's size " +
                                            std::to_string(size) + " differs from the index's " +
                                            std::to_string(wheel.size)};
    auto loc = pypi::locate_central_directory(tail.value(), size);
    if (!loc) return Error{ErrorKind::Config, wheel.filename + ": " + loc.error().message};
    std::uint64_t tail_start = size - tail->size();
    std::string directory;
    if (loc->offset >= tail_start) {
        directory = tail->substr(static_cast<std::size_t>(loc->offset - tail_start),
                                 static_cast<std::size_t>(loc->size));
    } else {
        if (loc->size > k_directory_cap)
            return Error{ErrorKind::Config, wheel.filename + ": central directory over the limit"};
        auto cd =
            get(wheel.url, range_header(loc->offset, loc->offset + loc->size - 1), k_directory_cap);
        if (!cd) return cd.error();
        directory = std::move(cd.value());
    }
    auto entries = pypi::parse_central_directory(directory);
    if (!entries) return Error{ErrorKind::Config, wheel.filename + ": " + entries.error().message};
    return WheelDirectory{std::move(entries.value()), size};
}

Result<std::string> PypiClient::read_range(const pypi::IndexFile& wheel, std::uint64_t offset,
                                           std::uint64_t length) {
    if (length == 0 || length > k_range_cap)
        return Error{ErrorKind::Config, wheel.filename + ": a range of " + std::to_string(length) +
                                            " bytes is outside 1.." + std::to_string(k_range_cap)};
    auto body = get(wheel.url, range_header(offset, offset + length - 1), k_range_cap);
    if (!body) return body.error();
    if (body->size() != length)
        return Error{ErrorKind::Environment,
                     wheel.filename + ": asked for " + std::to_string(length) + " bytes at " +
                         std::to_string(offset) + ", got " + std::to_string(body->size())};
    return body;
}

Result<std::string> PypiClient::read_member_by_ranges(const pypi::IndexFile& wheel) {
    auto dir = wheel_directory(wheel);
    if (!dir) return dir.error();
    const std::uint64_t size = dir->archive_size;
    const auto& entries = dir->entries;
    const pypi::ZipEntry* member = pypi::find_wheel_metadata(entries);
    if (!member)
        return Error{ErrorKind::Config, wheel.filename + ": no *.dist-info/METADATA member"};
    if (member->compressed_size > k_metadata_cap || member->uncompressed_size > k_metadata_cap)
        return Error{ErrorKind::Config, wheel.filename + ": METADATA over the limit"};
    // One request for the local header, its name and extra field (at most 64 KiB each)
    // and the data; the header's own lengths say where the data starts.
    std::uint64_t from = member->local_header_offset;
    std::uint64_t guess = 30 + member->name.size() + 1024 + member->compressed_size;
    std::uint64_t to = std::min(size, from + guess) - 1;
    auto chunk = get(wheel.url, range_header(from, to), k_metadata_cap + 200000);
    if (!chunk) return chunk.error();
    auto data_at = pypi::member_data_offset(chunk.value(), *member);
    if (!data_at) return Error{ErrorKind::Config, wheel.filename + ": " + data_at.error().message};
    std::uint64_t rel = data_at.value() - from;
    std::string compressed;
    if (rel + member->compressed_size <= chunk->size()) {
        compressed = chunk->substr(static_cast<std::size_t>(rel),
                                   static_cast<std::size_t>(member->compressed_size));
    } else {
        auto rest = get(
            wheel.url, range_header(data_at.value(), data_at.value() + member->compressed_size - 1),
            k_metadata_cap);
        if (!rest) return rest.error();
        compressed = std::move(rest.value());
    }
    std::string text;
    if (member->method == 0) {
        text = compressed;
    } else if (member->method == 8) {
        auto inflated = inflate_raw(compressed, member->uncompressed_size, k_metadata_cap);
        if (!inflated)
            return Error{ErrorKind::Config, wheel.filename + ": " + inflated.error().message};
        text = std::move(inflated.value());
    } else {
        return Error{ErrorKind::Config, wheel.filename +
                                            ": METADATA uses unsupported compression method " +
                                            std::to_string(member->method)};
    }
    uLong crc =
        crc32(0L, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size()));
    if (crc != member->crc32)
        return Error{ErrorKind::Config, wheel.filename + ": METADATA fails its CRC-32 check"};
    return text;
}

Result<WheelMetadata> PypiClient::wheel_metadata(const pypi::IndexFile& wheel) {
    WheelMetadata out;
    if (wheel.metadata_served) {
        auto text = get(wheel.url + ".metadata", "", k_metadata_cap);
        if (!text) return text.error();
        if (!wheel.metadata_sha256.empty() && sha256_hex(text.value()) != wheel.metadata_sha256)
            return Error{ErrorKind::Config,
                         wheel.filename + ".metadata does not match the index's sha256"};
        out.text = std::move(text.value());
        out.via_pep658 = true;
    } else {
        auto text = read_member_by_ranges(wheel);
        if (!text) return text.error();
        out.text = std::move(text.value());
    }
    auto md = pypi::parse_core_metadata(out.text);
    if (!md) return Error{ErrorKind::Config, wheel.filename + ": " + md.error().message};
    out.metadata = std::move(md.value());
    return out;
}

}  // namespace td::engine
