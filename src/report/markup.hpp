#pragma once
// Text from images, nodes and registries made inert for the report formats.
#include <string>

namespace td::report {

// XML 1.0 text: markup characters as entities; control characters (which XML 1.0 cannot
// carry) and bytes that are not UTF-8 shown escaped as in terminal_text.
std::string xml_escape(const std::string& s);

// Inert Markdown: one line (terminal_text), every ASCII punctuation character
// backslash-escaped (CommonMark allows that for all of them), so text from an image makes no
// HTML, link, image, emphasis or table cell of its own.
std::string md_escape(const std::string& s);

}  // namespace td::report
