#include "core/diagnose/anchor_index.hpp"

#include <algorithm>
#include <tuple>

namespace td {

void AnchorIndex::add(std::string_view literal, std::uint32_t id) {
    if (!literal.empty()) m_literals.emplace_back(std::string(literal), id);
}

void AnchorIndex::build() {
    // The trie, built from the literals in sorted order: a literal shares the path of the
    // longest prefix it has in common with the one before it, so children are found on the
    // stack of the previous literal's path. State 0 is the root.
    std::vector<std::size_t> order(m_literals.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(m_literals[a].first, m_literals[a].second) <
               std::tie(m_literals[b].first, m_literals[b].second);
    });
    struct Edge {
        std::uint32_t from;
        unsigned char byte;
        std::uint32_t to;
    };
    std::vector<Edge> edges;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> owns;  // state, id
    std::vector<std::uint32_t> path{0};                         // states along the last literal
    std::string previous;
    std::uint32_t states = 1;
    for (std::size_t i : order) {
        const std::string& lit = m_literals[i].first;
        std::size_t common = 0;
        while (common < lit.size() && common < previous.size() && lit[common] == previous[common])
            ++common;
        path.resize(common + 1);
        for (std::size_t k = common; k < lit.size(); ++k) {
            edges.push_back({path.back(), static_cast<unsigned char>(lit[k]), states});
            path.push_back(states++);
        }
        owns.emplace_back(path[lit.size()], m_literals[i].second);
        previous = lit;
    }

    // Flat per-state edge lists sorted by byte.
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
        return std::tie(a.from, a.byte) < std::tie(b.from, b.byte);
    });
    m_edge_begin.assign(states + 1, 0);
    m_edge_byte.resize(edges.size());
    m_edge_to.resize(edges.size());
    for (std::size_t e = 0; e < edges.size(); ++e) {
        ++m_edge_begin[edges[e].from + 1];
        m_edge_byte[e] = edges[e].byte;
        m_edge_to[e] = edges[e].to;
    }
    for (std::uint32_t s = 0; s < states; ++s) m_edge_begin[s + 1] += m_edge_begin[s];
    m_root.fill(0);
    for (std::uint32_t e = m_edge_begin[0]; e < m_edge_begin[1]; ++e)
        m_root[m_edge_byte[e]] = m_edge_to[e];

    std::sort(owns.begin(), owns.end());
    m_own_begin.assign(states + 1, 0);
    m_own.resize(owns.size());
    for (std::size_t k = 0; k < owns.size(); ++k) {
        ++m_own_begin[owns[k].first + 1];
        m_own[k] = owns[k].second;
    }
    for (std::uint32_t s = 0; s < states; ++s) m_own_begin[s + 1] += m_own_begin[s];

    // Breadth first: failure links (to a state of smaller depth, so already set) and the
    // dictionary links (the nearest state on the failure chain that ends a literal).
    m_fail.assign(states, 0);
    m_dict.assign(states, 0);
    std::vector<std::uint32_t> queue;
    queue.reserve(states);
    for (std::uint32_t e = m_edge_begin[0]; e < m_edge_begin[1]; ++e) queue.push_back(m_edge_to[e]);
    for (std::size_t head = 0; head < queue.size(); ++head) {
        std::uint32_t u = queue[head];
        for (std::uint32_t e = m_edge_begin[u]; e < m_edge_begin[u + 1]; ++e) {
            unsigned char c = m_edge_byte[e];
            std::uint32_t v = m_edge_to[e];
            std::uint32_t target = advance(m_fail[u], c);
            m_fail[v] = target;
            m_dict[v] = m_own_begin[target] < m_own_begin[target + 1] ? target : m_dict[target];
            queue.push_back(v);
        }
    }
}

}  // namespace td
