#include "core/json/diagnostics.hpp"

namespace td {

std::string format_diagnostic(const Diagnostic& d) {
    std::string out =
        d.file + ":" + std::to_string(d.pos.line) + ":" + std::to_string(d.pos.col) + ": ";
    if (!d.path.empty()) out += d.path + ": ";
    return out + d.message;
}

}  // namespace td
