#pragma once
// The explain corpus (tests/data/explain_corpus/, see its README.md): real error logs from
// public issues and forums, each a file with a header block:
//   # source: https://...          where the log was posted
//   # expect: EX150 | unknown       the signature explain must name first, or "unknown"
//   # also: EX151, EX604           (optional) signatures that must be named after it
//   # facts: major=11, fragmented    (optional) facts the first explanation must carry (=value)
//   # why: one line                why that is the right answer
//   # ----
//   <the log as posted>
// Shared by the corpus test and bench/explain_bench.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace td::test {

struct CorpusCase {
    std::string file, source, expect, why, log;
    std::vector<std::string> also;
    std::vector<std::pair<std::string, std::string>> facts;  // name, value ("" = any value)
    std::string problem;                                     // a malformed header, named
};

// A case file's header: its "# key: value" lines up to "# ----", and the log after it; the
// problem names an unexpected header line, a key twice, or a missing "# ----".
struct CaseHeader {
    std::map<std::string, std::string> fields;
    std::string log, problem;
};

inline CaseHeader read_case_header(const std::string& file, const std::string& text) {
    CaseHeader h;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        if (line == "# ----") {
            h.log = text.substr(pos);
            return h;
        }
        auto colon = line.find(": ");
        if (line.rfind("# ", 0) != 0 || colon == std::string::npos ||
            !h.fields.emplace(line.substr(2, colon - 2), line.substr(colon + 2)).second) {
            h.problem = file + ": unexpected header line \"" + line + "\"";
            return h;
        }
    }
    h.problem = file + ": no \"# ----\" line ends the header";
    return h;
}

// The header's own problem, or a key the case format does not have ("" when neither).
inline std::string header_problem(const std::string& file, const CaseHeader& h) {
    if (!h.problem.empty()) return h.problem;
    if (!h.fields.empty())
        return file + ": unexpected header line \"# " + h.fields.begin()->first + ": ...\"";
    return {};
}

// The value of `key` taken out of the header (so what is left are unknown keys), or "".
inline std::string take_field(CaseHeader& h, const std::string& key) {
    auto it = h.fields.find(key);
    if (it == h.fields.end()) return {};
    std::string value = it->second;
    h.fields.erase(it);
    return value;
}

inline CorpusCase parse_corpus_case(const std::string& file, const std::string& text) {
    CorpusCase c;
    c.file = file;
    CaseHeader h = read_case_header(file, text);
    c.source = take_field(h, "source");
    c.expect = take_field(h, "expect");
    c.why = take_field(h, "why");
    std::stringstream also(take_field(h, "also")), facts(take_field(h, "facts"));
    for (std::string id; std::getline(also, id, ',');) {
        id.erase(0, id.find_first_not_of(' '));
        id.erase(id.find_last_not_of(' ') + 1);
        if (!id.empty()) c.also.push_back(id);
    }
    for (std::string item; std::getline(facts, item, ',');) {
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        auto eq = item.find('=');
        if (!item.empty())
            c.facts.emplace_back(item.substr(0, eq),
                                 eq == std::string::npos ? "" : item.substr(eq + 1));
    }
    c.log = h.log;
    c.problem = header_problem(file, h);
    if (!c.problem.empty()) return c;
    if (c.source.rfind("https://", 0) != 0)
        c.problem = file + ": no https:// source";
    else if (c.expect.empty())
        c.problem = file + ": no expect";
    else if (c.why.empty())
        c.problem = file + ": no why";
    else if (c.log.empty())
        c.problem = file + ": no log after the header";
    return c;
}

// Every *.log in `dir` as (file name, text), sorted by file name (the held-out set's too).
inline std::vector<std::pair<std::string, std::string>> read_log_files(
    const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> paths;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().extension() == ".log") paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& p : paths) {
        std::ifstream in(p, std::ios::binary);
        std::stringstream buf;
        buf << in.rdbuf();
        out.emplace_back(p.filename().string(), buf.str());
    }
    return out;
}

inline std::vector<CorpusCase> load_corpus(const std::filesystem::path& dir) {
    std::vector<CorpusCase> out;
    for (const auto& [name, text] : read_log_files(dir))
        out.push_back(parse_corpus_case(name, text));
    return out;
}

}  // namespace td::test
