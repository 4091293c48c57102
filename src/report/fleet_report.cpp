#include "report/fleet_report.hpp"

#include <nlohmann/json.hpp>

#include "core/json/json_text.hpp"
#include "report/markup.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"

namespace td::report {
namespace {

using json = nlohmann::json;

// The verdict judge_fleet gave the node from its report's evidence (not the report's word).
std::string verdict_of(const FleetNode& n) {
    if (!n.report.is_object()) return "no report";
    return n.verdict.empty() ? "unknown" : n.verdict;
}

// The first reason (or why it gave no report), one line; a healthy node's waivers.
std::string reason_of(const FleetNode& n) {
    if (!n.failure_kind.empty()) return n.failure_kind + ": " + n.failure;
    if (!n.reasons.empty()) return n.reasons.front();
    if (!n.waivers.empty()) return "healthy only through waivers: " + join(n.waivers, "; ");
    return "";
}

// "node1: TD130 by --waive: reason" for every waiver every node applied.
std::vector<std::string> waiver_lines(const FleetReport& r) {
    std::vector<std::string> out;
    for (const auto& n : r.nodes)
        for (const auto& w : n.waivers) out.push_back(n.node + ": " + w);
    return out;
}

int group_of(const FleetReport& r, const std::string& node) {
    for (std::size_t g = 0; g < r.groups.size(); ++g)
        for (const auto& n : r.groups[g].nodes)
            if (n == node) return static_cast<int>(g) + 1;
    return 0;
}

std::string summary(const FleetReport& r) {
    return std::to_string(r.nodes.size()) + " nodes: " + std::to_string(r.healthy) + " healthy, " +
           std::to_string(r.drained) + " to drain, " + std::to_string(r.unknown) +
           " not checked, " + std::to_string(r.failed) + " without a report; " +
           std::to_string(r.groups.size()) + (r.groups.size() == 1 ? " group" : " groups") + "; " +
           (r.uniform() ? "uniform" : "not uniform");
}

// A node fails its test case when it is not healthy, gave no report, is an outlier, or the
// fleet has a split (no majority there: no node can be called the right one).
std::vector<std::string> node_problems(const FleetReport& r, const FleetNode& n) {
    std::vector<std::string> out;
    if (!n.failure_kind.empty())
        out.push_back(n.failure_kind + ": " + n.failure);
    else if (verdict_of(n) != "healthy")
        out.push_back(verdict_of(n) + ": " + reason_of(n));
    for (const auto& o : r.outliers)
        if (o.node == n.node) out.push_back(outlier_line(o));
    for (const auto& s : r.splits) out.push_back("split: " + split_line(s));
    return out;
}

}  // namespace

std::string fleet_table(const FleetReport& r) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& n : r.nodes) {
        int g = group_of(r, n.node);
        rows.push_back({terminal_text(n.node), verdict_of(n), g ? std::to_string(g) : "-",
                        terminal_text(reason_of(n), 160)});
    }
    std::string out = format_table({"NODE", "VERDICT", "GROUP", "REASON"}, rows);
    if (!r.outliers.empty()) {
        out += "\noutliers (most likely to break a job first):\n";
        for (const auto& o : r.outliers)
            out += "  " + terminal_text(outlier_line(o)) + "  [" + o.category + "]\n";
    }
    if (!r.splits.empty()) {
        out += "\nno majority:\n";
        for (const auto& s : r.splits) out += "  " + terminal_text(split_line(s)) + "\n";
    }
    if (auto waived = waiver_lines(r); !waived.empty()) {
        out += "\nwaived (failures the invoker accepted, not passes):\n";
        for (const auto& w : waived) out += "  " + terminal_text(w, 300) + "\n";
    }
    return out + summary(r) + "\n";
}

std::string fleet_json(const FleetReport& r) {
    json nodes = json::array();
    for (const auto& n : r.nodes)
        nodes.push_back({{"node", n.node},
                         {"verdict", verdict_of(n)},
                         {"group", group_of(r, n.node)},
                         {"failure_kind", n.failure_kind.empty() ? json() : json(n.failure_kind)},
                         {"failure", n.failure.empty() ? json() : json(n.failure)},
                         {"reasons", n.reasons},
                         {"waivers", n.waivers},
                         {"claimed_node", n.claimed_node.empty() ? json() : json(n.claimed_node)},
                         {"report", n.report}});
    json groups = json::array();
    for (const auto& g : r.groups) groups.push_back({{"nodes", g.nodes}});
    json outliers = json::array();
    for (const auto& o : r.outliers)
        outliers.push_back({{"node", o.node},
                            {"path", o.path},
                            {"label", o.label},
                            {"value", o.value},
                            {"majority", o.majority},
                            {"majority_nodes", o.majority_nodes},
                            {"category", o.category},
                            {"weight", o.weight},
                            {"why", o.why},
                            {"line", outlier_line(o)}});
    json splits = json::array();
    for (const auto& s : r.splits) {
        json values = json::array();
        for (const auto& [v, who] : s.values) values.push_back({{"value", v}, {"nodes", who}});
        splits.push_back({{"path", s.path},
                          {"label", s.label},
                          {"category", s.category},
                          {"weight", s.weight},
                          {"values", values},
                          {"line", split_line(s)}});
    }
    return json_text(json{{"schema", 1},
                          {"kind", "fleet"},
                          {"image", r.image},
                          {"uniform", r.uniform()},
                          {"counts",
                           {{"nodes", r.nodes.size()},
                            {"healthy", r.healthy},
                            {"drain", r.drained},
                            {"unknown", r.unknown},
                            {"no_report", r.failed}}},
                          {"groups", groups},
                          {"outliers", outliers},
                          {"splits", splits},
                          {"nodes", nodes}});
}

std::string fleet_markdown(const FleetReport& r) {
    std::string out = "## torchdock fleet: " + md_escape(r.image) + "\n\n" + md_escape(summary(r)) +
                      "\n\n| node | verdict | group | reason |\n|---|---|---|---|\n";
    for (const auto& n : r.nodes) {
        int g = group_of(r, n.node);
        out += "| " + md_escape(n.node) + " | " + md_escape(verdict_of(n)) + " | " +
               (g ? std::to_string(g) : "-") + " | " + md_escape(reason_of(n)) + " |\n";
    }
    if (!r.outliers.empty()) {
        out += "\n### Outliers\n\n";
        for (const auto& o : r.outliers)
            out += "- " + md_escape(outlier_line(o)) + " (" + md_escape(o.why) + ")\n";
    }
    if (!r.splits.empty()) {
        out += "\n### No majority\n\n";
        for (const auto& s : r.splits) out += "- " + md_escape(split_line(s)) + "\n";
    }
    if (auto waived = waiver_lines(r); !waived.empty()) {
        out += "\n### Waived\n\n";
        for (const auto& w : waived) out += "- " + md_escape(w) + "\n";
    }
    return out;
}

std::string fleet_junit(const FleetReport& r) {
    std::size_t failures = 0;
    std::string cases;
    for (const auto& n : r.nodes) {
        auto problems = node_problems(r, n);
        cases += "    <testcase classname=\"fleet\" name=\"" + xml_escape(n.node) + "\"";
        if (problems.empty()) {
            cases += "/>\n";
            continue;
        }
        ++failures;
        cases += "><failure message=\"" + xml_escape(problems.front()) + "\">" +
                 xml_escape(join(problems, "\n")) + "</failure></testcase>\n";
    }
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"fleet " +
           xml_escape(r.image) + "\" tests=\"" + std::to_string(r.nodes.size()) + "\" failures=\"" +
           std::to_string(failures) + "\">\n" + cases + "  </testsuite>\n</testsuites>\n";
}

}  // namespace td::report
