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

inline CorpusCase parse_corpus_case(const std::string& file, const std::string& text) {
    CorpusCase c;
    c.file = file;
    std::size_t pos = 0;
    bool ended = false;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        if (line == "# ----") {
            ended = true;
            break;
        }
        auto field = [&](const char* key, std::string& into) {
            std::string prefix = std::string("# ") + key + ": ";
            if (line.rfind(prefix, 0) != 0) return false;
            into = line.substr(prefix.size());
            return true;
        };
        std::string also, facts;
        if (field("facts", facts)) {
            std::stringstream ss(facts);
            for (std::string item; std::getline(ss, item, ',');) {
                item.erase(0, item.find_first_not_of(' '));
                item.erase(item.find_last_not_of(' ') + 1);
                auto eq = item.find('=');
                if (!item.empty())
                    c.facts.emplace_back(item.substr(0, eq),
                                         eq == std::string::npos ? "" : item.substr(eq + 1));
            }
            continue;
        }
        if (field("source", c.source) || field("expect", c.expect) || field("why", c.why)) continue;
        if (field("also", also)) {
            std::stringstream ss(also);
            for (std::string id; std::getline(ss, id, ',');) {
                id.erase(0, id.find_first_not_of(' '));
                id.erase(id.find_last_not_of(' ') + 1);
                if (!id.empty()) c.also.push_back(id);
            }
            continue;
        }
        c.problem = file + ": unexpected header line \"" + line + "\"";
        return c;
    }
    if (!ended)
        c.problem = file + ": no \"# ----\" line ends the header";
    else if (c.source.rfind("https://", 0) != 0)
        c.problem = file + ": no https:// source";
    else if (c.expect.empty())
        c.problem = file + ": no expect";
    else if (c.why.empty())
        c.problem = file + ": no why";
    c.log = text.substr(pos);
    if (c.problem.empty() && c.log.empty()) c.problem = file + ": no log after the header";
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
