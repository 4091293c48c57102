#include "core/diagnose/anchor_index.hpp"

#include <map>

namespace td {

void AnchorIndex::add(std::string_view literal, std::uint32_t id) {
    if (!literal.empty()) m_literals.emplace_back(std::string(literal), id);
}

void AnchorIndex::build() {
    // Byte classes: every byte that occurs in a literal gets its own class.
    m_class.fill(0);
    m_classes = 1;
    for (const auto& [lit, id] : m_literals)
        for (char c : lit) {
            auto& cls = m_class[static_cast<unsigned char>(c)];
            if (cls == 0) cls = static_cast<std::uint16_t>(m_classes++);
        }

    // The trie of the literals; state 0 is the root.
    std::vector<std::map<std::uint16_t, std::uint32_t>> children(1);
    std::vector<std::vector<std::uint32_t>> own(1);
    for (const auto& [lit, id] : m_literals) {
        std::uint32_t s = 0;
        for (char c : lit) {
            std::uint16_t cls = m_class[static_cast<unsigned char>(c)];
            auto it = children[s].find(cls);
            if (it == children[s].end()) {
                auto next = static_cast<std::uint32_t>(children.size());
                children[s].emplace(cls, next);
                children.emplace_back();
                own.emplace_back();
                s = next;
            } else {
                s = it->second;
            }
        }
        own[s].push_back(id);
    }

    // Breadth first: failure links and the full transition table. A state's failure link
    // has a smaller depth, so its transitions and outputs are complete when it is used.
    std::size_t n = children.size();
    m_next.assign(n * m_classes, 0);
    std::vector<std::uint32_t> fail(n, 0), order;
    order.reserve(n);
    order.push_back(0);
    for (std::size_t head = 0; head < order.size(); ++head) {
        std::uint32_t u = order[head];
        for (std::uint32_t c = 0; c < m_classes; ++c) {
            auto it = children[u].find(static_cast<std::uint16_t>(c));
            if (it == children[u].end()) {
                m_next[u * m_classes + c] = u == 0 ? 0 : m_next[fail[u] * m_classes + c];
                continue;
            }
            std::uint32_t v = it->second;
            fail[v] = u == 0 ? 0 : m_next[fail[u] * m_classes + c];
            m_next[u * m_classes + c] = v;
            order.push_back(v);
        }
    }
    // Outputs: a state's own literals and those of its failure chain.
    std::vector<std::vector<std::uint32_t>> out(n);
    for (std::uint32_t u : order) {
        out[u] = own[u];
        if (u != 0) out[u].insert(out[u].end(), out[fail[u]].begin(), out[fail[u]].end());
    }
    m_out_begin.assign(n + 1, 0);
    m_out.clear();
    for (std::size_t s = 0; s < n; ++s) {
        m_out_begin[s] = static_cast<std::uint32_t>(m_out.size());
        m_out.insert(m_out.end(), out[s].begin(), out[s].end());
    }
    m_out_begin[n] = static_cast<std::uint32_t>(m_out.size());
}

}  // namespace td
