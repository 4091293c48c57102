#include "report/allreduce_report.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/json/json_text.hpp"
#include "report/markup.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"

namespace td::report {
namespace {

using json = nlohmann::json;

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string transports(const AllreduceResult& r) {
    if (!r.transports.empty()) return join(r.transports, ", ");
    return r.backend == "gloo" ? "gloo (TCP)" : "not reported";
}

}  // namespace

std::string allreduce_table(const AllreduceResult& r) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& z : r.sizes)
        rows.push_back({std::to_string(z.bytes), fixed(z.time_us, 1), fixed(z.algbw_gbps, 3),
                        fixed(z.busbw_gbps, 3),
                        z.baseline_busbw ? fixed(*z.baseline_busbw, 3) : "-",
                        std::to_string(z.wrong)});
    std::string out;
    if (!rows.empty())
        out = format_table({"BYTES", "TIME_US", "ALGBW_GB/S", "BUSBW_GB/S", "BASELINE", "WRONG"},
                           rows);
    std::vector<std::vector<std::string>> ranks;
    for (const auto& o : r.ranks)
        ranks.push_back({std::to_string(o.rank), terminal_text(o.node), o.status,
                         terminal_text(o.reason, 140)});
    out += format_table({"RANK", "NODE", "STATUS", "REASON"}, ranks);
    // The backend and transports come from the ranks' reports and NCCL's lines.
    out += "backend: " + (r.backend.empty() ? std::string("-") : terminal_text(r.backend)) +
           "; transport: " + terminal_text(transports(r)) + "; bandwidth " + r.bandwidth_judged +
           "\n";
    for (const auto& f : r.findings) out += "  " + terminal_text(f) + "\n";
    out += std::to_string(r.world) +
           " ranks: " + (r.verdict == "pass" ? "every sum exact" : "FAILED") + "\n";
    return out;
}

std::string allreduce_json(const AllreduceResult& r, const std::string& image, double seconds) {
    json sizes = json::array(), ranks = json::array();
    for (const auto& z : r.sizes)
        sizes.push_back(
            {{"bytes", z.bytes},
             {"count", z.count},
             {"time_us", z.time_us},
             {"algbw_gbps", z.algbw_gbps},
             {"busbw_gbps", z.busbw_gbps},
             {"wrong", z.wrong},
             {"baseline_busbw_gbps", z.baseline_busbw ? json(*z.baseline_busbw) : json()},
             {"slow", z.slow}});
    for (const auto& o : r.ranks)
        ranks.push_back({{"rank", o.rank},
                         {"node", o.node},
                         {"status", o.status},
                         {"reason", o.reason},
                         {"infiniband", o.infiniband},
                         {"data", o.data}});
    return json_text(json{{"schema", 1},
                          {"kind", "allreduce"},
                          {"image", image},
                          {"world", r.world},
                          {"backend", r.backend},
                          {"verdict", r.verdict},
                          {"findings", r.findings},
                          {"transports", r.transports},
                          {"bandwidth_judged", r.bandwidth_judged},
                          {"seconds", seconds},
                          {"sizes", sizes},
                          {"ranks", ranks}});
}

std::string allreduce_junit(const AllreduceResult& r, const std::string& image) {
    std::string cases;
    int failures = 0;
    auto testcase = [&](const std::string& name, const std::string& problem) {
        cases += "    <testcase classname=\"allreduce\" name=\"" + xml_escape(name) + "\"";
        if (problem.empty()) {
            cases += "/>\n";
            return;
        }
        ++failures;
        cases += "><failure message=\"" + xml_escape(problem) + "\"/></testcase>\n";
    };
    for (const auto& o : r.ranks)
        testcase("rank " + std::to_string(o.rank) + " (" + o.node + ")",
                 o.status == "pass" ? "" : o.status + ": " + o.reason);
    testcase("exact sums and bandwidth", r.verdict == "pass" ? "" : join(r.findings, "; "));
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite "
           "name=\"allreduce " +
           xml_escape(image) + "\" tests=\"" + std::to_string(r.ranks.size() + 1) +
           "\" failures=\"" + std::to_string(failures) + "\">\n" + cases +
           "  </testsuite>\n</testsuites>\n";
}

}  // namespace td::report
