// What a node or a rank says is data, not authority (adversarial round 3): fleet attributes a
// report to the node srun ran its task on and recomputes the verdict from the checks;
// node-check refuses names that are not one node and says every waiver; a check cut short by
// the deadline is unknown, not drain; allreduce refuses counts that are not counts.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <fstream>
#include <sstream>

#include "core/fleet/allreduce.hpp"
#include "core/fleet/fleet.hpp"
#include "core/fleet/node_check.hpp"
#include "core/fleet/srun_output.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
using json = nlohmann::json;

namespace {

CheckResult check(const std::string& id, const std::string& status) {
    CheckResult c;
    c.id = id;
    c.name = "some.check";
    c.severity = "error";
    c.status = status;
    c.message = id + " said " + status;
    return c;
}

// A rank whose sizes are given as JSON (what its node printed).
RankOutcome rank_with(int r, const std::string& node, json sizes,
                      const std::string& status = "pass") {
    return {r,
            node,
            status,
            status == "pass" ? "" : "rank said so",
            json{{"backend", "gloo"}, {"world_size", 2}, {"sizes", std::move(sizes)}},
            {}};
}

json size(long long bytes, json wrong, double time_us = 50) {
    return {{"bytes", bytes}, {"count", bytes / 4}, {"time_us", time_us}, {"wrong", wrong}};
}

}  // namespace

TEST_CASE("node names: ALL in any case, host lists, options and blanks are not one node",
          "[regression]") {
    for (const char* bad : {"ALL", "all", "aLl", "gpu[01-64]", "gpu1,gpu2", "-h", "--all", ".x", "",
                            "node 1", "node1\n", "n1;x"}) {
        auto st = check_node_name(bad, "--node");
        REQUIRE_FALSE(st);
        CHECK(st.error().kind == ErrorKind::Usage);
        CHECK_THAT(st.error().message, StartsWith("--node "));
        CHECK_THAT(st.error().message, ContainsSubstring("letters, digits and ._-"));
    }
    CHECK_THAT(check_node_name("All", "SLURMD_NODENAME").error().message,
               ContainsSubstring("keyword ALL"));
    for (const char* good : {"node7", "gpu-01.rack3", "ALLx", "xall", "n_1", "a"})
        CHECK(check_node_name(good, "--node"));
    CHECK_FALSE(check_node_name(std::string(256, 'a'), "--node"));
}

TEST_CASE("scontrol -o show node: exactly one record with that NodeName") {
    std::string one = "NodeName=gpu7 Arch=x86_64 CoresPerSocket=1 State=IDLE\n";
    CHECK(single_node_record(one, "gpu7"));
    CHECK_FALSE(single_node_record(one, "gpu"));  // a nodeset named gpu holding gpu7
    CHECK_FALSE(single_node_record(one + "NodeName=gpu8 Arch=x86_64\n", "gpu7"));
    CHECK_FALSE(single_node_record("", "gpu7"));
    CHECK_FALSE(single_node_record("Node gpu7 not found\n", "gpu7"));
}

TEST_CASE("node-check: out of time is unknown, not drain; a failed check still drains",
          "[regression]") {
    NodeCheckFacts f;
    f.node = "n4";
    f.image.reference = "img";
    f.fingerprint = test::node_check_report("node1")["fingerprint"];
    f.deadline_s = 12;
    f.out_of_time = "the engine did not answer the inspection of img in time";
    auto v = judge_node(f);
    CHECK(v.state == "unknown");
    CHECK_THAT(nhc_line("n4", v),
               StartsWith("UNKNOWN: torchdock: n4: the checks did not finish within 12 s: the "
                          "engine did not answer the inspection"));

    NodeCheckFacts cut = f;  // probes cut by the deadline could not be judged
    cut.checks = {check("TD119", "pass"), check("TD123", "error")};
    v = judge_node(cut);
    CHECK(v.state == "unknown");
    REQUIRE(v.reasons.size() == 2);
    CHECK_THAT(v.reasons[1], StartsWith("TD123"));

    NodeCheckFacts failed = cut;  // evidence against the node is not lost to the clock
    failed.checks.push_back(check("TD130", "fail"));
    v = judge_node(failed);
    CHECK(v.state == "drain");
    CHECK_THAT(v.reasons.at(0), StartsWith("TD130"));
    CHECK_THAT(v.notes.back(), ContainsSubstring("did not finish within 12 s"));

    NodeCheckFacts late = f;
    late.out_of_time.clear();
    late.deadline_passed = true;
    CHECK(judge_node(late).state == "unknown");

    NodeCheckFacts dead = f;  // an engine that is not there at all still drains
    dead.out_of_time.clear();
    dead.engine_error = "no Docker engine: /run/docker.sock does not exist";
    CHECK(judge_node(dead).state == "drain");
}

TEST_CASE("node-check names every waiver applied, on the line and in the report") {
    NodeCheckFacts f;
    f.node = "node1";
    f.image.reference = "img";
    f.fingerprint = test::node_check_report("node1")["fingerprint"];
    CheckResult shm = check("TD130", "waived");
    shm.outcome = "fail";
    shm.waiver_source = "--waive";
    shm.waiver_reason = "NCCL runs over sockets here";
    CheckResult cuda = check("TD101", "waived");
    cuda.outcome = "warn";
    cuda.waiver_source = "settings";
    cuda.waiver_reason = "CPU nodes";
    f.checks = {check("TD119", "pass"), shm, cuda};
    auto v = judge_node(f);
    CHECK(v.state == "healthy");
    CHECK(nhc_line("node1", v) ==
          "OK: torchdock: node1: healthy (waived: TD130 by --waive, TD101 by settings)");
    auto doc = node_check_report(f, v);
    REQUIRE(doc["waivers"].size() == 2);
    CHECK(doc["waivers"][0] == json({{"id", "TD130"},
                                     {"outcome", "fail"},
                                     {"source", "--waive"},
                                     {"reason", "NCCL runs over sockets here"}}));
    CHECK(doc["checks"][1]["waiver_source"] == "--waive");

    f.checks.push_back(check("TD123", "fail"));
    CHECK_THAT(nhc_line("node1", judge_node(f)),
               ContainsSubstring("(waived: TD130 by --waive, TD101 by settings)"));

    // fleet reads them back and names them; the node is healthy only through them.
    f.checks.pop_back();
    FleetNode n = classify_task({"node1", node_check_report(f, v).dump(), "", false, 0, ""});
    judge_node_report(n);
    CHECK(n.verdict == "healthy");
    REQUIRE(n.waivers.size() == 2);
    CHECK(n.waivers[0] == "TD130 by --waive: NCCL runs over sockets here");
}

TEST_CASE("srun's verbose launch lines say which node ran which task") {
    std::string err =
        "srun: jobid 1: nodes(3):`node[1-3]', cpu counts: 1(x3)\n"
        "srun: launching StepId=1.0 on host node1, 1 tasks: 0\n"
        "srun: launching StepId=1.0 on host node2, 2 tasks: 1-2\n"
        "srun: launching StepId=1.0 on host gpu9, 3 tasks: 3,5-6\n"
        "srun: launching StepId=1.0 on host evil node, 1 tasks: 4\n"
        "srun: launch/slurm: _task_start: Node node3, 1 tasks started\n";
    auto tasks = srun_task_nodes(err);
    CHECK(tasks ==
          std::map<int, std::string>{
              {0, "node1"}, {1, "node2"}, {2, "node2"}, {3, "gpu9"}, {5, "gpu9"}, {6, "gpu9"}});
    // A task claimed by two launch lines belongs to neither.
    CHECK(srun_task_nodes("srun: launching StepId=1.0 on host a, 1 tasks: 0\n"
                          "srun: launching StepId=1.0 on host b, 1 tasks: 0\n")
              .empty());
}

TEST_CASE("fleet: a report is srun's node's; a name that is not is a finding there",
          "[regression]") {
    // Variant of round 3 row 27: node2's task reports under node3's name.
    json as_other = test::node_check_report("node2");
    as_other["node"] = "node3";
    FleetNode n = classify_task({"node2", as_other.dump(), "", false, 0, ""});
    CHECK(n.node == "node2");
    CHECK(n.claimed_node == "node3");
    judge_node_report(n);
    CHECK(n.verdict == "drain");
    CHECK_THAT(n.reasons.at(0),
               ContainsSubstring("names node node3, but srun ran this task on node2"));

    auto fleet = judge_fleet(
        "img",
        {classify_task({"node1", test::node_check_report("node1").dump(), "", false, 0, ""}), n,
         classify_task({"node3", test::node_check_report("node3").dump(), "", false, 0, ""})});
    CHECK(fleet.drained == 1);
    CHECK(fleet.nodes[1].node == "node2");
}

TEST_CASE("fleet: a node's verdict comes from its checks, its own word only makes it worse",
          "[regression]") {
    // Variant of round 3 row 29: failing checks under "verdict": "healthy".
    json liar = test::node_check_report("node3");
    liar["checks"][2]["status"] = "fail";
    liar["verdict"] = "healthy";
    liar["reasons"] = json::array();
    FleetNode n = classify_task({"node3", liar.dump(), "", false, 0, ""});
    judge_node_report(n);
    CHECK(n.verdict == "drain");
    CHECK_THAT(n.reasons.at(0), ContainsSubstring(liar["checks"][2]["id"].get<std::string>()));

    json odd = test::node_check_report("node1");
    odd["verdict"] = "HEALTHY";
    FleetNode shouting = classify_task({"node1", odd.dump(), "", false, 0, ""});
    judge_node_report(shouting);
    CHECK(shouting.verdict == "unknown");

    json empty = test::node_check_report("node1");
    empty["checks"] = json::array();
    FleetNode none = classify_task({"node1", empty.dump(), "", false, 0, ""});
    judge_node_report(none);
    CHECK(none.verdict == "unknown");
    CHECK_THAT(none.reasons.at(0), ContainsSubstring("no checks"));

    json drained = test::node_check_report("node1");
    drained["verdict"] = "drain";
    drained["reasons"] = {"the container engine does not answer: gone"};
    FleetNode worse = classify_task({"node1", drained.dump(), "", false, 0, ""});
    judge_node_report(worse);
    CHECK(worse.verdict == "drain");
    CHECK(worse.reasons.at(0) == "the container engine does not answer: gone");

    FleetNode fine =
        classify_task({"node1", test::node_check_report("node1").dump(), "", false, 0, ""});
    judge_node_report(fine);
    CHECK(fine.verdict == "healthy");
    CHECK(fine.reasons.empty());
}

TEST_CASE("fleet: a task whose output holds no readable report is an output failure on its node",
          "[regression]") {
    // Variant of round 3 row 30: noise around a report on the task srun ran on node2.
    std::string noisy =
        std::string(5000, 'z') + "\n" + test::node_check_report("node2").dump() + "\n";
    FleetNode n = classify_task({"node2", noisy, "", false, 0, ""});
    CHECK(n.node == "node2");
    CHECK(n.failure_kind == "output");
    // Two reports under one label: neither is trusted.
    FleetNode twice = classify_task(
        {"node1",
         test::node_check_report("node1").dump() + "\n" + test::node_check_report("node1").dump(),
         "", false, 0, ""});
    CHECK(twice.failure_kind == "output");
}

TEST_CASE("allreduce: a rank's own fail fails, whatever its counts say", "[regression]") {
    auto ok = json::array({size(8192, 0), size(65536, 0)});
    auto r =
        judge_allreduce({rank_with(0, "a", ok), rank_with(1, "b", ok, "fail")}, 2, nullptr, 0.2);
    CHECK(r.verdict == "fail");
    CHECK_THAT(r.findings.at(0), ContainsSubstring("rank 1 on b reported fail"));
    CHECK(r.sizes.size() == 2);  // still shown

    auto odd =
        judge_allreduce({rank_with(0, "a", ok), rank_with(1, "b", ok, "PASS")}, 2, nullptr, 0.2);
    CHECK(odd.verdict == "fail");
}

TEST_CASE("allreduce: counts must be non-negative integers; signed counts never cancel",
          "[regression]") {
    auto ok = json::array({size(8192, 0)});
    // +7 and -7 on two ranks: the negative one is refused, the positive one counted.
    auto cancel = judge_allreduce({rank_with(0, "a", json::array({size(8192, 7)})),
                                   rank_with(1, "b", json::array({size(8192, -7)}))},
                                  2, nullptr, 0.2);
    CHECK(cancel.verdict == "fail");
    CHECK(cancel.sizes.at(0).wrong == 7);
    bool named = false;
    for (const auto& f : cancel.findings)
        named = named || (f.find("rank 1 on b reported") == 0 && f.find("-7") != std::string::npos);
    CHECK(named);

    for (json bad : {json(2.5), json(0.0), json(-1), json(1e300), json("0"), json(nullptr),
                     json(9223372036854775807LL), json(json::array()), json(3000)}) {
        auto r = judge_allreduce(
            {rank_with(0, "a", ok), rank_with(1, "b", json::array({size(8192, bad)}))}, 2, nullptr,
            0.2);
        INFO(bad.dump());
        CHECK(r.verdict == "fail");
        CHECK(r.sizes.at(0).wrong == 0);
    }
    // A size of another type, or given twice, is refused too.
    auto twice = judge_allreduce(
        {rank_with(0, "a", ok), rank_with(1, "b", json::array({size(8192, 0), size(8192, 0)}))}, 2,
        nullptr, 0.2);
    CHECK(twice.verdict == "fail");
    auto bytes = json::array({size(8192, 0), {{"bytes", -4096}, {"wrong", 0}}});
    CHECK(judge_allreduce({rank_with(0, "a", ok), rank_with(1, "b", bytes)}, 2, nullptr, 0.2)
              .verdict == "fail");
}

TEST_CASE("allreduce: a rank without a size the others reduced fails", "[regression]") {
    auto both = json::array({size(8192, 0), size(65536, 0)});
    auto r =
        judge_allreduce({rank_with(0, "a", both), rank_with(1, "b", json::array({size(8192, 0)}))},
                        2, nullptr, 0.2);
    CHECK(r.verdict == "fail");
    CHECK_THAT(r.findings.at(0), ContainsSubstring("rank 1 on b reported no result at 64 KiB"));

    auto none = judge_allreduce({rank_with(0, "a", both), rank_with(1, "b", json::array())}, 2,
                                nullptr, 0.2);
    CHECK(none.verdict == "fail");
    CHECK_THAT(none.findings.at(0), ContainsSubstring("rank 1 on b reported no message size"));

    auto same =
        judge_allreduce({rank_with(0, "a", both), rank_with(1, "b", both)}, 2, nullptr, 0.2);
    CHECK(same.verdict == "pass");
}
