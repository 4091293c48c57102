#include "core/build_progress.hpp"

#include "util/strings.hpp"

namespace td {
namespace {

// "[3/6] ..." -> 6; "[internal] ..." -> nullopt
std::optional<int> step_total(const std::string& title) {
    if (title.size() < 5 || title[0] != '[') return std::nullopt;
    auto slash = title.find('/');
    auto close = title.find(']');
    if (slash == std::string::npos || close == std::string::npos || slash > close) return std::nullopt;
    // Multi-stage titles look like "[stage-1 3/6]"; take the number after the slash.
    std::string n = title.substr(slash + 1, close - slash - 1);
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stoi(n);
}

}  // namespace

std::optional<std::string> BuildProgress::feed(const std::string& raw) {
    std::string line = raw;
    while (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) return std::nullopt;
    if (line[0] != '#') {
        if (starts_with(line, "ERROR:") || starts_with(line, "error:") || starts_with(line, "failed to solve"))
            m_final_error = line;
        return std::nullopt;
    }
    auto space = line.find(' ');
    if (space == std::string::npos) return std::nullopt;
    std::string id_text = line.substr(1, space - 1);
    if (id_text.empty() || id_text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    int id = std::stoi(id_text);
    std::string rest = line.substr(space + 1);
    Vertex& v = m_vertices[id];
    if (v.title.empty() && !rest.empty() && rest[0] == '[') {
        v.title = rest;
        if (auto total = step_total(rest)) {
            v.is_step = true;
            if (*total > m_total) m_total = *total;
            return rest;
        }
        return std::nullopt;
    }
    if (rest == "CACHED") {
        if (v.is_step) ++m_cached;
    } else if (starts_with(rest, "ERROR:") || starts_with(rest, "ERROR ")) {
        v.error = rest;
        if (m_failed < 0 || v.is_step) m_failed = id;
    } else if (!starts_with(rest, "DONE") && !starts_with(rest, "sha256:")) {
        // "#7 0.532 output text": drop the timestamp.
        auto sp = rest.find(' ');
        bool timed = sp != std::string::npos && rest.find_first_not_of("0123456789.") == sp;
        v.output.push_back(timed ? rest.substr(sp + 1) : rest);
        if (v.output.size() > 200) v.output.erase(v.output.begin());
    }
    return std::nullopt;
}

std::string BuildProgress::failed_step() const {
    if (m_failed < 0) return {};
    return m_vertices.at(m_failed).title;
}

std::vector<std::string> BuildProgress::failure_tail(std::size_t n) const {
    if (m_failed < 0) return {};
    const Vertex& v = m_vertices.at(m_failed);
    std::vector<std::string> out(v.output.size() > n ? v.output.end() - static_cast<long>(n) : v.output.begin(),
                                 v.output.end());
    if (!v.error.empty()) out.push_back(v.error);
    return out;
}

}  // namespace td
