// run_probes with probes started early (engine/early_probes): every probe of a second run
// starts at once with the spec it had last time (ProbeMemo); in a first run, libs and record
// start when a locate run of the torch probe says where torch would come from. An early run
// is kept only when the spec this run's plan and torch's answer give is exactly the same.
#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <mutex>

#include "engine/early_probes.hpp"
#include "engine/probe_exec.hpp"
#include "test_support.hpp"

using namespace td;
using namespace td::engine;

namespace {

struct Recorder {
    std::mutex m;
    std::vector<std::pair<std::string, std::vector<std::string>>> calls;
    std::string site_dir = "/app/.venv/lib/python3.11/site-packages";
    std::string located_dir = site_dir;  // what the locate run (no import) answers
    ProbeRun operator()(const ProbeSpec& p) {
        const bool locate = std::find(p.args.begin(), p.args.end(), "--locate") != p.args.end();
        {
            std::lock_guard<std::mutex> lock(m);
            calls.emplace_back(locate ? "locate" : p.name, p.args);
        }
        if (locate) return test::ran("torch", {{"site_dirs", {located_dir}}}, "waived");
        // torch's answer names the interpreter it was started with, the others their
        // arguments: a run from a guess is told from a real one.
        if (p.name == "torch")
            return test::ran("torch",
                             {{"site_dirs", {site_dir}}, {"started_with", p.interpreters.at(0)}});
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

Prober prober(Recorder& rec) { return {std::ref(rec), {}}; }

// A prober that also runs several at once (as one container would), recording each batch.
struct Batches {
    Recorder rec;
    std::mutex m;
    std::vector<std::vector<std::string>> batches;
    Prober prober() {
        return {std::ref(rec), [this](const std::vector<ProbeSpec>& specs) {
                    std::vector<std::string> names;
                    std::vector<ProbeRun> runs;
                    for (const auto& p : specs) {
                        names.push_back(p.name);
                        runs.push_back(rec(p));
                    }
                    std::lock_guard<std::mutex> lock(m);
                    batches.push_back(names);
                    return runs;
                }};
    }
};

std::vector<ProbeSpec> probes() {
    return {probe_spec("torch", "torch_probe.py", {}, true), probe_spec("libs", "probe-libs")};
}

RuntimePlan plan(const std::string& python = "/app/.venv/bin/python") {
    RuntimePlan p;
    p.candidates = {python};
    p.resolved = true;
    return p;
}

// The memo a first run leaves.
ProbeMemo first_run(const RuntimePlan& p) {
    Recorder rec;
    ProbeMemo memo;
    run_probes(probes(), p, test::real_kb(), prober(rec), nullptr, &memo);
    return memo;
}

}  // namespace

TEST_CASE("without early runs libs starts after a locate run, and the memo learns each spec") {
    Recorder rec;
    ProbeMemo memo;
    auto out = run_probes(probes(), plan(), test::real_kb(), prober(rec), nullptr, &memo);
    CHECK(rec.count("locate") == 1);
    CHECK(rec.count("torch") == 1);
    CHECK(rec.count("libs") == 1);  // the locate run's guess, confirmed by torch's answer
    REQUIRE(memo.count("libs") == 1);
    CHECK(memo["libs"].args == std::vector<std::string>{"--site-dirs=" + rec.site_dir});
    CHECK(memo["libs"].env == std::vector<std::string>{"LD_PRELOAD="});
    REQUIRE(memo.count("torch") == 1);
    CHECK(memo["torch"].interpreters == std::vector<std::string>{"/app/.venv/bin/python"});
    CHECK(out.at("libs").data["args"] == "--site-dirs=" + rec.site_dir + " ");
}

TEST_CASE("early runs that this run's evidence confirms are used: every probe runs once") {
    ProbeMemo memo = first_run(plan());
    Recorder again;
    std::map<std::string, ProbeRun> out;
    {
        EarlyProbes early(memo, prober(again));
        CHECK(early.started() == 2);  // torch and probe-libs, both at once
        out = run_probes(probes(), plan(), test::real_kb(), prober(again), &early, nullptr);
    }
    CHECK(again.count("torch") == 1);
    CHECK(again.count("libs") == 1);
    CHECK(out.at("torch").data["started_with"] == "/app/.venv/bin/python");
    CHECK(out.at("libs").data["args"] == "--site-dirs=" + again.site_dir + " ");
}

TEST_CASE("an early static probe whose arguments torch's answer contradicts runs again") {
    ProbeMemo memo = first_run(plan());
    memo["libs"].args = {"--site-dirs=/somewhere/else"};
    Recorder rec;
    std::map<std::string, ProbeRun> out;
    {
        EarlyProbes early(memo, prober(rec));
        out = run_probes(probes(), plan(), test::real_kb(), prober(rec), &early, nullptr);
    }
    CHECK(rec.count("libs") == 2);  // the guess, then the real arguments
    CHECK(rec.count("torch") == 1);
    CHECK(out.at("libs").data["args"] == "--site-dirs=" + rec.site_dir + " ");
}

TEST_CASE("an early torch run from another plan is not evidence: torch runs with this plan's") {
    // Last time the image's python was /usr/bin/python3; this run's probe-env says the venv's.
    ProbeMemo memo = first_run(plan("/usr/bin/python3"));
    Recorder rec;
    std::map<std::string, ProbeRun> out;
    ProbeMemo now;
    {
        EarlyProbes early(memo, prober(rec));
        out = run_probes(probes(), plan(), test::real_kb(), prober(rec), &early, &now);
    }
    CHECK(rec.count("torch") == 2);
    CHECK(out.at("torch").data["started_with"] == "/app/.venv/bin/python");
    CHECK(now["torch"].interpreters == std::vector<std::string>{"/app/.venv/bin/python"});
}

TEST_CASE("a locate run that torch's answer contradicts is not evidence: libs runs again") {
    Recorder rec;
    rec.located_dir = "/usr/lib/python3/dist-packages";  // the import went elsewhere
    auto out = run_probes(probes(), plan(), test::real_kb(), prober(rec), nullptr, nullptr);
    CHECK(rec.count("locate") == 1);
    CHECK(rec.count("libs") == 2);  // the guess, then the real arguments
    CHECK(out.at("libs").data["args"] == "--site-dirs=" + rec.site_dir + " ");
}

TEST_CASE("the locate run is the torch probe's own spec with --locate, only when needed") {
    Recorder rec;
    run_probes(probes(), plan(), test::real_kb(), prober(rec), nullptr, nullptr);
    for (const auto& [name, args] : rec.calls)
        if (name == "locate") CHECK(args == std::vector<std::string>{"--locate"});
    // nothing that needs only the site directories: no locate run
    Recorder alone;
    std::vector<ProbeSpec> specs = {probe_spec("torch", "torch_probe.py", {}, true),
                                    probe_spec("cuda", "probe-cuda")};
    run_probes(specs, plan(), test::real_kb(), prober(alone), nullptr, nullptr);
    CHECK(alone.count("locate") == 0);
    // the files-only tier imports nothing: no locate run
    Recorder files;
    RuntimePlan files_only = plan();
    files_only.files_only = true;
    run_probes(probes(), files_only, test::real_kb(), prober(files), nullptr, nullptr);
    CHECK(files.count("locate") == 0);
}

TEST_CASE("the probes that are not python's run together, early and after torch") {
    auto specs = probes();
    specs.push_back(probe_spec("cuda", "probe-cuda"));
    specs.push_back(probe_spec("record", "probe-record"));
    Batches first;
    ProbeMemo memo;
    run_probes(specs, plan(), test::real_kb(), first.prober(), nullptr, &memo);
    // torch alone (python); libs and record together once the locate run answered; cuda after
    // torch
    REQUIRE(first.batches.size() == 1);
    CHECK(first.batches[0] == std::vector<std::string>{"libs", "record"});
    CHECK(first.rec.count("torch") == 1);
    CHECK(first.rec.count("libs") == 1);
    CHECK(first.rec.count("record") == 1);
    CHECK(first.rec.count("cuda") == 1);

    Batches again;
    std::map<std::string, ProbeRun> out;
    {
        EarlyProbes early(memo, again.prober());
        CHECK(early.started() == 4);
        out = run_probes(specs, plan(), test::real_kb(), again.prober(), &early, nullptr);
    }
    // started early as one batch (the memo's order: by name), each taken: nothing ran twice,
    // and no locate run (the memo holds libs and record)
    REQUIRE(again.batches.size() == 1);
    CHECK(again.batches[0] == std::vector<std::string>{"cuda", "libs", "record"});
    CHECK(again.rec.count("locate") == 0);
    CHECK(again.rec.count("torch") == 1);
    CHECK(again.rec.count("libs") == 1);
    CHECK(again.rec.count("cuda") == 1);
    CHECK(out.at("cuda").data["args"].get<std::string>().empty());
}

TEST_CASE("a probe memo reads back as written; one in another shape is no memo") {
    ProbeMemo memo = first_run(plan());
    auto back = probe_memo_from_json(probe_memo_json(memo));
    REQUIRE(back);
    CHECK(*back == memo);
    auto j = probe_memo_json(memo);
    j["libs"]["args"] = "--site-dirs=/x";  // a string, not a list
    CHECK_FALSE(probe_memo_from_json(j));
    j = probe_memo_json(memo);
    j["libs"]["name"] = "torch";  // filed under another probe's name
    CHECK_FALSE(probe_memo_from_json(j));
    CHECK_FALSE(probe_memo_from_json(nlohmann::json::array()));
}
