#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include "engine/docker_api.hpp"

using namespace td::engine;

TEST_CASE("probe containers: the entrypoint is removed and the container confined",
          "[regression]") {
    // Adversarial report N1 (an ENTRYPOINT answered for the probes) and N2 (default
    // capabilities, no limits, unbounded logs).
    ContainerSpec spec;
    spec.image = "sha256:abc";
    spec.cmd = {"/opt/torchdock-probes/probe-env"};
    spec.entrypoint = std::vector<std::string>{};
    spec.env = {"LD_PRELOAD="};
    spec.confined = true;
    spec.cap_add = {"DAC_OVERRIDE"};
    spec.pids_limit = 4096;
    spec.memory_bytes = 1LL << 30;
    spec.log_max_size = "16m";
    spec.tmp_size = "1g";
    auto body = nlohmann::json::parse(container_create_body(spec));
    CHECK(body["Entrypoint"] == nlohmann::json::array({""}));
    CHECK(body["Env"] == nlohmann::json::array({"LD_PRELOAD="}));
    const auto& host = body["HostConfig"];
    CHECK(host["NetworkMode"] == "none");
    CHECK(host["CapDrop"] == nlohmann::json::array({"ALL"}));
    CHECK(host["CapAdd"] == nlohmann::json::array({"DAC_OVERRIDE"}));
    CHECK(host["SecurityOpt"] == nlohmann::json::array({"no-new-privileges"}));
    CHECK(host["PidsLimit"] == 4096);
    CHECK(host["Memory"] == (1LL << 30));
    CHECK(host["LogConfig"]["Config"]["max-size"] == "16m");
    CHECK(host["ReadonlyRootfs"] == true);
    CHECK(host["Tmpfs"]["/tmp"].get<std::string>().find("size=1g") != std::string::npos);
    // The image's VOLUMEs get the same bounded tmpfs, not a volume on the engine's disk.
    spec.tmpfs_over = {"/data", "/tmp"};
    auto with_volumes = nlohmann::json::parse(container_create_body(spec))["HostConfig"]["Tmpfs"];
    CHECK(with_volumes.size() == 2);
    CHECK(with_volumes["/data"].get<std::string>().find("size=1g") != std::string::npos);
    // Kept only where asked: a wrapper ENTRYPOINT's environment is read through it.
    spec.entrypoint.reset();
    CHECK_FALSE(nlohmann::json::parse(container_create_body(spec)).contains("Entrypoint"));
}
