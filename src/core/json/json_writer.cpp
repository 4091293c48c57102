#include "core/json/json_writer.hpp"

#include <cstdio>
#include <cstdlib>

namespace td {

void JsonWriter::newline() {
    m_out += '\n';
    m_out.append(2 * m_first.size(), ' ');
}

void JsonWriter::before_value() {
    if (m_after_key) {
        m_after_key = false;
        return;
    }
    if (m_first.empty()) return;
    if (!m_first.back()) m_out += ',';
    m_first.back() = false;
    newline();
}

JsonWriter& JsonWriter::open(char c) {
    before_value();
    m_out += c;
    m_first.push_back(true);
    return *this;
}

JsonWriter& JsonWriter::close(char c) {
    bool empty = m_first.back();
    m_first.pop_back();
    if (!empty) newline();
    m_out += c;
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
    before_value();
    write_string(k);
    m_out += ": ";
    m_after_key = true;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
    before_value();
    write_string(s);
    return *this;
}

void JsonWriter::write_string(std::string_view s) {
    m_out += '"';
    for (unsigned char c : s) {
        switch (c) {
            case '"':
                m_out += "\\\"";
                break;
            case '\\':
                m_out += "\\\\";
                break;
            case '\n':
                m_out += "\\n";
                break;
            case '\r':
                m_out += "\\r";
                break;
            case '\t':
                m_out += "\\t";
                break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    m_out += buf;
                } else {
                    m_out += static_cast<char>(c);
                }
        }
    }
    m_out += '"';
}

JsonWriter& JsonWriter::value(double d) {
    before_value();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    // Shortest form that round-trips for the values we write (thresholds like 250 or 0.5).
    for (int precision = 1; precision <= 17; ++precision) {
        char trial[32];
        std::snprintf(trial, sizeof trial, "%.*g", precision, d);
        if (std::strtod(trial, nullptr) == d) {
            m_out += trial;
            return *this;
        }
    }
    m_out += buf;
    return *this;
}

JsonWriter& JsonWriter::value(int i) {
    before_value();
    m_out += std::to_string(i);
    return *this;
}

JsonWriter& JsonWriter::boolean(bool b) {
    before_value();
    m_out += b ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null() {
    before_value();
    m_out += "null";
    return *this;
}

JsonWriter& JsonWriter::strings(const std::vector<std::string>& xs) {
    begin_array();
    for (const auto& x : xs) value(x);
    return end_array();
}

std::string JsonWriter::take() {
    m_out += '\n';
    return std::move(m_out);
}

}  // namespace td
