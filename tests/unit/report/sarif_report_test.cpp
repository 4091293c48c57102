#include "report/sarif_report.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <nlohmann/json.hpp>

using namespace td;
using Catch::Matchers::ContainsSubstring;
using json = nlohmann::json;

namespace {

CheckResult check(const std::string& id, const std::string& severity, const std::string& status) {
    CheckResult c;
    c.id = id;
    c.name = "name";
    c.severity = severity;
    c.status = status;
    c.observed = "observed";
    c.expected = "expected";
    c.message = "message";
    c.fix = "fix";
    return c;
}

bool has_control_characters(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x20 && c != '\n') return true;
    return false;
}

}  // namespace

TEST_CASE("validate SARIF: failing, warning and unjudged checks, with levels and the image") {
    report::ImageValidation v;
    v.image = "team/train:1";
    v.image_id = "sha256:abc";
    v.checks = {check("TD101", "error", "pass"),   check("TD102", "error", "fail"),
                check("TD111", "warning", "fail"), check("TD130", "warning", "warn"),
                check("TD104", "error", "error"),  check("TD201", "error", "skip")};
    json log = json::parse(report::validation_sarif({v}));
    CHECK(log["version"] == "2.1.0");
    const json& run = log["runs"][0];
    const json& results = run["results"];
    REQUIRE(results.size() == 4);
    CHECK(results[0]["ruleId"] == "TD102");
    CHECK(results[0]["level"] == "error");
    CHECK(results[1]["level"] == "warning");  // a failing warning-severity check
    CHECK(results[2]["level"] == "warning");  // a warn
    CHECK(results[3]["ruleId"] == "TD104");
    CHECK(results[3]["level"] == "error");  // could not be judged: never a pass
    for (const auto& r : results) {
        const json& rule = run["tool"]["driver"]["rules"][r["ruleIndex"].get<std::size_t>()];
        CHECK(rule["id"] == r["ruleId"]);
        const json& loc = r["locations"][0];
        CHECK(loc["physicalLocation"]["artifactLocation"]["uri"] == "team/train%3A1");
        CHECK(loc["logicalLocations"][0]["fullyQualifiedName"] == "team/train:1@sha256:abc");
    }
    CHECK(run["invocations"][0]["executionSuccessful"] == true);
}

TEST_CASE("validate SARIF: a waived check is a suppressed result at its outcome's level") {
    report::ImageValidation v;
    v.image = "team/train:1";
    CheckResult waived = check("TD130", "warning", "waived");
    waived.outcome = "fail";
    waived.waiver_reason = "known: fixed in 2.1";
    waived.waiver_source = "--waive";
    v.checks = {waived};
    json log = json::parse(report::validation_sarif({v}));
    const json& results = log["runs"][0]["results"];
    REQUIRE(results.size() == 1);
    CHECK(results[0]["level"] == "warning");
    CHECK(results[0]["properties"]["status"] == "waived");
    CHECK(results[0]["suppressions"][0]["kind"] == "external");
    CHECK(results[0]["suppressions"][0]["justification"] == "known: fixed in 2.1 (--waive)");
}

TEST_CASE("validate SARIF: an image that could not be validated makes the run unsuccessful") {
    report::ImageValidation v;
    v.image = "no/such:1";
    v.error = "no such image";
    json run = json::parse(report::validation_sarif({v}))["runs"][0];
    CHECK(run["results"].empty());
    CHECK(run["invocations"][0]["executionSuccessful"] == false);
    CHECK_THAT(run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
                   .get<std::string>(),
               ContainsSubstring("no such image"));
}

TEST_CASE("render SARIF: problems and warnings at file, line and column") {
    std::vector<Diagnostic> problems = {
        {"manifests/a b.json", {3, 7}, "$.matrix.cuda[1]", "CUDA variant \"12.6\" is wrong"}};
    std::vector<Diagnostic> warnings = {{"/abs/x.lock.json", {0, 0}, "$.images", "stale"}};
    json run = json::parse(report::render_sarif(problems, warnings))["runs"][0];
    REQUIRE(run["results"].size() == 2);
    const json& p = run["results"][0];
    CHECK(p["ruleId"] == "manifest-problem");
    CHECK(p["level"] == "error");
    CHECK(p["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] ==
          "manifests/a%20b.json");
    CHECK(p["locations"][0]["physicalLocation"]["region"]["startLine"] == 3);
    CHECK(p["locations"][0]["physicalLocation"]["region"]["startColumn"] == 7);
    CHECK(p["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "$.matrix.cuda[1]");
    const json& w = run["results"][1];
    CHECK(w["level"] == "warning");
    CHECK(w["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] ==
          "file:///abs/x.lock.json");
    CHECK_FALSE(w["locations"][0]["physicalLocation"].contains("region"));
}

TEST_CASE("SARIF text from an image or a file is inert: no control characters, even decoded") {
    report::ImageValidation v;
    v.image = "evil/\x1b[31mred:1";
    auto c = check("TD102", "error", "fail");
    c.message = "line one\nline two \x1b]8;;http://x\x07link\x1b]8;;\x07";
    v.checks = {c};
    std::string text = report::validation_sarif({v});
    CHECK_FALSE(has_control_characters(text));
    json log = json::parse(text);
    std::string message = log["runs"][0]["results"][0]["message"]["text"];
    CHECK_FALSE(has_control_characters(message));
    CHECK(message.find('\n') == std::string::npos);
    std::string name = log["runs"][0]["results"][0]["locations"][0]["logicalLocations"][0]["name"];
    CHECK_FALSE(has_control_characters(name));
}
