#pragma once
// A set of literal strings found in one pass over a line, for `explain`: each line template
// is tried only when its longest literal (its anchor) occurs in the line, so a line costs
// one pass however many signatures and catalog entries there are. An Aho-Corasick automaton
// with sparse transitions (a dense table for the root only, each other state's edges sorted
// in one flat array) and failure links: linear in the line's length on any input (no
// backtracking, no std::regex), and memory linear in the literals' total length, so tens of
// thousands of catalog messages stay a few MiB. Pure.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace td {

class AnchorIndex {
  public:
    // Adds a non-empty literal reported as `id`; call build() after the last add().
    void add(std::string_view literal, std::uint32_t id);
    void build();

    // Calls on_hit(id) for each added literal that occurs in `text`, once per occurrence
    // (an id may repeat). Requires build().
    template <class F>
    void scan(std::string_view text, F&& on_hit) const {
        std::uint32_t state = 0;
        for (char ch : text) {
            state = advance(state, static_cast<unsigned char>(ch));
            // this state's literals, then those of the states its failure chain ends in
            for (std::uint32_t s = m_own_begin[state] < m_own_begin[state + 1] ? state
                                                                               : m_dict[state];
                 s != 0; s = m_dict[s])
                for (std::uint32_t k = m_own_begin[s]; k < m_own_begin[s + 1]; ++k)
                    on_hit(m_own[k]);
        }
    }

    std::size_t states() const { return m_fail.size(); }

  private:
    static constexpr std::uint32_t k_none = 0xffffffffu;
    // The state after byte c from `state`: its own edge, else its failure chain's, else the
    // root's (0 when the root has none either).
    std::uint32_t advance(std::uint32_t state, unsigned char c) const {
        for (;;) {
            if (state == 0) return m_root[c];
            if (std::uint32_t next = step(state, c); next != k_none) return next;
            state = m_fail[state];
        }
    }
    // The state `state` (not the root) goes to on byte c, or k_none.
    std::uint32_t step(std::uint32_t state, unsigned char c) const {
        std::uint32_t lo = m_edge_begin[state], hi = m_edge_begin[state + 1];
        while (lo < hi) {  // edges sorted by byte; most states have one or two
            std::uint32_t mid = (lo + hi) / 2;
            if (m_edge_byte[mid] < c)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo < m_edge_begin[state + 1] && m_edge_byte[lo] == c ? m_edge_to[lo] : k_none;
    }

    std::vector<std::pair<std::string, std::uint32_t>> m_literals;
    std::array<std::uint32_t, 256> m_root{};  // the root's transitions (0: stay at the root)
    std::vector<std::uint32_t> m_edge_begin;  // per state, its edges (states + 1)
    std::vector<unsigned char> m_edge_byte;   // edges sorted by byte within a state
    std::vector<std::uint32_t> m_edge_to;
    std::vector<std::uint32_t> m_fail;       // failure link of each state
    std::vector<std::uint32_t> m_dict;       // nearest state on the failure chain with ids
    std::vector<std::uint32_t> m_own_begin;  // per state, its ids in m_own (states + 1)
    std::vector<std::uint32_t> m_own;        // ids of the literals ending at each state
};

}  // namespace td
