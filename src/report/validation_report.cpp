#include "report/validation_report.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/json/json_text.hpp"
#include "core/reference/reference.hpp"
#include "report/markup.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"

namespace td::report {
namespace {

int count(const ImageValidation& v, const char* status) {
    int n = 0;
    for (const auto& c : v.checks) n += c.status == status;
    return n;
}

}  // namespace

// A check that could not be judged (error) counts as a failure: it is never a pass.
int ImageValidation::failed() const {
    return count(*this, "fail") + count(*this, "error") + (error.empty() ? 0 : 1);
}
int ImageValidation::errored() const { return count(*this, "error"); }
int ImageValidation::passed() const { return count(*this, "pass"); }
int ImageValidation::skipped() const { return count(*this, "skip"); }
int ImageValidation::warned() const { return count(*this, "warn"); }
int ImageValidation::waived() const { return count(*this, "waived"); }

namespace {

// Whose code produced the evidence a check rests on (core probe_source of each probe in its
// catalog entry), without repeats.
std::vector<std::string> evidence_sources(const std::string& id) {
    std::vector<std::string> out;
    for (const auto& probe : check_info(id).evidence)
        if (auto s = probe_source(probe); std::find(out.begin(), out.end(), s) == out.end())
            out.push_back(s);
    return out;
}

// "waived (--waive): reason; outcome fail"
std::string waiver_text(const CheckResult& c) {
    return "waived (" + c.waiver_source + "): " + c.waiver_reason + "; outcome " + c.outcome;
}

std::string counts_line(const ImageValidation& v) {
    return std::to_string(v.passed()) + " passed, " + std::to_string(v.failed()) + " failed, " +
           std::to_string(v.warned()) + " warned, " + std::to_string(v.skipped()) + " skipped, " +
           std::to_string(v.waived()) + " waived";
}

}  // namespace

std::string validation_table(const ImageValidation& v) {
    std::string out =
        terminal_text(v.image) + (v.image_id.empty() ? "" : "  " + terminal_text(v.image_id)) +
        (v.expectations_source.empty() ? "" : "  (expectations: " + v.expectations_source + ")") +
        "\n";
    if (v.runner != "engine")
        out += "  ran in the " + terminal_text(v.runner) +
               " tier: " + terminal_text(v.runner_detail) + "\n";
    if (!v.error.empty()) return out + "  ERROR: " + terminal_text(v.error) + "\n";
    if (v.tier != "full")
        out += "  " + terminal_text(v.platform) + " " + terminal_text(v.tier) + ": " +
               terminal_text(v.tier_reason) + "\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : v.checks) {
        std::string status = c.status == "pass"     ? "pass"
                             : c.status == "fail"   ? "FAIL"
                             : c.status == "error"  ? "ERROR"
                             : c.status == "warn"   ? "warn"
                             : c.status == "waived" ? "WAIVED"
                                                    : "skip";
        rows.push_back({c.id, c.name, status, clip(c.observed, 40), clip(c.expected, 24),
                        clip(c.message, 90)});
    }
    out += format_table({"ID", "CHECK", "RESULT", "OBSERVED", "EXPECTED", "DETAIL"}, rows);
    for (const auto& c : v.checks)
        if ((c.status == "fail" || c.status == "error" || c.status == "warn") && !c.fix.empty())
            out += "  " + c.id + " fix: " + terminal_text(c.fix) + "\n";
    for (const auto& c : v.checks)
        if (c.status == "waived") out += "  " + c.id + " " + terminal_text(waiver_text(c)) + "\n";
    for (const auto& n : v.waiver_notes) out += "  warning: " + terminal_text(n) + "\n";
    return out + "  " + counts_line(v) + "\n";
}

std::string validation_summary(const std::vector<ImageValidation>& all) {
    std::vector<std::vector<std::string>> rows;
    int failed_images = 0;
    for (const auto& v : all) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.1f s", v.seconds);
        bool bad = v.failed() > 0 || (v.passed() + v.warned() == 0);
        failed_images += bad;
        rows.push_back({v.image, std::to_string(v.passed()), std::to_string(v.failed()),
                        std::to_string(v.warned()), std::to_string(v.skipped()),
                        std::to_string(v.waived()), secs,
                        !v.error.empty() ? "ERROR"
                        : bad            ? "FAIL"
                                         : "ok"});
    }
    return format_table({"IMAGE", "PASS", "FAIL", "WARN", "SKIP", "WAIVED", "TIME", "RESULT"},
                        rows) +
           std::to_string(all.size() - failed_images) + " of " + std::to_string(all.size()) +
           " images passed\n";
}

std::string validation_json(const std::vector<ImageValidation>& all) {
    nlohmann::json images = nlohmann::json::array();
    for (const auto& v : all) {
        nlohmann::json checks = nlohmann::json::array();
        for (const auto& c : v.checks) {
            checks.push_back({{"id", c.id},
                              {"name", c.name},
                              {"severity", c.severity},
                              {"status", c.status},
                              {"observed", c.observed},
                              {"expected", c.expected},
                              {"message", c.message},
                              {"fix", c.fix},
                              {"evidence_from", evidence_sources(c.id)},
                              {"reference", reference_command(c.id)},
                              {"docs", reference_anchor(c.id)}});
            if (c.status == "waived") {
                checks.back()["outcome"] = c.outcome;
                checks.back()["waiver"] = {{"reason", c.waiver_reason},
                                           {"source", c.waiver_source}};
            }
        }
        // The evidence: how each probe ended, and what the torch probe found about where
        // PyTorch lives and what it loads.
        nlohmann::json probes = nlohmann::json::object();
        for (const auto& [name, run] : v.probes) {
            nlohmann::json p = {{"program", run.program},
                                {"source", probe_source(name)},
                                {"status", run.usable() ? run.status : "no evidence"},
                                {"reason", run.usable() ? run.reason : run.problem()},
                                {"seconds", run.seconds},
                                {"cached", run.cached}};
            if (name == "torch" && run.state == ProbeRun::State::Ran && run.data.is_object())
                for (const char* key :
                     {"python", "python_executable", "interpreter", "interpreters_tried",
                      "other_interpreters", "torch_file", "site_dirs", "loaded_libraries", "crash",
                      "torchvision", "torchaudio"})
                    if (run.data.contains(key)) p[key] = run.data[key];
            probes[name] = p;
        }
        images.push_back({{"image", v.image},
                          {"image_id", v.image_id},
                          {"probes", probes},
                          {"expectations_source", v.expectations_source},
                          {"platform", v.platform},
                          {"platform_claimed", v.platform_claimed},
                          {"tier", v.tier},
                          {"tier_reason", v.tier_reason},
                          {"runner", {{"tier", v.runner}, {"detail", v.runner_detail}}},
                          {"files_only_reason", v.tier == "files-only" ? v.tier_reason : ""},
                          {"error", v.error},
                          {"seconds", v.seconds},
                          {"passed", v.passed()},
                          {"failed", v.failed()},
                          {"warned", v.warned()},
                          {"skipped", v.skipped()},
                          {"waived", v.waived()},
                          {"waiver_notes", v.waiver_notes},
                          {"checks", checks}});
    }
    return json_text(nlohmann::json{{"schema", 1}, {"images", images}});
}

std::string validation_junit(const std::vector<ImageValidation>& all) {
    int tests = 0, failures = 0, skipped = 0, errors = 0;
    std::string suites;
    for (const auto& v : all) {
        int image_error = v.error.empty() ? 0 : 1;
        int t = static_cast<int>(v.checks.size()) + image_error;
        int f = v.failed() - v.errored() - image_error;
        int e = v.errored() + image_error;
        tests += t;
        failures += f;
        skipped += v.skipped() + v.waived();
        errors += e;
        char time[32];
        std::snprintf(time, sizeof time, "%.3f", v.seconds);
        suites += "  <testsuite name=\"" + xml_escape(v.image) + "\" tests=\"" + std::to_string(t) +
                  "\" failures=\"" + std::to_string(f) + "\" errors=\"" + std::to_string(e) +
                  "\" skipped=\"" + std::to_string(v.skipped() + v.waived()) + "\" time=\"" + time +
                  "\">\n";
        if (!v.image_id.empty())
            suites += "    <properties><property name=\"image_id\" value=\"" +
                      xml_escape(v.image_id) + "\"/></properties>\n";
        if (!v.error.empty())
            suites += "    <testcase classname=\"" + xml_escape(v.image) +
                      "\" name=\"validate\"><error message=\"" + xml_escape(v.error) +
                      "\"/></testcase>\n";
        for (const auto& c : v.checks) {
            suites += "    <testcase classname=\"" + xml_escape(v.image) + "\" name=\"" + c.id +
                      " " + c.name + "\">";
            if (c.status == "fail")
                suites += "<failure message=\"" + xml_escape(c.message) +
                          "\">observed: " + xml_escape(c.observed) +
                          "\nexpected: " + xml_escape(c.expected) + "\nfix: " + xml_escape(c.fix) +
                          "\nsee: " + reference_command(c.id) + "</failure>";
            else if (c.status == "error")
                suites += "<error message=\"" + xml_escape(c.message) +
                          "\">fix: " + xml_escape(c.fix) + "</error>";
            else if (c.status == "skip")
                suites += "<skipped message=\"" + xml_escape(c.message) + "\"/>";
            else if (c.status == "waived")  // skipped with the waiver: never a pass
                suites += "<skipped message=\"" + xml_escape(waiver_text(c)) + "\">" +
                          xml_escape(c.message) + "</skipped>";
            else if (c.status == "warn")
                suites += "<system-out>warning: " + xml_escape(c.message) + "</system-out>";
            suites += "</testcase>\n";
        }
        suites += "  </testsuite>\n";
    }
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"torchdock validate\" "
           "tests=\"" +
           std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
           std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) + "\">\n" + suites +
           "</testsuites>\n";
}

std::string validation_markdown(const std::vector<ImageValidation>& all) {
    std::string out =
        "## torchdock validate\n\n| image | pass | fail | warn | skip | waived |\n"
        "|---|---|---|---|---|---|\n";
    for (const auto& v : all)
        out += "| " + md_escape(v.image) + " | " + std::to_string(v.passed()) + " | " +
               std::to_string(v.failed()) + " | " + std::to_string(v.warned()) + " | " +
               std::to_string(v.skipped()) + " | " + std::to_string(v.waived()) + " |\n";
    // A reference, not a link: the hostile-report suite requires Markdown without links.
    out +=
        "\nWhat a check is, and how to waive it: `torchdock checks ID`, or docs/checks.md "
        "(anchor: the ID in lower case).\n";
    for (const auto& v : all) {
        out += "\n### " + md_escape(v.image) + "\n\n";
        if (!v.image_id.empty()) out += "Image ID: " + md_escape(v.image_id) + "\n\n";
        if (v.tier != "full")
            out += md_escape(v.platform) + ", " + md_escape(v.tier) + ": " +
                   md_escape(v.tier_reason) + "\n\n";
        if (!v.error.empty()) {
            out += "**error:** " + md_escape(v.error) + "\n";
            continue;
        }
        out +=
            "| check | result | observed | expected | detail | evidence from |\n"
            "|---|---|---|---|---|---|\n";
        for (const auto& c : v.checks)
            out += "| " + c.id + " " + c.name + " | " +
                   (c.status == "fail"     ? "**FAIL**"
                    : c.status == "error"  ? "**ERROR**"
                    : c.status == "waived" ? "**WAIVED** (" + c.outcome + ")"
                                           : c.status) +
                   " | " + md_escape(clip(c.observed, 60)) + " | " + md_escape(c.expected) + " | " +
                   md_escape(c.message) +
                   (c.status == "waived" ? " (" + md_escape(waiver_text(c)) + ")" : "") +
                   (c.fix.empty() ? "" : " (fix: " + md_escape(c.fix) + ")") + " | " +
                   join(evidence_sources(c.id), ", ") + " |\n";
    }
    return out;
}

}  // namespace td::report
