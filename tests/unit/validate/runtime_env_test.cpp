#include "core/validate/runtime_env.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace td;
using Kind = EntrypointVerdict::Kind;

namespace {

// probe-env's answer as a ProbeRun (probes/env/README.md).
ProbeRun env_reading(const std::string& data) {
    return parse_probe_output(
        "env", R"({"probe":"env","schema":1,"status":"pass","reason":"","data":)" + data + "}\n",
        0);
}

const char* k_twopy =
    R"({"nonce":"n1","env":{"PATH":"/opt/venv2/bin:/usr/bin","CONDA_PREFIX":"/app/.venv"},)"
    R"("python":{"python":{"path":"/opt/venv2/bin/python","realpath":"/usr/bin/python3.11"},)"
    R"("python3":{"path":"/opt/venv2/bin/python3","realpath":"/usr/bin/python3.11"}},)"
    R"("interpreters":[{"path":"/opt/venv2/bin/python","realpath":"/usr/bin/python3.11","via":"PATH"},)"
    R"({"path":"/app/.venv/bin/python","realpath":"/usr/bin/python3.11","via":"CONDA_PREFIX"},)"
    R"({"path":"/opt/conda/bin/python","realpath":"/opt/conda/bin/python3.12","via":"scan"}]})";

}  // namespace

TEST_CASE("an ENTRYPOINT runs its arguments when it is a known runner or a script using \"$@\"") {
    CHECK(classify_entrypoint({}, "").kind == Kind::None);
    CHECK(classify_entrypoint({""}, "").kind == Kind::None);
    CHECK(classify_entrypoint({"/usr/local/bin/entrypoint.sh"},
                              "#!/bin/sh\n. /opt/conda/bin/activate\nexec \"$@\"\n")
              .kind == Kind::Wrapper);
    CHECK(classify_entrypoint({"/usr/bin/tini", "--"},
                              "\x7f"
                              "ELF")
              .kind == Kind::Wrapper);
    CHECK(classify_entrypoint({"/opt/conda/bin/conda", "run", "-n", "ml"}, "").kind ==
          Kind::Wrapper);
    CHECK(classify_entrypoint({"/bin/sh", "-c", "source /env && exec \"$@\"", "--"}, "").kind ==
          Kind::Wrapper);
    CHECK(classify_entrypoint({"bash", "/start.sh"}, "#!/bin/bash\nexec \"${@}\"\n").kind ==
          Kind::Wrapper);
    // An app that ignores its arguments, a script that never uses them.
    auto app = classify_entrypoint({"python", "/opt/serve.py"},
                                   "\x7f"
                                   "ELF");
    CHECK(app.kind == Kind::Program);
    CHECK(app.command == "python /opt/serve.py");
    CHECK(classify_entrypoint({"/run.sh"}, "#!/bin/sh\nexec gunicorn app:app\n").kind ==
          Kind::Program);
}

TEST_CASE("the interpreter judged is the one `python` resolves to on the image's PATH") {
    ProbeRun direct = env_reading(k_twopy);
    auto plan = plan_runtime({"PATH=/opt/venv2/bin:/usr/bin", "CONDA_PREFIX=/app/.venv"}, {},
                             &direct, nullptr, "n1", std::nullopt);
    CHECK(plan.resolved);
    CHECK(plan.candidates ==
          std::vector<std::string>{"/opt/venv2/bin/python", "/opt/venv2/bin/python3"});
    CHECK(plan.why == "`python` on the image's PATH");
    // /app/.venv's python is the same interpreter binary but another environment: listed.
    CHECK(plan.others ==
          std::vector<std::string>{"/app/.venv/bin/python", "/opt/conda/bin/python"});
    REQUIRE(plan.stale.size() == 1);
    CHECK(plan.stale[0].find("CONDA_PREFIX=/app/.venv") != std::string::npos);
    CHECK(plan.env.empty());  // the image's own environment
    // --python overrides, and nothing is then stale.
    auto forced = plan_runtime({}, {}, &direct, nullptr, "n1", std::string("/x/python"));
    CHECK(forced.candidates == std::vector<std::string>{"/x/python"});
    CHECK(forced.why == "--python");
    CHECK(forced.stale.empty());
}

TEST_CASE("a wrapper ENTRYPOINT's environment is used only when it answered with the nonce") {
    ProbeRun direct = env_reading(
        R"({"nonce":"n1","env":{"PATH":"/usr/bin","CONDA_PREFIX":""},"python":{"python":null,)"
        R"("python3":{"path":"/usr/bin/python3","realpath":"/usr/bin/python3.11"}},"interpreters":[]})");
    ProbeRun wrapped = env_reading(
        R"({"nonce":"n1","env":{"PATH":"/opt/conda/bin:/usr/bin","CONDA_PREFIX":"/opt/conda","HOSTNAME":"x","SHLVL":"1"},)"
        R"("python":{"python":{"path":"/opt/conda/bin/python","realpath":"/usr/bin/python3.11"},"python3":null},"interpreters":[]})");
    auto ep = classify_entrypoint({"/entrypoint.sh"}, "#!/bin/sh\nexec \"$@\"\n");
    auto plan = plan_runtime({"PATH=/usr/bin", "CONDA_PREFIX=", "LANG=C"}, ep, &direct, &wrapped,
                             "n1", std::nullopt);
    CHECK(plan.candidates == std::vector<std::string>{"/opt/conda/bin/python"});
    CHECK(plan.why.find("/entrypoint.sh") != std::string::npos);
    CHECK(plan.env_source == "its ENTRYPOINT /entrypoint.sh");
    // The wrapper's variables, not the per-process ones; LANG it removed is emptied.
    CHECK(std::find(plan.env.begin(), plan.env.end(), "PATH=/opt/conda/bin:/usr/bin") !=
          plan.env.end());
    CHECK(std::find(plan.env.begin(), plan.env.end(), "LANG=") != plan.env.end());
    for (const auto& kv : plan.env) CHECK(kv.rfind("HOSTNAME=", 0) != 0);
    CHECK(plan.stale.empty());
    // Another nonce: the entrypoint printed something of its own; the image's config is used.
    auto other = plan_runtime({"PATH=/usr/bin"}, ep, &direct, &wrapped, "n2", std::nullopt);
    CHECK(other.candidates == std::vector<std::string>{"/usr/bin/python3"});
    CHECK(other.why == "`python3` on the image's PATH (there is no `python`)");
    CHECK(other.env.empty());
    REQUIRE(!other.notes.empty());
    CHECK(other.notes[0].find("nonce") != std::string::npos);
    // A nonce of another type is no match, and no exception.
    ProbeRun odd = env_reading(R"({"nonce":1,"env":{},"python":{}})");
    auto plan_odd = plan_runtime({"PATH=/usr/bin"}, ep, &direct, &odd, "n1", std::nullopt);
    CHECK(plan_odd.env.empty());
}

TEST_CASE("without readings the candidates come from the PATH, python before python3") {
    auto plan = plan_runtime({"PATH=/opt/venv/bin::rel:/usr/bin", "LD_PRELOAD=/x/libnccl.so.2"}, {},
                             nullptr, nullptr, "", std::nullopt);
    CHECK(!plan.resolved);
    CHECK(plan.candidates == std::vector<std::string>{"/opt/venv/bin/python",
                                                      "/opt/venv/bin/python3", "/usr/bin/python",
                                                      "/usr/bin/python3"});
    CHECK(plan.ld_preload == "/x/libnccl.so.2");
    CHECK(path_interpreters({}).front() == "/usr/local/sbin/python");
    CHECK(env_lookup({"A=1", "A=2"}, "A") == "2");
    CHECK(!env_lookup({"AB=1"}, "A"));
}
