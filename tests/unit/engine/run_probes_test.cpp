// run_probes' second wave started early with the arguments of the last run (args_memo): a
// guessed run is kept only when the arguments torch's answer gives are the same.
#include <catch2/catch_test_macros.hpp>
#include <mutex>

#include "engine/probe_exec.hpp"
#include "test_support.hpp"

using namespace td;
using namespace td::engine;

namespace {

struct Recorder {
    std::mutex m;
    std::vector<std::pair<std::string, std::vector<std::string>>> calls;
    std::string site_dir = "/app/.venv/lib/python3.11/site-packages";
    ProbeRun operator()(const ProbeSpec& p) {
        {
            std::lock_guard<std::mutex> lock(m);
            calls.emplace_back(p.name, p.args);
        }
        if (p.name == "torch") return test::ran("torch", {{"site_dirs", {site_dir}}}, "pass");
        // The answer names the arguments it ran with, to tell a guessed run from a real one.
        std::string args;
        for (const auto& a : p.args) args += a + " ";
        return test::ran(p.name, {{"args", args}}, "pass");
    }
    int count(const std::string& name) {
        int n = 0;
        for (const auto& [probe, args] : calls) n += probe == name;
        return n;
    }
};

std::vector<ProbeSpec> probes() {
    return {probe_spec("torch", "torch_probe.py", {}, true), probe_spec("libs", "probe-libs")};
}

RuntimePlan plan() {
    RuntimePlan p;
    p.candidates = {"/app/.venv/bin/python"};
    p.resolved = true;
    return p;
}

}  // namespace

TEST_CASE("without a memo the static probes wait for torch and the memo learns their arguments") {
    Recorder rec;
    ProbeArgsMemo memo;
    auto out = run_probes(probes(), plan(), test::real_kb(), std::ref(rec), &memo);
    CHECK(rec.count("libs") == 1);
    REQUIRE(memo.count("libs") == 1);
    CHECK(memo["libs"] == std::vector<std::string>{"--site-dirs=" + rec.site_dir});
    CHECK(out.at("libs").data["args"] == "--site-dirs=" + rec.site_dir + " ");
}

TEST_CASE("a memo that torch's answer confirms is used: each static probe runs once") {
    Recorder rec;
    ProbeArgsMemo memo;
    run_probes(probes(), plan(), test::real_kb(), std::ref(rec), &memo);
    Recorder again;
    auto out = run_probes(probes(), plan(), test::real_kb(), std::ref(again), &memo);
    CHECK(again.count("libs") == 1);
    CHECK(out.at("libs").data["args"] == "--site-dirs=" + rec.site_dir + " ");
}

TEST_CASE("a memo that torch's answer contradicts is not evidence: the probe runs again") {
    Recorder rec;
    ProbeArgsMemo memo = {{"libs", {"--site-dirs=/somewhere/else"}}};
    auto out = run_probes(probes(), plan(), test::real_kb(), std::ref(rec), &memo);
    CHECK(rec.count("libs") == 2);  // the guess, then the real arguments
    CHECK(out.at("libs").data["args"] == "--site-dirs=" + rec.site_dir + " ");
    CHECK(memo["libs"] == std::vector<std::string>{"--site-dirs=" + rec.site_dir});
}
