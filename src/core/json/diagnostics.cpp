#include "core/json/diagnostics.hpp"

#include "util/strings.hpp"

namespace td {

std::string format_diagnostic(const Diagnostic& d) {
    // The file name comes from the file system: shown escaped, never acted on.
    std::string out = terminal_text(d.file) + ":";
    if (d.pos.line > 0) out += std::to_string(d.pos.line) + ":" + std::to_string(d.pos.col) + ":";
    out += " ";
    if (!d.path.empty()) out += d.path + ": ";
    return out + d.message;
}

void Diagnostics::add(SourcePos pos, std::string path, std::string message) {
    ++m_count;
    if (m_count <= k_max_kept) {
        m_items.push_back({m_file, pos, std::move(path), std::move(message)});
        return;
    }
    std::string more = "and " + std::to_string(m_count - k_max_kept) +
                       " more problems in this file (the first " + std::to_string(k_max_kept) +
                       " are shown)";
    if (m_items.size() == k_max_kept)
        m_items.push_back({m_file, {0, 0}, "", std::move(more)});
    else
        m_items.back().message = std::move(more);
}

}  // namespace td
