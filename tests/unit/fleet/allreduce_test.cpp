// allreduce's pure parts: a rank's place from Slurm's environment, NCCL's transport from its
// real INFO lines (tests/data/fleet/nccl-info-lines.txt), the ranks' answers combined.
#include "core/fleet/allreduce.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <fstream>

#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;
using json = nlohmann::json;

namespace {

// The lines of one "## NAME" group of the fixture.
std::vector<std::string> nccl_group(const std::string& name) {
    std::ifstream in(test::source_path("tests/data/fleet/nccl-info-lines.txt"));
    std::vector<std::string> out;
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("## ", 0) == 0) {
            inside = line == "## " + name;
            continue;
        }
        if (inside && !line.empty()) out.push_back(line);
    }
    REQUIRE_FALSE(out.empty());
    return out;
}

std::map<std::string, std::string> task_env() {
    return {{"SLURM_PROCID", "2"},
            {"SLURM_NTASKS", "4"},
            {"SLURM_LOCALID", "0"},
            {"SLURMD_NODENAME", "node3"},
            {"SLURM_STEP_NODELIST", "node[1-4]"},
            {"SLURM_JOB_ID", "4711"},
            {"SLURM_STEP_ID", "0"}};
}

RankOutcome rank(int r, const std::string& node, std::vector<long long> wrong,
                 std::vector<double> time_us) {
    json sizes = json::array();
    const long long bytes[] = {4096, 1048576};
    for (std::size_t i = 0; i < wrong.size(); ++i)
        sizes.push_back({{"bytes", bytes[i]},
                         {"count", bytes[i] / 4},
                         {"time_us", time_us[i]},
                         {"wrong", wrong[i]}});
    return {r, node, "pass", "", json{{"backend", "gloo"}, {"sizes", sizes}}, {}};
}

}  // namespace

TEST_CASE("a rank's place comes from Slurm's environment, the port alike on every rank") {
    auto r = slurm_rank(task_env());
    REQUIRE(r);
    CHECK(r->rank == 2);
    CHECK(r->world == 4);
    CHECK(r->node == "node3");
    CHECK(r->nodelist == "node[1-4]");
    auto other = task_env();
    other["SLURM_PROCID"] = "0";
    other["SLURMD_NODENAME"] = "node1";
    CHECK(slurm_rank(other)->port == r->port);
    other["SLURM_JOB_ID"] = "4712";
    CHECK(slurm_rank(other)->port != r->port);
    CHECK(r->port >= 20000);
    CHECK(r->port < 30000);

    auto missing = task_env();
    missing.erase("SLURM_PROCID");
    CHECK_THAT(slurm_rank(missing).error().message, ContainsSubstring("SLURM_PROCID is not set"));
    auto bad = task_env();
    bad["SLURM_NTASKS"] = "2";
    CHECK_THAT(slurm_rank(bad).error().message, ContainsSubstring("not below SLURM_NTASKS"));
    bad = task_env();
    bad["SLURM_LOCALID"] = "x1";
    CHECK_THAT(slurm_rank(bad).error().message, ContainsSubstring("is not a number"));
}

TEST_CASE("scontrol show node: the NodeAddr") {
    CHECK(node_address("NodeName=node1 Arch=x86_64 CoresPerSocket=1\n   NodeAddr=127.0.0.1 "
                       "NodeHostName=node1 Version=22.05.8\n") == "127.0.0.1");
    CHECK(node_address("NodeName=node1\n").empty());
}

TEST_CASE("NCCL's transport from its real INFO lines") {
    CHECK(nccl_transports(nccl_group("ib-gdr")) == std::vector<std::string>{"NET/IB/GDRDMA"});
    CHECK(nccl_transports(nccl_group("ib")) == std::vector<std::string>{"NET/IB"});
    // "NET/IB : Using [RO]; OOB eth0" is printed without IB before the fallback: not IB.
    CHECK(nccl_transports(nccl_group("socket-fallback")) == std::vector<std::string>{"NET/Socket"});
    CHECK(nccl_transports(nccl_group("intra-node")) == std::vector<std::string>{"P2P", "SHM"});
    // "multicast support is available" says what the hardware could; "NVLS comm" that it is used.
    CHECK(nccl_transports(nccl_group("nvls")) == std::vector<std::string>{"NVLS"});
    CHECK(nccl_transports({"NCCL WARN Connect to 10.0.0.2 failed"}).empty());
}

TEST_CASE("allreduce: exact sums pass; time is the slowest rank's; busbw by nccl-tests' factor") {
    auto r = judge_allreduce(
        {rank(0, "node1", {0, 0}, {100, 1000}), rank(1, "node2", {0, 0}, {120, 2000})}, 2, nullptr,
        0.2);
    CHECK(r.verdict == "pass");
    REQUIRE(r.sizes.size() == 2);
    CHECK(r.sizes[1].time_us == 2000);
    CHECK(r.sizes[1].algbw_gbps == 1048576 / 1e9 / 2000e-6);
    CHECK(r.sizes[1].busbw_gbps == r.sizes[1].algbw_gbps);  // 2 * (2 - 1) / 2 = 1
    CHECK_THAT(r.bandwidth_judged, ContainsSubstring("not judged: no baseline"));
    auto three =
        judge_allreduce({rank(0, "a", {0}, {10}), rank(1, "b", {0}, {10}), rank(2, "c", {0}, {10})},
                        3, nullptr, 0.2);
    CHECK(three.sizes[0].busbw_gbps == three.sizes[0].algbw_gbps * 4 / 3);
}

TEST_CASE("allreduce: a wrong sum fails; a hung rank is named first with its node") {
    auto wrong = judge_allreduce(
        {rank(0, "node1", {0, 0}, {1, 1}), rank(1, "node2", {0, 3}, {1, 1})}, 2, nullptr, 0.2);
    CHECK(wrong.verdict == "fail");
    CHECK_THAT(wrong.findings.at(0), ContainsSubstring("wrong sums: 3 elements at 1 MiB"));

    RankOutcome hung{1,       "node2", "timeout", "the rank's container timed out after 40 s",
                     nullptr, {}};
    RankOutcome peer{0, "node1", "error", "rank 0: RuntimeError: Socket Timeout", nullptr, {}};
    auto r = judge_allreduce({peer, hung}, 3, nullptr, 0.2);
    CHECK(r.verdict == "fail");
    REQUIRE(r.findings.size() == 3);
    CHECK(r.findings[0] == "rank 1 on node2 hung: the rank's container timed out after 40 s");
    CHECK_THAT(r.findings[2], ContainsSubstring("rank 2: no report came back"));
    CHECK(r.sizes.empty());
}

TEST_CASE("allreduce: bandwidth only against a baseline; sockets where IB exists are a finding") {
    json baseline = {
        {"kind", "allreduce"},
        {"sizes",
         {{{"bytes", 4096}, {"busbw_gbps", 1e-6}}, {{"bytes", 1048576}, {"busbw_gbps", 1000.0}}}}};
    auto r = judge_allreduce(
        {rank(0, "n1", {0, 0}, {100, 1000}), rank(1, "n2", {0, 0}, {100, 1000})}, 2, baseline, 0.2);
    CHECK(r.verdict == "fail");
    CHECK_FALSE(r.sizes[0].slow);
    CHECK(r.sizes[1].slow);
    REQUIRE(r.findings.size() == 1);
    CHECK_THAT(r.findings[0],
               ContainsSubstring("under the baseline's 1000.000 GB/s by more than 20 %"));
    CHECK(r.bandwidth_judged == "against the baseline (2 of 2 sizes)");

    auto a = rank(0, "n1", {0}, {10}), b = rank(1, "n2", {0}, {10});
    a.data["nccl_log"] = nccl_group("socket-fallback");
    b.infiniband = {"rdma_cm", "uverbs0"};
    auto sockets = judge_allreduce({a, b}, 2, nullptr, 0.2);
    CHECK(sockets.verdict == "fail");
    CHECK_THAT(sockets.findings.at(0),
               ContainsSubstring("NCCL fell back to sockets although n2 has InfiniBand devices"));
}

TEST_CASE("allreduce as nccl-tests -J JSON") {
    auto r = judge_allreduce(
        {rank(0, "n1", {0, 0}, {100, 1000}), rank(1, "n2", {0, 0}, {100, 1000})}, 2, nullptr, 0.2);
    json j = nccl_tests_json(r, {"torchdock", "allreduce-rank"});
    REQUIRE(j["results"].size() == 2);
    CHECK(j["results"][1]["size"] == 1048576);
    CHECK(j["results"][1]["root"] == "    -1");
    CHECK(j["results"][1]["in_place"]["bus_bw"] == r.sizes[1].busbw_gbps);
    CHECK(j["results"][1]["in_place"]["nwrong"] == 0.0);
    CHECK(j["average_bus_bandwidth"]["okay"] == "true");
    CHECK(j["config"]["devices"].size() == 2);
}

TEST_CASE("allreduce: ranks' numbers of another type and ranks outside the world do not crash",
          "[regression]") {
    // Review of issue 23: `"time_us": null` or `"bytes": "4"` in one rank's report threw out
    // of judge_allreduce; a rank that claims to be rank 9 of 3 was added to the ranks.
    RankOutcome odd = rank(1, "b", {0}, {10});
    odd.data["sizes"][0]["time_us"] = nullptr;
    odd.data["sizes"][0]["wrong"] = "0";
    odd.data["sizes"].push_back({{"bytes", "4"}});
    odd.data["local_rank"] = "x";
    RankOutcome outside = rank(9, "z", {0}, {10});
    auto r = judge_allreduce({rank(0, "a", {0}, {10}), odd, rank(2, "c", {0}, {10}), outside}, 3,
                             json{{"sizes", json::array({{{"bytes", "4096"}}})}}, 0.2);
    REQUIRE(r.ranks.size() == 3);
    CHECK(r.ranks.back().rank == 2);
    REQUIRE(r.sizes.size() == 1);
    CHECK(r.sizes[0].bytes == 4096);
    CHECK(r.sizes[0].time_us == 10);
    // Round 3: a count that is not a count, or a size that is not a size, is no pass.
    CHECK(r.verdict == "fail");
    CHECK_THAT(r.findings.at(0), ContainsSubstring("rank 1 on b"));
    CHECK(nccl_tests_json(r, {"torchdock"})["results"].size() == 1);
}
