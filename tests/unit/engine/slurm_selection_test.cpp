// Which nodes, and which partition, a fleet command's srun step runs in: the pure part of
// engine::slurm_nodes over `sinfo --noheader --Node --format="%N %P %t"` (a node once per
// partition; '*' marks the default one). e2e_fleet_slurm runs it against a real Slurm.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "engine/slurm.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {
// main (default) holds node1 and node2; fleet all three; gpu only node3.
const std::string k_listing =
    "node1 main* idle\nnode1 fleet idle\nnode2 main* drain\nnode2 fleet drain\n"
    "node3 fleet mix\nnode3 gpu mix\n";

std::vector<std::string> names(const engine::SlurmSelection& s) {
    std::vector<std::string> out;
    for (const auto& n : s.nodes) out.push_back(n.name);
    return out;
}
}  // namespace

TEST_CASE("slurm selection: a partition gives its nodes once each, with their states", "[slurm]") {
    auto s = engine::select_slurm_nodes(k_listing, {}, "fleet", "");
    REQUIRE(s);
    CHECK(names(s.value()) == std::vector<std::string>{"node1", "node2", "node3"});
    CHECK(s->nodes[1].state == "drain");
    CHECK(s->partition == "fleet");
    auto none = engine::select_slurm_nodes(k_listing, {}, "nosuch", "");
    REQUIRE_FALSE(none);
    CHECK_THAT(none.error().message, ContainsSubstring("has no nodes"));
}

TEST_CASE("slurm selection: a hostlist runs in the default partition when it holds them all",
          "[slurm]") {
    auto s = engine::select_slurm_nodes(k_listing, {"node2", "node1"}, "", "node[1-2]");
    REQUIRE(s);
    CHECK(names(s.value()) == std::vector<std::string>{"node1", "node2"});  // sinfo's order
    CHECK(s->partition.empty());
}

TEST_CASE("slurm selection: else in the first partition that holds them all", "[slurm]") {
    auto all = engine::select_slurm_nodes(k_listing, {"node1", "node2", "node3"}, "", "node[1-3]");
    REQUIRE(all);
    CHECK(all->partition == "fleet");
    auto one = engine::select_slurm_nodes(k_listing, {"node3"}, "", "node3");
    REQUIRE(one);
    CHECK(one->partition == "fleet");
}

TEST_CASE("slurm selection: nodes in no one partition together are refused", "[slurm]") {
    const std::string split = "a p1* idle\nb p2 idle\n";
    auto s = engine::select_slurm_nodes(split, {"a", "b"}, "", "a,b");
    REQUIRE_FALSE(s);
    CHECK(s.error().kind == ErrorKind::Config);
    CHECK_THAT(s.error().message, ContainsSubstring("in no one partition together"));
}

TEST_CASE("slurm selection: a hostlist within a partition", "[slurm]") {
    auto s = engine::select_slurm_nodes(k_listing, {"node3"}, "gpu", "node3");
    REQUIRE(s);
    CHECK(names(s.value()) == std::vector<std::string>{"node3"});
    CHECK(s->partition == "gpu");
    auto outside = engine::select_slurm_nodes(k_listing, {"node1"}, "gpu", "node1");
    REQUIRE_FALSE(outside);
    CHECK_THAT(outside.error().message, ContainsSubstring("is not in partition \"gpu\""));
    auto unknown = engine::select_slurm_nodes(k_listing, {"nodeX"}, "", "nodeX");
    REQUIRE_FALSE(unknown);
    CHECK_THAT(unknown.error().message, ContainsSubstring("is not a node Slurm knows"));
}

TEST_CASE("slurm selection: lines that are not sinfo's three fields are skipped", "[slurm]") {
    auto s = engine::select_slurm_nodes("garbage\n\nnode1  main*   idle\n", {}, "main", "");
    REQUIRE(s);
    CHECK(names(s.value()) == std::vector<std::string>{"node1"});
    CHECK(s->nodes[0].state == "idle");
}
