#include "app/console.hpp"

#include <cstdio>
#include <ctime>
#include <iostream>
#include <mutex>
#include <regex>

namespace td::app {
namespace {

struct ConsoleState {
    Verbosity verbosity = Verbosity::normal;
    bool color_stdout = false;
    bool color_stderr = false;
    std::mutex mutex;
};

ConsoleState& state() {
    static ConsoleState s;
    return s;
}

std::string paint(bool on, Paint style, std::string_view text) {
    if (!on) return std::string(text);
    const char* code = "";
    switch (style) {
        case Paint::error:
            code = "\x1b[1;31m";
            break;
        case Paint::warn:
            code = "\x1b[33m";
            break;
        case Paint::ok:
            code = "\x1b[32m";
            break;
        case Paint::dim:
            code = "\x1b[2m";
            break;
        case Paint::bold:
            code = "\x1b[1m";
            break;
    }
    return std::string(code) + std::string(text) + "\x1b[0m";
}

void write_line(std::string_view prefix, std::string_view line) {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    std::cerr << prefix << line << "\n" << std::flush;
}

}  // namespace

void configure_console(Verbosity verbosity, std::string_view color, bool no_color, bool stdout_tty,
                       bool stderr_tty) {
    auto& s = state();
    s.verbosity = verbosity;
    bool always = color == "always", never = color == "never";
    s.color_stdout = always || (!never && !no_color && stdout_tty);
    s.color_stderr = always || (!never && !no_color && stderr_tty);
}

bool quiet() { return state().verbosity == Verbosity::quiet; }
bool verbose() { return state().verbosity == Verbosity::verbose; }

std::string format_seconds(double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
    return buf;
}

std::string now_text(const char* format, bool utc) {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    if (utc)
        gmtime_r(&now, &tm);
    else
        localtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, format, &tm);
    return buf;
}

void progress(std::string_view line) {
    if (quiet()) return;
    write_line(paint_stderr(Paint::dim, "[" + now_text("%H:%M:%S") + "] "), line);
}

void detail(std::string_view line) {
    if (!verbose()) return;
    write_line(paint_stderr(Paint::dim, "[" + now_text("%H:%M:%S") + "]   "), line);
}

void note(std::string_view line) {
    if (quiet()) return;
    write_line(paint_stderr(Paint::warn, "torchdock: note: "), line);
}

std::string paint_verdicts(const std::string& table) {
    if (!state().color_stdout) return table;
    static const std::regex word(R"(\b(FAILED|FAIL|ERROR|WARN|WAIVED|PASS|built)\b)");
    std::string out;
    std::size_t begin = 0;
    while (begin < table.size()) {
        std::size_t end = table.find('\n', begin);
        end = end == std::string::npos ? table.size() : end + 1;
        std::string line = table.substr(begin, end - begin);
        begin = end;
        // A header (the line above a "----" rule) keeps its plain words.
        if (table.compare(begin, 2, "--") == 0) {
            out += line;
            continue;
        }
        std::size_t last = 0;
        for (std::sregex_iterator it(line.begin(), line.end(), word), stop; it != stop; ++it) {
            out.append(line, last, static_cast<std::size_t>(it->position()) - last);
            std::string w = it->str();
            Paint style = w == "PASS" || w == "built"    ? Paint::ok
                          : w == "WARN" || w == "WAIVED" ? Paint::warn
                                                         : Paint::error;
            out += paint(true, style, w);
            last = static_cast<std::size_t>(it->position() + it->length());
        }
        out.append(line, last, std::string::npos);
    }
    return out;
}

std::string paint_stdout(Paint style, std::string_view text) {
    return paint(state().color_stdout, style, text);
}
std::string paint_stderr(Paint style, std::string_view text) {
    return paint(state().color_stderr, style, text);
}

}  // namespace td::app
