#pragma once
// Problems found in an input file, collected in one pass and reported together as
// "file:line:col: JSON path: message".
#include <string>
#include <vector>

#include "core/json/source_json.hpp"

namespace td {

struct Diagnostic {
    std::string file;
    SourcePos pos;
    std::string path;  // JSON path like $.matrix.cuda[1]; empty for syntax errors
    std::string message;
};

std::string format_diagnostic(const Diagnostic& d);

class Diagnostics {
  public:
    explicit Diagnostics(std::string file) : m_file(std::move(file)) {}
    void add(SourcePos pos, std::string path, std::string message) {
        m_items.push_back({m_file, pos, std::move(path), std::move(message)});
    }
    bool empty() const { return m_items.empty(); }
    const std::vector<Diagnostic>& items() const { return m_items; }
    const std::string& file() const { return m_file; }

  private:
    std::string m_file;
    std::vector<Diagnostic> m_items;
};

}  // namespace td
