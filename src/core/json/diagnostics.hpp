#pragma once
// Problems found in an input file, collected in one pass and reported together as
// "file:line:col: JSON path: message".
#include <string>
#include <vector>

#include "core/json/source_json.hpp"

namespace td {

struct Diagnostic {
    std::string file;
    SourcePos pos;     // line 0: about the whole file (no position is printed)
    std::string path;  // JSON path like $.matrix.cuda[1]; empty for syntax errors
    std::string message;
};

std::string format_diagnostic(const Diagnostic& d);

// Every problem of one file, in one pass. Only the first k_max_kept are kept (a file with
// millions of bad entries must not take gigabytes); the rest are counted, and items() then
// ends with one line saying how many more there were.
class Diagnostics {
  public:
    static constexpr std::size_t k_max_kept = 100;
    explicit Diagnostics(std::string file) : m_file(std::move(file)) {}
    void add(SourcePos pos, std::string path, std::string message);
    bool empty() const { return m_count == 0; }
    // Problems found so far, kept or not (compare counts to see whether a step added any).
    std::size_t count() const { return m_count; }
    const std::vector<Diagnostic>& items() const { return m_items; }
    const std::string& file() const { return m_file; }

  private:
    std::string m_file;
    std::vector<Diagnostic> m_items;
    std::size_t m_count = 0;
};

}  // namespace td
