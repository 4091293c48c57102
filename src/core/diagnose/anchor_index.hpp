#pragma once
// A set of literal strings found in one pass over a line, for `explain`: each line template
// is tried only when its longest literal (its anchor) occurs in the line, so a line costs
// one pass however many signatures there are. An Aho-Corasick automaton with a dense
// transition table over byte classes: linear in the line's length on any input (no
// backtracking, no std::regex). Pure.
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
        for (char c : text) {
            state = m_next[state * m_classes + m_class[static_cast<unsigned char>(c)]];
            for (std::uint32_t k = m_out_begin[state]; k < m_out_begin[state + 1]; ++k)
                on_hit(m_out[k]);
        }
    }

    std::size_t states() const { return m_out_begin.empty() ? 0 : m_out_begin.size() - 1; }

  private:
    std::vector<std::pair<std::string, std::uint32_t>> m_literals;
    std::array<std::uint16_t, 256> m_class{};  // byte -> class; 0: a byte in no literal
    std::uint32_t m_classes = 1;
    std::vector<std::uint32_t> m_next;       // state * m_classes + class -> state
    std::vector<std::uint32_t> m_out_begin;  // per state, its ids in m_out (states + 1)
    std::vector<std::uint32_t> m_out;        // ids of the literals ending at each state
};

}  // namespace td
