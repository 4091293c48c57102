#include "report/markup.hpp"

#include <cctype>

#include "util/strings.hpp"

namespace td::report {

std::string xml_escape(const std::string& s) {
    std::string out;
    for (char c : terminal_text(s)) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string md_escape(const std::string& s) {
    std::string out;
    for (char c : terminal_text(s)) {
        if (std::ispunct(static_cast<unsigned char>(c))) out += '\\';
        out += c;
    }
    return out;
}

}  // namespace td::report
