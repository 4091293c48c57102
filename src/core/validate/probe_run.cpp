// Probe results parsed from their output.
#include "core/validate/probe_run.hpp"

#include <cstdio>
#include <map>
#include <vector>

#include "core/json/json_text.hpp"
#include "util/strings.hpp"

namespace td {

using json = nlohmann::json;

std::string probe_program(const std::string& name) {
    return name == "torch" ? "torch_probe.py" : "probe-" + name;
}

std::string probe_source(const std::string& name) {
    if (name == "env" || name == "env_entrypoint" || name == "record" || name == "kernels")
        return "torchdock";
    if (name == "libs") return "torchdock+image-libraries";
    if (name == "torch") return "image-python";
    return "image-libraries";
}

std::string ProbeRun::problem() const {
    if (usable()) return {};
    std::string who = program.empty() ? "the probe" : program;
    switch (state) {
        case State::NotRun:
            return who + " was not run" + (reason.empty() ? "" : ": " + reason);
        case State::TimedOut:
            return who + " " + (reason.empty() ? "timed out" : reason);
        case State::Crashed:
            return who + " did not run to its end: " + reason;
        case State::Ran:
            break;
    }
    if (!data.is_object() || status != "error")
        return who + " printed no usable result (" + reason + ")";
    return who + " reported an error: " + reason;
}

ProbeRun parse_probe_output(const std::string& probe, const std::string& stdout_text,
                            int exit_code) {
    ProbeRun run;
    run.program = probe_program(probe);
    run.state = ProbeRun::State::Ran;
    run.exit_code = exit_code;
    auto lines = split(stdout_text, '\n');
    while (!lines.empty() && lines.back().find_first_not_of(" \r\t") == std::string::npos)
        lines.pop_back();
    if (lines.empty()) {
        run.status = "error";
        run.reason = "no output (exit code " + std::to_string(exit_code) + ")";
        return run;
    }
    try {
        std::string why;
        auto parsed = parse_json_bounded(lines.back(), why);
        // The parser's own words mean little to a person; the line itself is shown below.
        if (!parsed)
            throw std::invalid_argument(why.find("deeper") != std::string::npos
                                            ? why
                                            : "the last line is not a JSON object");
        json j = std::move(parsed.value());
        if (!j.is_object() || j.value("schema", 0) != 1 || j.value("probe", "") != probe)
            throw std::invalid_argument("not a schema-1 result of probe " + probe);
        run.status = j.value("status", "error");
        run.reason = j.value("reason", "");
        run.data = j.contains("data") ? j["data"] : json::object();
        static const std::map<std::string, int> codes = {
            {"pass", 0}, {"fail", 1}, {"waived", 2}, {"error", 3}};
        auto it = codes.find(run.status);
        if (it == codes.end() || it->second != exit_code) {
            run.reason = "status \"" + run.status + "\" disagrees with exit code " +
                         std::to_string(exit_code) +
                         (run.reason.empty() ? "" : " (" + run.reason + ")");
            run.status = "error";
        }
    } catch (const std::exception& e) {
        run.status = "error";
        run.reason = std::string(e.what()) + ": " + quote_value(lines.back(), 200);
        run.data = json();
    }
    return run;
}

std::string crash_summary(const json& crash) {
    auto field = [&](const char* key) -> std::string {
        if (!crash.is_object() || !crash.contains(key) || crash[key].is_null()) return {};
        return crash[key].is_string() ? crash[key].get<std::string>() : crash[key].dump();
    };
    std::string signal = field("signal"), stage = field("stage");
    std::string loading = field("loading"), code = field("exit_code");
    return (stage.empty() ? std::string("the torch probe") : stage) + " died of " +
           (signal.empty() ? "a signal" : signal) + (code.empty() ? "" : " (exit " + code + ")") +
           (loading.empty() ? "" : " while loading " + loading);
}

}  // namespace td
