// Which engine, and how: DOCKER_HOST, TLS, ssh, contexts (core/build/engine_endpoint).
#include "core/build/engine_endpoint.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

EngineSettings with_env(std::map<std::string, std::string> env) {
    EngineSettings s;
    s.env = std::move(env);
    s.docker_config_dir = "/home/u/.docker";
    return s;
}

}  // namespace

TEST_CASE("engine endpoint: the default socket, and DOCKER_HOST's forms") {
    auto def = resolve_engine_endpoint(with_env({}));
    REQUIRE(def);
    CHECK(def->kind == EngineEndpoint::Kind::Unix);
    CHECK(def->socket == "/var/run/docker.sock");
    CHECK(!def->remote());

    auto tls = resolve_engine_endpoint(with_env({{"DOCKER_HOST", "tcp://10.0.0.5:2376"},
                                                 {"DOCKER_TLS_VERIFY", "1"},
                                                 {"DOCKER_CERT_PATH", "/certs"}}));
    REQUIRE(tls);
    CHECK(tls->kind == EngineEndpoint::Kind::Tcp);
    CHECK(tls->tls);
    CHECK(tls->verify);
    CHECK(tls->ca_file == "/certs/ca.pem");
    CHECK(tls->cert_file == "/certs/cert.pem");
    CHECK(tls->describe() == "tcp://10.0.0.5:2376 (TLS)");
    // Without DOCKER_CERT_PATH, Docker's default directory.
    auto home = resolve_engine_endpoint(
        with_env({{"DOCKER_HOST", "tcp://h:2376"}, {"DOCKER_TLS_VERIFY", "1"}}));
    CHECK(home->key_file == "/home/u/.docker/key.pem");

    auto plain = resolve_engine_endpoint(with_env({{"DOCKER_HOST", "tcp://docker:2375"}}));
    REQUIRE(!plain);
    CHECK_THAT(plain.error().message, ContainsSubstring("TORCHDOCK_ENGINE_PLAIN_TCP=1"));
    auto asked = resolve_engine_endpoint(
        with_env({{"DOCKER_HOST", "tcp://docker:2375"}, {"TORCHDOCK_ENGINE_PLAIN_TCP", "1"}}));
    REQUIRE(asked);
    CHECK(!asked->tls);

    auto ssh = resolve_engine_endpoint(with_env({{"DOCKER_HOST", "ssh://ops@gpu-07:2222"}}));
    REQUIRE(ssh);
    CHECK(ssh->kind == EngineEndpoint::Kind::Ssh);
    CHECK(ssh->user == "ops");
    CHECK(ssh->host == "gpu-07");
    CHECK(ssh->port == 2222);

    for (const char* bad : {"tcp://h", "ssh://-oProxyCommand=x", "ssh://u@h:x",
                            "npipe:////./pipe/docker", "unix://relative", "tcp://a b:1"})
        CHECK(!resolve_engine_endpoint(with_env({{"DOCKER_HOST", bad}})));
}

TEST_CASE("engine endpoint: contexts, in the Docker CLI's order") {
    EngineSettings s = with_env({});
    s.config_json = R"({"currentContext":"gpu"})";
    s.context_meta["gpu"] =
        R"({"Name":"gpu","Endpoints":{"docker":{"Host":"tcp://gpu-01:2376","SkipTLSVerify":false}}})";
    s.context_tls["gpu"] = true;
    s.context_meta["jump"] =
        R"({"Name":"jump","Endpoints":{"docker":{"Host":"ssh://ops@gpu-02"}}})";
    auto current = resolve_engine_endpoint(s);
    REQUIRE(current);
    CHECK(current->context == "gpu");
    CHECK(current->tls);
    CHECK(current->ca_file ==
          "/home/u/.docker/contexts/tls/" + context_key("gpu") + "/docker/ca.pem");
    CHECK_THAT(current->describe(), ContainsSubstring("context gpu"));

    s.env["DOCKER_CONTEXT"] = "jump";
    CHECK(resolve_engine_endpoint(s)->kind == EngineEndpoint::Kind::Ssh);
    // DOCKER_HOST wins over any context, as in the Docker CLI.
    s.env["DOCKER_HOST"] = "unix:///run/user/1000/docker.sock";
    CHECK(resolve_engine_endpoint(s)->socket == "/run/user/1000/docker.sock");
    s.env.erase("DOCKER_HOST");
    s.env["DOCKER_CONTEXT"] = "default";
    CHECK(resolve_engine_endpoint(s)->socket == "/var/run/docker.sock");
    s.env["DOCKER_CONTEXT"] = "missing";
    CHECK_THAT(resolve_engine_endpoint(s).error().message, ContainsSubstring("does not exist"));
    CHECK(context_key("default").size() == 64);
}
