#pragma once
// Finds the fatbin containers of an object that arrives as a stream of bytes (a member of
// a wheel, inflated piece by piece while it is downloaded) without holding the object:
// only container and entry headers are kept (at most kMaxContainerHeader +
// kMinEntryHeader bytes at a time); payloads are skipped as they pass.
//
// What it reads: the first run of containers. It searches 8-aligned offsets for the
// magic until a container parses (container header, and its first entry header checked
// as strictly as scan_region's search mode does, so a stray magic in other data is not
// taken for one); from then on containers are expected back to back, as the linker lays
// out `.nv_fatbin`. The first place after a container that does not hold another one ends
// the run: the scanner is done() and the rest of the stream need not be read.
// Assumption (checked on torch's libtorch_cuda.so, see bench/arch_list_bench.cpp): no
// container sits in a section before `.nv_fatbin`. The stream has no section table to tell
// (an ELF keeps it at the end), so an object with embedded containers before its
// `.nv_fatbin` would end the run early; kernel_audit.hpp reads whole objects instead.
//
// Errors are problems, not exceptions: a container whose entries do not fit it, or a
// stream that ends inside a container, stops the scan with a problem naming the offset.
// Bounded on any input: limits.max_containers and limits.max_entries_per_container as in
// fatbin.hpp; the search gives up after limits.max_search_bytes.
// Part of the kernels domain: pure, C++17, standard library only (see arch.hpp).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/kernels/fatbin.hpp"

namespace td::kernels {

class FatbinStreamScanner {
  public:
    using Visit = std::function<void(const FatbinContainer&)>;
    // `visit` is called once per container, with its entries, when its last entry header
    // has been read (its payload need not have arrived).
    explicit FatbinStreamScanner(Visit visit, const FatbinLimits& limits = {});

    // The next `n` bytes of the stream. Ignored once done().
    void feed(const unsigned char* data, std::size_t n);
    // The stream has ended: a container left unfinished becomes a problem.
    void finish();

    // The run of containers has ended (or a problem or a limit stopped the scan): no
    // further byte can change the result.
    bool done() const { return m_state == State::done; }
    std::uint64_t containers() const { return m_containers; }
    // Bytes fed so far (offset of the next byte of the stream).
    std::uint64_t consumed() const { return m_consumed; }
    // Where the run began and ended (end: the first byte after its last container);
    // both 0 while no container was found.
    std::uint64_t run_begin() const { return m_run_begin; }
    std::uint64_t run_end() const { return m_run_end; }
    bool truncated() const { return m_truncated; }  // a limit stopped the scan
    // At most kMaxProblems; any problem means the containers seen are not the whole run.
    const std::vector<std::string>& problems() const { return m_problems; }

  private:
    enum class State : std::uint8_t { search, container, entry, next_container, done };

    // Acts on the m_want bytes at m_at (`bytes` holds them); moves m_at forward or asks
    // for more bytes at the same place (a larger m_want).
    void handle(const unsigned char* bytes);
    // Scans `n` bytes at m_at for the magic without copying them (searching).
    void search(const unsigned char* data, std::size_t n);
    void searched(std::uint64_t bytes);
    void on_container_header(const unsigned char* h);
    void on_entry(const unsigned char* e);
    void begin_entries(std::uint64_t header_size);
    void container_done();
    void stop(std::string problem);
    // Handles m_buf while it holds enough bytes; keeps what lies at or after m_at.
    void drain();

    Visit m_visit;
    FatbinLimits m_limits;
    State m_state = State::search;
    std::uint64_t m_consumed = 0;
    // The bytes wanted next: m_want bytes at stream offset m_at; what arrived of them is
    // in m_buf. Bytes before m_at are skipped.
    std::uint64_t m_at = 0;
    std::size_t m_want = 4;
    std::vector<unsigned char> m_buf;
    std::uint64_t m_searched = 0;
    FatbinContainer m_container;
    std::uint64_t m_container_end = 0;
    std::uint64_t m_containers = 0;
    std::uint64_t m_run_begin = 0, m_run_end = 0;
    bool m_truncated = false;
    std::vector<std::string> m_problems;
};

}  // namespace td::kernels
