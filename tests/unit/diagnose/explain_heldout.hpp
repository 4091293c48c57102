#pragma once
// The held-out explain set (tests/data/explain_heldout/, see its README.md): real logs from
// public issue threads in families that nothing in data/ was written from, collected before
// the catalogs' meanings were written and never used to write them. Each file:
//   # source: https://...     where the log was posted
//   # tool: apt               the tool that printed the failing line
//   # truth: one sentence     the root cause, from the thread's resolution
//   # accept: a|b; c|d        how a scorer decides an answer is right: the first explanation's
//                             title, cause and fix (lowercased) hold, for every ';' group, one
//                             of its '|' alternatives
//   # ----
//   <the log as posted>
// Shared by its test (tests/unit/diagnose/explain_heldout_test.cpp) and
// bench/explain_heldout_bench.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "core/diagnose/explain.hpp"
#include "diagnose/explain_corpus.hpp"

namespace td::test {

struct HeldoutCase {
    std::string file, source, tool, truth, log;
    std::vector<std::vector<std::string>> accept;  // every group needs one of its alternatives
    std::string problem;                           // a malformed header, named
};

inline std::vector<std::string> split_trimmed(const std::string& text, char sep) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, sep);) {
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

inline HeldoutCase parse_heldout_case(const std::string& file, const std::string& text) {
    HeldoutCase c;
    c.file = file;
    CaseHeader h = read_case_header(file, text);
    c.source = take_field(h, "source");
    c.tool = take_field(h, "tool");
    c.truth = take_field(h, "truth");
    for (const auto& group : split_trimmed(take_field(h, "accept"), ';')) {
        auto alternatives = split_trimmed(group, '|');
        if (!alternatives.empty()) c.accept.push_back(alternatives);
    }
    c.log = h.log;
    c.problem = header_problem(file, h);
    if (!c.problem.empty()) return c;
    if (c.source.rfind("https://", 0) != 0)
        c.problem = file + ": no https:// source";
    else if (c.tool.empty() || c.truth.empty() || c.accept.empty())
        c.problem = file + ": needs tool, truth and accept";
    else if (c.log.empty())
        c.problem = file + ": no log after the header";
    return c;
}

inline std::vector<HeldoutCase> load_heldout(const std::filesystem::path& dir) {
    std::vector<HeldoutCase> out;
    for (const auto& [name, text] : read_log_files(dir))
        out.push_back(parse_heldout_case(name, text));
    return out;
}

// How explain's answer to a case grades: right (the first explanation passes `accept`), a
// wrong root cause (a signature's answer that does not), a meaning that does not, or unknown.
enum class HeldoutGrade { Right, WrongRootCause, WrongMeaning, Unknown };

inline HeldoutGrade grade_heldout(const HeldoutCase& c, const std::vector<Explanation>& found) {
    if (found.empty()) return HeldoutGrade::Unknown;
    const Explanation& e = found.front();
    std::string text = e.title + "\n" + e.cause + "\n" + e.fix;
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    bool right = std::all_of(c.accept.begin(), c.accept.end(), [&](const auto& group) {
        return std::any_of(group.begin(), group.end(), [&](std::string alt) {
            std::transform(alt.begin(), alt.end(), alt.begin(),
                           [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
            return text.find(alt) != std::string::npos;
        });
    });
    if (right) return HeldoutGrade::Right;
    return e.vocabulary ? HeldoutGrade::WrongMeaning : HeldoutGrade::WrongRootCause;
}

}  // namespace td::test
