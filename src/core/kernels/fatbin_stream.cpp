#include "core/kernels/fatbin_stream.hpp"

#include <algorithm>

namespace td::kernels {

FatbinStreamScanner::FatbinStreamScanner(Visit visit, const FatbinLimits& limits)
    : m_visit(std::move(visit)), m_limits(limits) {}

void FatbinStreamScanner::stop(std::string problem) {
    if (!problem.empty() && m_problems.size() < kMaxProblems)
        m_problems.push_back(std::move(problem));
    m_state = State::done;
    m_buf.clear();
}

void FatbinStreamScanner::searched(std::uint64_t bytes) {
    m_searched += bytes;
    if (m_searched >= m_limits.max_search_bytes) {
        m_truncated = true;
        stop("stopped searching after " + std::to_string(m_searched) + " bytes (the limit)");
    }
}

void FatbinStreamScanner::search(const unsigned char* data, std::size_t n) {
    std::size_t k = 0;
    while (k + 4 <= n && le::u32(data + k) != kFatbinMagic) k += 8;
    const std::uint64_t candidate = m_at + k;
    if (k + 4 <= n) {
        m_state = State::container;
        m_want = kContainerHeaderBytes;
    }
    m_at = candidate;
    if (k > 0) searched(k);
}

void FatbinStreamScanner::begin_entries(std::uint64_t header_size) {
    if (m_container.size == header_size) {  // no entries
        container_done();
        return;
    }
    m_state = State::entry;
    m_at += header_size;
    m_want = kMinEntryHeader;
}

void FatbinStreamScanner::on_container_header(const unsigned char* h) {
    const bool in_run = m_state == State::next_container;
    std::string why;
    // A stream has no known end: the body is checked against its entries instead.
    const std::uint64_t size = check_container_header(h, m_at, ~std::uint64_t{0}, why);
    if (size == 0) {
        if (in_run) {  // the bytes after the last container are something else: the end
            m_state = State::done;
            m_buf.clear();
            return;
        }
        m_state = State::search;
        m_want = 4;
        m_at += 8;
        searched(8);
        return;
    }
    const std::uint64_t header_size = le::u16(h + 6);
    if (!in_run && size > header_size) {
        // A candidate found by searching: its first entry must parse strictly too.
        if (m_want < header_size + kMinEntryHeader) {
            m_want = static_cast<std::size_t>(header_size + kMinEntryHeader);
            return;
        }
        const FatbinEntry first = decode_entry(h + header_size, m_at + header_size);
        if (!check_entry(first, size - header_size, true, why)) {
            m_state = State::search;
            m_want = 4;
            m_at += 8;
            searched(8);
            return;
        }
    }
    if (!in_run) m_run_begin = m_at;
    m_container = FatbinContainer{};
    m_container.offset = m_at;
    m_container.size = size;
    m_container_end = m_at + size;
    begin_entries(header_size);
}

void FatbinStreamScanner::on_entry(const unsigned char* e) {
    const FatbinEntry entry = decode_entry(e, m_at);
    std::string why;
    if (!check_entry(entry, m_container_end - m_at, false, why)) return stop(why);
    const std::uint64_t next = m_at + entry.header_size + entry.payload_size;
    if (m_container.entries.size() >= m_limits.max_entries_per_container) {
        m_container.entries_truncated = true;
        m_truncated = true;
        return container_done();
    }
    m_container.entries.push_back(entry);
    if (next == m_container_end) return container_done();
    if (m_container_end - next < kMinEntryHeader)
        return stop("entry at " + hex_offset(next) + " is cut off by the container's end");
    m_at = next;
}

void FatbinStreamScanner::container_done() {
    ++m_containers;
    m_visit(m_container);
    m_run_end = m_container_end;
    if (m_containers >= m_limits.max_containers) {
        m_truncated = true;
        return stop("stopped after " + std::to_string(m_containers) + " containers (the limit)");
    }
    m_state = State::next_container;
    m_at = m_container_end;
    m_want = kContainerHeaderBytes;
}

void FatbinStreamScanner::handle(const unsigned char* bytes) {
    switch (m_state) {
        case State::search:
            if (le::u32(bytes) == kFatbinMagic) {
                m_state = State::container;
                m_want = kContainerHeaderBytes;
            } else {
                m_at += 8;
                searched(8);
            }
            return;
        case State::container:
        case State::next_container:
            return on_container_header(bytes);
        case State::entry:
            return on_entry(bytes);
        case State::done:
            return;
    }
}

void FatbinStreamScanner::drain() {
    while (m_state != State::done && !m_buf.empty() && m_buf.size() >= m_want) {
        const std::uint64_t before = m_at;
        handle(m_buf.data());
        if (m_at == before) continue;  // more bytes wanted at the same place, or done
        const std::uint64_t drop = m_at - before;
        if (drop >= m_buf.size())
            m_buf.clear();
        else
            m_buf.erase(m_buf.begin(), m_buf.begin() + static_cast<std::ptrdiff_t>(drop));
    }
}

void FatbinStreamScanner::feed(const unsigned char* data, std::size_t n) {
    const std::uint64_t pos = m_consumed;
    m_consumed += n;
    std::size_t i = 0;
    while (i < n && m_state != State::done) {
        const std::uint64_t here = pos + i;
        if (!m_buf.empty()) {
            // m_buf holds the bytes [m_at, here): complete what is wanted, then act.
            std::size_t take = 0;
            if (m_want > m_buf.size()) take = std::min(m_want - m_buf.size(), n - i);
            m_buf.insert(m_buf.end(), data + i, data + i + take);
            i += take;
            drain();
            continue;
        }
        if (here < m_at) {  // a payload, or data between sections: skipped
            i += static_cast<std::size_t>(std::min<std::uint64_t>(n - i, m_at - here));
            continue;
        }
        if (n - i < m_want) {  // wanted bytes straddle this piece's end
            m_buf.assign(data + i, data + n);
            i = n;
            continue;
        }
        if (m_state == State::search)
            search(data + i, n - i);
        else
            handle(data + i);
    }
}

void FatbinStreamScanner::finish() {
    if (m_state == State::done) return;
    if (m_state == State::entry || (m_state == State::next_container && m_consumed < m_at))
        return stop("the stream ends at " + hex_offset(m_consumed) + ", inside the container at " +
                    hex_offset(m_container.offset) + " (which ends at " +
                    hex_offset(m_container_end) + ")");
    stop("");
}

}  // namespace td::kernels
