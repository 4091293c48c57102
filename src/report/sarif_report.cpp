#include "report/sarif_report.hpp"

#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "core/json/json_text.hpp"
#include "core/validate/waivers.hpp"
#include "util/strings.hpp"

namespace td::report {
namespace {

using json = nlohmann::json;

// Text shown by a SARIF viewer: one line, control characters escaped (terminal_text), so
// what an image or a file says stays inert after JSON decoding too.
json text(const std::string& s) { return {{"text", terminal_text(s)}}; }

json sarif_log(json driver, json results, json invocation) {
    return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
            {"version", "2.1.0"},
            {"runs", json::array({{{"tool", {{"driver", std::move(driver)}}},
                                   {"invocations", json::array({std::move(invocation)})},
                                   {"results", std::move(results)}}})}};
}

json tool_driver(json rules) {
    return {{"name", "torchdock"}, {"version", TORCHDOCK_VERSION}, {"rules", std::move(rules)}};
}

// fail and error (could not be judged) count as failures; a failing warning-severity check
// and a warn are warnings.
// A waived check keeps the level of its outcome (it is reported as suppressed).
std::string level_of(const CheckResult& c) {
    const std::string& status = c.status == "waived" ? c.outcome : c.status;
    if (status == "error") return "error";
    if (status == "fail") return c.severity == "warning" ? "warning" : "error";
    return "warning";
}

std::string check_message(const CheckResult& c) {
    std::string m = c.name + ": " + (c.message.empty() ? c.status : c.message);
    if (!c.observed.empty() || !c.expected.empty())
        m += " (observed: " + (c.observed.empty() ? "-" : c.observed) +
             "; expected: " + (c.expected.empty() ? "-" : c.expected) + ")";
    if (!c.fix.empty()) m += ". Fix: " + c.fix;
    return m;
}

json image_location(const ImageValidation& v) {
    json logical = {{"name", terminal_text(v.image)}, {"kind", "resource"}};
    if (!v.image_id.empty())
        logical["fullyQualifiedName"] = terminal_text(v.image + "@" + v.image_id);
    return {{"physicalLocation", {{"artifactLocation", {{"uri", sarif_uri(v.image)}}}}},
            {"logicalLocations", json::array({logical})}};
}

json diagnostic_result(const Diagnostic& d, const char* rule, int rule_index, const char* level) {
    json physical = {{"artifactLocation", {{"uri", sarif_uri(d.file)}}}};
    if (d.pos.line > 0)
        physical["region"] = {{"startLine", d.pos.line}, {"startColumn", std::max(1, d.pos.col)}};
    json location = {{"physicalLocation", physical}};
    if (!d.path.empty())
        location["logicalLocations"] =
            json::array({{{"fullyQualifiedName", terminal_text(d.path)}, {"kind", "property"}}});
    return {{"ruleId", rule},
            {"ruleIndex", rule_index},
            {"level", level},
            {"message", text((d.path.empty() ? "" : d.path + ": ") + d.message)},
            {"locations", json::array({location})}};
}

}  // namespace

std::string sarif_uri(const std::string& path) {
    static const char* hex = "0123456789ABCDEF";
    std::string out = !path.empty() && path[0] == '/' ? "file://" : "";
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string validation_sarif(const std::vector<ImageValidation>& all) {
    json rules = json::array(), results = json::array(), notifications = json::array();
    std::map<std::string, int> rule_index;
    bool complete = true;
    for (const auto& v : all) {
        if (!v.error.empty()) {
            complete = false;
            notifications.push_back({{"level", "error"},
                                     {"message", text(v.image + ": " + v.error)},
                                     {"locations", json::array({image_location(v)})}});
        }
        for (const auto& c : v.checks) {
            if (c.status != "fail" && c.status != "warn" && c.status != "error" &&
                c.status != "waived")
                continue;
            auto [it, added] = rule_index.emplace(c.id, static_cast<int>(rules.size()));
            if (added) {
                const CheckInfo& info = check_info(c.id);
                rules.push_back({{"id", c.id},
                                 {"name", info.name},
                                 {"shortDescription", text(info.meaning)},
                                 {"defaultConfiguration",
                                  {{"level", c.severity == "warning" ? "warning" : "error"}}},
                                 {"properties", {{"tier", info.tier}}}});
            }
            results.push_back({{"ruleId", c.id},
                               {"ruleIndex", it->second},
                               {"level", level_of(c)},
                               {"message", text(check_message(c))},
                               {"locations", json::array({image_location(v)})},
                               {"properties",
                                {{"status", c.status},
                                 {"observed", terminal_text(c.observed)},
                                 {"expected", terminal_text(c.expected)}}}});
            // Waived: still a result. A waiver the user gave is marked suppressed with its
            // reason, as code scanning shows a dismissed alert (never dropped, never a pass);
            // one from a repository's settings or manifest is listed, not accepted for them.
            if (c.status == "waived")
                results.back()["properties"]["waiver"] = {
                    {"source", terminal_text(c.waiver_source)},
                    {"reason", terminal_text(c.waiver_reason)}};
            if (c.status == "waived" &&
                waiver_given_by_user({c.id, c.waiver_reason, c.waiver_source}))
                results.back()["suppressions"] =
                    json::array({{{"kind", "external"},
                                  {"status", "accepted"},
                                  {"justification", terminal_text(c.waiver_reason + " (" +
                                                                  c.waiver_source + ")")}}});
        }
    }
    json invocation = {{"executionSuccessful", complete}};
    if (!notifications.empty()) invocation["toolExecutionNotifications"] = notifications;
    return json_text(sarif_log(tool_driver(rules), results, invocation));
}

std::string render_sarif(const std::vector<Diagnostic>& problems,
                         const std::vector<Diagnostic>& warnings) {
    json rules = json::array(
        {{{"id", "manifest-problem"},
          {"name", "ManifestProblem"},
          {"shortDescription",
           text("a manifest or lock file problem: torchdock refuses to render, nothing is "
                "written")},
          {"defaultConfiguration", {{"level", "error"}}}},
         {{"id", "manifest-warning"},
          {"name", "ManifestWarning"},
          {"shortDescription",
           text("rendered anyway, but not as pinned or checked as it could be (a lock that no "
                "longer fits, a GPU target the knowledge base cannot check)")},
          {"defaultConfiguration", {{"level", "warning"}}}}});
    json results = json::array();
    for (const auto& d : problems)
        results.push_back(diagnostic_result(d, "manifest-problem", 0, "error"));
    for (const auto& d : warnings)
        results.push_back(diagnostic_result(d, "manifest-warning", 1, "warning"));
    return json_text(sarif_log(tool_driver(rules), results, {{"executionSuccessful", true}}));
}

}  // namespace td::report
