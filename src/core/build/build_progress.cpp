#include "core/build/build_progress.hpp"

#include "util/strings.hpp"

namespace td {
namespace {

// A small decimal (at most 6 digits: vertex ids and step counts), else nullopt.
std::optional<int> small_number(const std::string& s) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    return std::stoi(s);
}

struct StepTitle {
    std::string stage;  // "" for single-stage builds, "stage-1", "builder", "linux/amd64 stage-0"
    int total = 0;
};

// "[3/6] ..." -> {"", 6}; "[stage-1 3/6] ..." -> {"stage-1", 6}; "[internal] ..." -> nullopt
std::optional<StepTitle> step_title(const std::string& title) {
    if (title.size() < 5 || title[0] != '[') return std::nullopt;
    auto close = title.find(']');
    if (close == std::string::npos) return std::nullopt;
    std::string inside = title.substr(1, close - 1);
    auto space = inside.rfind(' ');
    std::string counter = space == std::string::npos ? inside : inside.substr(space + 1);
    auto slash = counter.find('/');
    if (slash == std::string::npos || !small_number(counter.substr(0, slash))) return std::nullopt;
    auto total = small_number(counter.substr(slash + 1));
    if (!total) return std::nullopt;
    return StepTitle{space == std::string::npos ? "" : inside.substr(0, space), *total};
}

}  // namespace

std::optional<std::string> BuildProgress::feed(const std::string& raw) {
    std::string line = raw;
    while (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) return std::nullopt;
    if (line[0] != '#') {
        if (starts_with(line, "ERROR:") || starts_with(line, "error:") ||
            starts_with(line, "failed to solve") || starts_with(line, "executor failed running"))
            m_final_error = line;
        return std::nullopt;
    }
    auto space = line.find(' ');
    if (space == std::string::npos) return std::nullopt;
    auto id = small_number(line.substr(1, space - 1));
    if (!id) return std::nullopt;
    std::string rest = line.substr(space + 1);
    Vertex& v = m_vertices[*id];
    if (v.title.empty() && !rest.empty() && rest[0] == '[') {
        v.title = rest;
        if (auto step = step_title(rest)) {
            v.is_step = true;
            // Stages count separately: the build's steps are the sum of each stage's n.
            int& stage_total = m_stage_totals[step->stage];
            if (step->total > stage_total) {
                m_total += step->total - stage_total;
                stage_total = step->total;
            }
            return rest;
        }
        return std::nullopt;
    }
    // docker 20.10 prints "#7 ..." when it switches away from a vertex and repeats the
    // title when it comes back; newer BuildKit repeats output lines in its error summary.
    if (rest == "..." || rest == v.title || !v.seen.insert(rest).second) return std::nullopt;
    if (rest == "CACHED") {
        if (v.is_step) ++m_cached;
    } else if (starts_with(rest, "ERROR:") || starts_with(rest, "ERROR ")) {
        v.error = rest;
        if (m_failed < 0 || v.is_step) m_failed = *id;
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
    std::vector<std::string> out(
        v.output.size() > n ? v.output.end() - static_cast<long>(n) : v.output.begin(),
        v.output.end());
    if (!v.error.empty()) out.push_back(v.error);
    return out;
}

}  // namespace td
