// torchdock fleet's comparison, on node-check reports a real Slurm gathered
// (tests/data/fleet/README.md), and node-check's verdicts.
#include "core/fleet/fleet.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <fstream>
#include <sstream>

#include "core/fleet/node_check.hpp"
#include "core/fleet/srun_output.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
using json = nlohmann::json;

namespace {

std::string read(const std::string& rel) {
    std::ifstream in(test::source_path(rel));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

FleetNode reported(const std::string& node, json r) {
    return {node, std::move(r), "", "", "", "", {}, {}};
}

const FleetOutlier* outlier(const FleetReport& r, const std::string& node,
                            const std::string& path) {
    for (const auto& o : r.outliers)
        if (o.node == node && o.path == path) return &o;
    return nullptr;
}

}  // namespace

TEST_CASE("fleet names each planted difference against the majority, image ID first") {
    auto r = judge_fleet("torchdock/debian-cpu:debian12",
                         {reported("node1", test::node_check_report("node1")),
                          reported("node2", test::node_check_report("node2")),
                          reported("node3", test::node_check_report("node3"))});
    CHECK_FALSE(r.uniform());
    CHECK(r.healthy == 3);
    CHECK(r.groups.size() == 3);
    REQUIRE(r.outliers.size() == 4);
    CHECK(r.outliers.front().path == "image.id");
    CHECK(r.outliers.front().node == "node2");
    const auto* memlock = outlier(r, "node1", "memlock_bytes");
    REQUIRE(memlock);
    CHECK(outlier_line(*memlock) == "node1: locked memory (ulimit -l) 64 KiB vs 8 MiB on 2 nodes");
    const auto* shm = outlier(r, "node2", "image.shm_bytes");
    REQUIRE(shm);
    CHECK(outlier_line(*shm) == "node2: /dev/shm in containers 256 MiB vs 64 MiB on 2 nodes");
    const auto* nccl = outlier(r, "node3", "env.NCCL_SOCKET_IFNAME");
    REQUIRE(nccl);
    CHECK(outlier_line(*nccl) == "node3: NCCL_SOCKET_IFNAME eth9 vs (unset) on 2 nodes");
    CHECK(r.splits.empty());
}

TEST_CASE("fleet: identical nodes are one group and uniform; cosmetic differences do not count") {
    json a = test::node_check_report("node3"), b = test::node_check_report("node3");
    b["node"] = "node4";
    b["seconds"] = 9.5;
    b["fingerprint"]["subject"] = "other-host";
    auto r = judge_fleet("img", {reported("node3", a), reported("node4", b)});
    CHECK(r.uniform());
    CHECK(r.groups.size() == 1);
    CHECK(r.outliers.empty());
}

TEST_CASE("fleet: two nodes that differ have no majority: a split, not an outlier") {
    auto r = judge_fleet("img", {reported("node1", test::node_check_report("node1")),
                                 reported("node3", test::node_check_report("node3"))});
    CHECK(r.outliers.empty());
    REQUIRE_FALSE(r.splits.empty());
    std::string all;
    for (const auto& s : r.splits) all += split_line(s) + "\n";
    CHECK_THAT(all,
               ContainsSubstring("locked memory (ulimit -l): 64 KiB on node1; 8 MiB on node3"));
    CHECK_THAT(all, ContainsSubstring("NCCL_SOCKET_IFNAME: (unset) on node1; eth9 on node3"));
    CHECK_FALSE(r.uniform());
}

TEST_CASE("fleet: a finding on one node is one outlier, not one per field") {
    json odd = test::node_check_report("node3");
    odd["fingerprint"]["findings"].push_back({{"id", "DR124"},
                                              {"severity", "error"},
                                              {"title", "locked memory is limited"},
                                              {"detail", "64 KiB"},
                                              {"fix", "unlimited"}});
    auto r =
        judge_fleet("img", {reported("a", test::node_check_report("node3")),
                            reported("b", test::node_check_report("node3")), reported("c", odd)});
    REQUIRE(r.outliers.size() == 1);
    CHECK(r.outliers[0].path == "findings[DR124]");
    CHECK(r.outliers[0].label == "finding DR124");
    CHECK(r.outliers[0].weight == 65);
}

TEST_CASE("fleet: a node without a report is counted and the fleet is not uniform") {
    auto r = judge_fleet(
        "img", {reported("a", test::node_check_report("node3")),
                reported("b", test::node_check_report("node3")),
                {"c", nullptr, "launcher", "srun ran no task on this node", "", "", {}, {}}});
    CHECK(r.failed == 1);
    CHECK(r.outliers.empty());
    CHECK_FALSE(r.uniform());
}

TEST_CASE("fleet values read as people read them") {
    CHECK(fleet_value("image.shm_bytes", "268435456") == "256 MiB");
    CHECK(fleet_value("memlock_bytes", "unlimited") == "unlimited");
    CHECK(fleet_value("memlock_bytes", "1536") == "1.5 KiB");
    CHECK(fleet_value("env.NCCL_IB_HCA", "(absent)") == "(unset)");
    CHECK(fleet_value("image.id",
                      "sha256:08d65a2cfb485756415eff6094c553f929fdb1264982983171d23cfeda9f0ff1") ==
          "sha256:08d65a2cfb48");
    CHECK(fleet_label("checks[TD130].status") == "check TD130");
}

TEST_CASE("srun --label output splits by task; srun's node lines name the node") {
    auto tasks = split_labelled_output("0: {\n 1: {\n0:   \"a\": 1\n0: }\n 1: }\nsrun: note\n");
    REQUIRE(tasks.size() == 2);
    CHECK(tasks[0] == "{\n  \"a\": 1\n}\n");
    CHECK(tasks[1] == "{\n}\n");
    auto errors = srun_node_errors(read("tests/data/fleet/srun-node-down.err") +
                                   "srun: error: node2: task 1: Exited with exit code 3\n");
    REQUIRE(errors.count("node3"));
    CHECK_THAT(errors["node3"], ContainsSubstring("Communication connection failure"));
    CHECK_THAT(errors["node2"], ContainsSubstring("Exited with exit code 3"));
    CHECK(
        srun_launch_errors("srun: error: Unable to allocate resources: Requested nodes are busy\n")
            .size() == 1);
}

TEST_CASE("a task's outcome is classified: report, image, launcher, timeout, output") {
    std::string text = read("tests/data/fleet/node-check-node1.json");
    CHECK(classify_task({"node1", text, "", false, 0, ""}).failure_kind.empty());
    json missing = test::node_check_report("node1");
    missing["image"]["missing"] = true;
    CHECK(classify_task({"node1", missing.dump(), "", false, 0, ""}).failure_kind == "image");
    auto down = classify_task(
        {"node3", "", "srun: error: Task launch ... failed on node node3: x", false, 0, ""});
    CHECK(down.failure_kind == "launcher");
    CHECK_THAT(down.failure, ContainsSubstring("failed on node node3"));
    CHECK(classify_task({"node3", "", "", true, 30, ""}).failure_kind == "timeout");
    CHECK(classify_task({"node3", "Traceback (most recent call last):\n", "", false, 0, ""})
              .failure_kind == "output");
}

TEST_CASE(
    "node-check: healthy, drain on a failed check or an error finding, unknown without the image") {
    NodeCheckFacts f;
    f.node = "node7";
    f.image.reference = "img";
    f.fingerprint = test::node_check_report("node1")["fingerprint"];
    CHECK(judge_node(f).state == "healthy");
    CHECK(nhc_line("node7", judge_node(f)) == "OK: torchdock: node7: healthy");

    NodeCheckFacts warned = f;
    warned.checks.push_back({"TD130",
                             "shm.size",
                             "warning",
                             "warn",
                             "64 MiB",
                             ">= 1024 MiB",
                             "/dev/shm is 64 MiB",
                             "",
                             "",
                             "",
                             "",
                             {}});
    auto v = judge_node(warned);
    CHECK(v.state == "healthy");
    REQUIRE(v.notes.size() == 1);

    NodeCheckFacts failed = warned;
    failed.checks.push_back({"TD123",
                             "torch.distributed",
                             "error",
                             "fail",
                             "1048577",
                             "1048576",
                             "gloo all-reduce over 2 processes gives a wrong sum",
                             "",
                             "",
                             "",
                             "",
                             {}});
    failed.fingerprint["findings"].push_back({{"id", "DR124"},
                                              {"severity", "error"},
                                              {"title", "locked memory is limited"},
                                              {"detail", "ulimit -l is 64 KiB"},
                                              {"fix", "unlimited"}});
    v = judge_node(failed);
    CHECK(v.state == "drain");
    REQUIRE(v.reasons.size() == 2);
    CHECK_THAT(v.reasons[0], StartsWith("DR124"));
    CHECK_THAT(nhc_line("node7", v),
               StartsWith("ERROR: torchdock: node7: DR124 locked memory is limited"));
    CHECK_THAT(nhc_line("node7", v), ContainsSubstring("(+1 more)"));
    CHECK(drain_reason(v).size() <= 200);

    NodeCheckFacts missing = f;
    missing.image_missing = true;
    v = judge_node(missing);
    CHECK(v.state == "unknown");
    CHECK_THAT(nhc_line("node7", v), StartsWith("UNKNOWN: torchdock: node7: image img is not"));

    NodeCheckFacts dead = f;
    dead.engine_error = "cannot connect to /run/docker.sock";
    CHECK(judge_node(dead).state == "drain");
    NodeCheckFacts slow = f;
    slow.deadline_passed = true;
    slow.deadline_s = 50;
    CHECK_THAT(judge_node(slow).reasons.at(0), ContainsSubstring("within 50 s"));
    CHECK(judge_node(slow).state == "unknown");  // out of time is no evidence against the node
}

TEST_CASE("node-check's line and drain reason stay one printable line whatever a node says") {
    NodeVerdict v;
    v.state = "drain";
    v.reasons = {std::string("bad\nline\x1b[31m") + std::string(500, 'x')};
    std::string line = nhc_line("n\x01", v), reason = drain_reason(v);
    CHECK(line.find('\n') == std::string::npos);
    CHECK(line.find('\x1b') == std::string::npos);
    CHECK(reason.size() <= 200);
    CHECK(reason.find('\n') == std::string::npos);
}

TEST_CASE("node-check's report is what fleet reads back") {
    NodeCheckFacts f;
    f.node = "node7";
    f.image = {"img", "sha256:abc", {}, "20.10.24", 67108864, "full"};
    f.fingerprint = test::node_check_report("node1")["fingerprint"];
    auto doc = node_check_report(f, judge_node(f));
    auto fp = fleet_fingerprint(doc);
    CHECK(fp["image"]["id"] == "sha256:abc");
    CHECK(fp["image"]["shm_bytes"] == 67108864);
    CHECK(fp["memlock_bytes"] == test::node_check_report("node1")["fingerprint"]["memlock_bytes"]);
    CHECK(classify_task({"node7", doc.dump(), "", false, 0, ""}).report["node"] == "node7");
}

TEST_CASE("a node's report with fields of another type is that node's output failure, no crash",
          "[regression]") {
    // Review of issue 23: json::value() throws on a wrong type, which ended the whole fleet
    // run as an internal error. A node prints what it likes.
    for (const char* key : {"verdict", "node"}) {
        json bad = test::node_check_report("node2");
        bad[key] = 1;
        auto n = classify_task({"", bad.dump(), "", false, 0, ""});
        CHECK(n.failure_kind == "output");
        CHECK_FALSE(n.report.is_object());
    }
    json bad_image = test::node_check_report("node2");
    bad_image["image"] = {{"missing", "yes"}};
    auto n = classify_task({"", bad_image.dump(), "", false, 0, ""});
    CHECK(n.failure_kind == "output");
    CHECK(n.node == "node2");  // named, so the fleet reports it on its node
}
