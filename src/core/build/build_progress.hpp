#pragma once
// Reads BuildKit's plain progress stream ("#7 [3/6] RUN ...", "#7 CACHED", "#7 0.53 output",
// "#7 ERROR: ...", "ERROR: failed to solve: ...") line by line: which step is running,
// how many steps came from the cache, which step failed and its last output lines.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace td {

class BuildProgress {
  public:
    // Returns the step title ("[3/6] RUN apt-get ...") when this line starts a new step.
    std::optional<std::string> feed(const std::string& line);

    int steps() const { return m_total; }
    int cached() const { return m_cached; }
    std::string failed_step() const;
    std::vector<std::string> failure_tail(std::size_t n) const;
    const std::string& final_error() const { return m_final_error; }

  private:
    struct Vertex {
        std::string title;
        bool is_step = false;
        std::vector<std::string> output;
        std::set<std::string> seen;  // raw lines already taken, to drop repeats
        std::string error;
    };
    std::map<std::string, int> m_stage_totals;
    std::map<int, Vertex> m_vertices;
    int m_total = 0;
    int m_cached = 0;
    int m_failed = -1;
    std::string m_final_error;
};

}  // namespace td
