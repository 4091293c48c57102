// What the process did beats what a model predicts (issue 34): the objects torch's import
// mapped decide TD110 and the fingerprint's library table; the model speaks for the rest.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/validate/checks.hpp"
#include "core/validate/library_observation.hpp"
#include "core/validate/python_abi.hpp"
#include "core/validate/runtime_env.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;
using json = nlohmann::json;

namespace {

using test::check_of;
using test::ran;

const std::string k_venv = "/opt/venv/lib/python3.11/site-packages";
const std::string k_sys = "/usr/local/lib/python3.11/dist-packages";

// torch 2.8.0 in a --system-site-packages venv, its CUDA wheels in the system site: the model
// (RPATH $ORIGIN/../../nvidia/...) misses them, torch's sys.path preloading finds them.
json libs_twice() {
    return {{"libraries", json::array({{{"soname", "libnccl.so.2"},
                                        {"path", k_venv + "/nvidia/nccl/lib/libnccl.so.2"},
                                        {"found_via", "RUNPATH"},
                                        {"needed_by", k_venv + "/torch/lib/libtorch_cuda.so"}}})},
            {"unresolved",
             json::array({{{"soname", "libcudart.so.12"},
                           {"needed_by", k_venv + "/torch/lib/libtorch_cuda.so"},
                           {"needed_by_realpath", k_venv + "/torch/lib/libtorch_cuda.so"}},
                          {{"soname", "libcublas.so.12"},
                           {"needed_by", k_venv + "/torch/lib/libtorch_cuda.so"},
                           {"needed_by_realpath", k_venv + "/torch/lib/libtorch_cuda.so"}}})}};
}

json torch_imported(const json& mapped) {
    return {{"torch", "2.8.0+cu128"},
            {"mapped_objects", mapped},
            {"distributions",
             {{"torch",
               {{"version", "2.8.0"},
                {"location", k_venv},
                {"requires", json::array({"nvidia-cuda-runtime-cu12==12.8.90",
                                          "nvidia-cublas-cu12==12.8.4.1"})}}},
              {"nvidia-cuda-runtime-cu12", {{"version", "12.8.90"}, {"location", k_sys}}}}}};
}

}  // namespace

TEST_CASE("observe_libraries: a soname of an object the process mapped was found by it") {
    json mapped = json::array({k_sys + "/nvidia/cuda_runtime/lib/libcudart.so.12",
                               k_venv + "/torch/lib/libtorch_cuda.so",
                               k_venv + "/nvidia/nccl/lib/libnccl.so.2"});
    auto seen = observe_libraries(libs_twice(), torch_imported(mapped));
    CHECK(seen.observed);
    CHECK(seen.unresolved.empty());
    REQUIRE(seen.found_by_process.size() == 2);
    CHECK(seen.found_by_process[0].mapped == k_sys + "/nvidia/cuda_runtime/lib/libcudart.so.12");
    // Mapped under no name that carries the soname: still found (the needer loaded).
    CHECK(seen.found_by_process[1].mapped.empty());
    CHECK_THAT(describe(seen.found_by_process[1]), ContainsSubstring("was found by the process"));
    CHECK(seen.disagreements.empty());
}

TEST_CASE("observe_libraries: no import, or a needer the process did not load: the model stands") {
    auto no_import = observe_libraries(libs_twice(), json{{"import_error", "x"}});
    CHECK_FALSE(no_import.observed);
    CHECK(no_import.unresolved.size() == 2);
    // The second torch's libtorch_cuda.so (not the one imported) is not mapped.
    auto other = observe_libraries(
        libs_twice(), torch_imported(json::array({k_sys + "/torch/lib/libtorch_cuda.so"})));
    CHECK(other.observed);
    CHECK(other.unresolved.size() == 2);
    CHECK(other.found_by_process.empty());
}

TEST_CASE("observe_libraries: the model's copy and the mapped copy differ: both kept") {
    json libs = {{"libraries",
                  json::array({{{"soname", "libnvJitLink.so.12"},
                                {"path", "/usr/local/cuda-12.1/lib64/libnvJitLink.so.12"},
                                {"realpath", "/usr/local/cuda-12.1/lib64/libnvJitLink.so.12.1.105"},
                                {"found_via", "LD_LIBRARY_PATH"}},
                               {{"soname", "libcudart.so.12"},
                                {"path", "/usr/local/cuda/lib64/libcudart.so.12"},
                                {"realpath", "/usr/local/cuda-12.8/lib64/libcudart.so.12.8.90"},
                                {"found_via", "ld.so.cache"}}})},
                 {"unresolved", json::array()}};
    json mapped = json::array({"/usr/local/cuda-12.8/lib64/libcudart.so.12.8.90",
                               k_venv + "/nvidia/nvjitlink/lib/libnvJitLink.so.12"});
    auto seen = observe_libraries(libs, torch_imported(mapped));
    REQUIRE(seen.disagreements.size() == 1);  // cudart: the same file through its link
    CHECK(seen.disagreements[0].soname == "libnvJitLink.so.12");
    CHECK(seen.disagreements[0].mapped_path == k_venv + "/nvidia/nvjitlink/lib/libnvJitLink.so.12");
    CHECK_THAT(describe(seen.disagreements[0]), ContainsSubstring("12.1.105"));
}

TEST_CASE("TD110: what the process mapped passes it, the model's miss named beside") {
    ValidationInput in;
    json mapped = json::array({k_sys + "/nvidia/cuda_runtime/lib/libcudart.so.12",
                               k_venv + "/torch/lib/libtorch_cuda.so"});
    in.probes["torch"] = ran("torch", torch_imported(mapped));
    in.probes["libs"] = ran("libs", libs_twice(), "fail");
    auto r = evaluate(in, test::real_kb());
    CHECK(check_of(r, "TD110").status == "pass");
    CHECK_THAT(check_of(r, "TD110").message, ContainsSubstring("the running process mapped"));
    CHECK_THAT(check_of(r, "TD110").message, ContainsSubstring("libcudart.so.12"));
}

TEST_CASE("TD110: without an import the model decides, and an installed wheel is not the fix") {
    ValidationInput in;
    json torch = torch_imported(json::array());
    torch.erase("torch");
    torch["import_error"] = "ImportError: libcudart.so.12: cannot open shared object file";
    in.probes["torch"] = ran("torch", torch, "fail");
    in.probes["libs"] = ran("libs", libs_twice(), "fail");
    auto r = evaluate(in, test::real_kb());
    const auto& td110 = check_of(r, "TD110");
    CHECK(td110.status == "fail");
    CHECK_THAT(td110.message, ContainsSubstring("libcudart.so.12"));
    CHECK_THAT(td110.fix, ContainsSubstring("nvidia-cuda-runtime-cu12 12.8.90 is installed"));
    CHECK_THAT(td110.fix, !ContainsSubstring("pip install 'nvidia-cuda-runtime"));
}

TEST_CASE(
    "TD110: without an import, sonames that wheels on sys.path provide are unknown, not missing") {
    // The Python ABI case: torch cannot import, so no process shows what loads; the model
    // misses the nvidia wheels torch would load itself from the other site directory.
    ValidationInput in;
    json torch = torch_imported(json::array());
    torch.erase("torch");
    torch["import_error"] =
        "ImportError: torch/_C.cpython-311-x86_64-linux-gnu.so: undefined symbol";
    in.probes["torch"] = ran("torch", torch, "fail");
    json libs = libs_twice();
    libs["roots"] = json::array({{{"path", k_sys + "/nvidia/cuda_runtime/lib/libcudart.so.12"},
                                  {"kind", "pip-nvidia"},
                                  {"soname", "libcudart.so.12"}},
                                 {{"path", k_sys + "/nvidia/cublas/lib/libcublas.so.12"},
                                  {"kind", "pip-nvidia"},
                                  {"soname", "libcublas.so.12"}}});
    in.probes["libs"] = ran("libs", libs, "fail");
    auto td110 = check_of(evaluate(in, test::real_kb()), "TD110");
    CHECK(td110.status == "skip");
    CHECK_THAT(td110.message, ContainsSubstring("unknown"));
    CHECK_THAT(td110.message, ContainsSubstring("nvidia wheels on sys.path provide"));
    CHECK_THAT(td110.message, ContainsSubstring("no process mapped torch's libraries"));
    // One of them in no wheel: that one fails, the other named beside.
    libs["roots"].erase(1);
    in.probes["libs"] = ran("libs", libs, "fail");
    td110 = check_of(evaluate(in, test::real_kb()), "TD110");
    CHECK(td110.status == "fail");
    CHECK_THAT(td110.observed, ContainsSubstring("libcublas.so.12"));
    CHECK_THAT(td110.observed, !ContainsSubstring("libcudart.so.12"));
    CHECK_THAT(td110.message,
               ContainsSubstring("1 more the model does not resolve are in nvidia wheels"));
}

TEST_CASE(
    "classify_entrypoint: an environment manager's run is a wrapper, its other commands not") {
    using K = EntrypointVerdict::Kind;
    CHECK(classify_entrypoint({"uv", "run", "--frozen"}, "").kind == K::Wrapper);
    CHECK(
        classify_entrypoint({"/usr/local/bin/poetry", "run"}, "#!/opt/poetry/bin/python\n").kind ==
        K::Wrapper);
    CHECK(classify_entrypoint({"uv", "--directory", "/app", "run"}, "").kind == K::Wrapper);
    CHECK(classify_entrypoint({"pixi", "run"}, "").kind == K::Wrapper);
    CHECK(classify_entrypoint({"uv", "pip", "list"}, "").kind == K::Program);
    CHECK(classify_entrypoint({"poetry"}, "").kind == K::Program);
    CHECK(classify_entrypoint({"uvicorn", "run"}, "").kind == K::Program);
}

TEST_CASE("torch built for another Python is named, with the interpreter that runs") {
    json t = {
        {"torch_for_other_python", json::array({{{"dir", "/app/.venv/lib/python3.11/site-packages"},
                                                 {"python", "3.11"},
                                                 {"evidence", "lib/python3.11"},
                                                 {"interpreter", "/app/.venv/bin/python"},
                                                 {"interpreter_python", "3.13.5"}}})},
        {"interpreters_tried", json::array({"/app/.venv/bin/python (3.13.5, no torch)"})}};
    CHECK_THAT(torch_python_mismatch(t),
               ContainsSubstring("is built for Python 3.11 (lib/python3.11), but the image runs "
                                 "Python 3.13.5 (/app/.venv/bin/python)"));
    CHECK_THAT(torch_python_mismatch_fix(t), ContainsSubstring("install torch for Python 3.13"));
    CHECK(torch_python_mismatch(json::object()).empty());
    ValidationInput in;
    in.probes["torch"] = ran("torch", t, "waived");
    auto r = evaluate(in, test::real_kb());
    CHECK(check_of(r, "TD119").status == "fail");
    CHECK_THAT(check_of(r, "TD119").message, ContainsSubstring("built for Python 3.11"));
    // No torch found says nothing about CUDA: not "a CPU image".
    CHECK(check_of(r, "TD101").status == "skip");
}

TEST_CASE("TD134: no temporary directory fails, an unwritable HOME warns; TD123 says why not run") {
    ValidationInput in;
    json t = torch_imported(json::array());
    t["writable"] = {{"uid", 65534},
                     {"temp_dir", nullptr},
                     {"temp_error", "FileNotFoundError: [Errno 2] No usable temporary directory"},
                     {"home", "/nonexistent"},
                     {"home_writable", false}};
    in.probes["torch"] = ran("torch", t, "fail");
    auto r = evaluate(in, test::real_kb());
    CHECK(check_of(r, "TD134").status == "fail");
    CHECK_THAT(check_of(r, "TD134").message, ContainsSubstring("uid 65534"));
    CHECK_THAT(check_of(r, "TD123").message, ContainsSubstring("TD134"));
    t["writable"]["temp_error"] = nullptr;
    t["writable"]["temp_dir"] = "/tmp";
    in.probes["torch"] = ran("torch", t);
    CHECK(check_of(evaluate(in, test::real_kb()), "TD134").status == "warn");
}

TEST_CASE("TD133: an audit that read no libtorch_cuda.so finds no 'no GPU code'") {
    ValidationInput in;
    in.probes["kernels"] = ran("kernels", {{"objects", json::array()}});
    in.probes["record"] =
        ran("record",
            {{"site_dirs", json::array({k_venv})},
             {"distributions",
              json::array(
                  {{{"name", "torch"},
                    {"version", "2.9.1"},
                    {"files", 1},
                    {"problems", json::array()},
                    {"texts",
                     {{"torch/version.py", "__version__ = '2.9.1+cu128'\ncuda = '12.8'\n"}}}}})}});
    auto r = evaluate(in, test::real_kb());
    CHECK_THAT(check_of(r, "TD133").message, !ContainsSubstring("no GPU code"));
}

TEST_CASE("TD110 names a library the process mapped from elsewhere than the model resolves") {
    ValidationInput in;
    json libs = {{"libraries",
                  json::array({{{"soname", "libnvJitLink.so.12"},
                                {"path", "/usr/local/cuda-12.1/lib64/libnvJitLink.so.12"},
                                {"realpath", "/usr/local/cuda-12.1/lib64/libnvJitLink.so.12.1.105"},
                                {"found_via", "LD_LIBRARY_PATH"}}})},
                 {"unresolved", json::array()}};
    in.probes["libs"] = ran("libs", libs);
    in.probes["torch"] =
        ran("torch",
            torch_imported(json::array({k_venv + "/nvidia/nvjitlink/lib/libnvJitLink.so.12"})));
    const auto td110 =
        check_of(evaluate(in, test::real_kb()), "TD110");  // a copy: the vector is a temporary
    CHECK(td110.status == "pass");
    CHECK_THAT(td110.message, ContainsSubstring("the loader model finds /usr/local/cuda-12.1"));
    CHECK_THAT(td110.message, ContainsSubstring("the process mapped " + k_venv));
}

TEST_CASE("a torch that fails to import is blamed on another Python only when it is that torch") {
    json t = {
        {"import_error", "ImportError: libcudart.so.12: cannot open shared object file"},
        {"site_dirs", json::array({"/app/.venv/lib/python3.11/site-packages"})},
        {"torch_for_other_python", json::array({{{"dir", "/app/.venv/lib/python3.10/site-packages"},
                                                 {"python", "3.10"},
                                                 {"interpreter_python", "3.11.2"}}})}};
    CHECK(torch_python_mismatch(t).empty());
    t["site_dirs"] = json::array({"/app/.venv/lib/python3.10/site-packages"});
    CHECK_THAT(torch_python_mismatch(t), ContainsSubstring("built for Python 3.10"));
}

TEST_CASE("TD119 without torch names the other interpreter whose torch imports") {
    ValidationInput in;
    in.probes["torch"] = ran(
        "torch",
        {{"torch", nullptr},  // as the probe says it: no torch in the python judged
         {"interpreters_tried", json::array({"/usr/bin/python3 (3.11.2, no torch)"})},
         {"other_interpreters",
          json::array(
              {{{"path", "/app/.venv/bin/python"}, {"torch", "2.9.1+cu128"}, {"imports", true}}})}},
        "waived");
    SECTION("the fix is to run that python, and TD101 does not call the image a CPU image") {
        auto checks = evaluate(in, test::real_kb());
        const auto& td119 = check_of(checks, "TD119");
        CHECK(td119.status == "fail");
        CHECK_THAT(td119.message,
                   ContainsSubstring("torch 2.9.1+cu128 imports in /app/.venv/bin/python"));
        CHECK_THAT(td119.fix, ContainsSubstring("put /app/.venv/bin first on the image's PATH"));
        CHECK_THAT(td119.fix, ContainsSubstring("--python /app/.venv/bin/python"));
        CHECK(check_of(checks, "TD101").status == "skip");
    }
    SECTION("a CMD that starts python through uv run is named") {
        in.cmd = {"uv", "run", "--frozen", "python", "main.py"};
        CHECK_THAT(check_of(evaluate(in, test::real_kb()), "TD119").message,
                   ContainsSubstring("the image's CMD `uv run --frozen python main.py` starts "
                                     "python through a runner (uv runs its arguments)"));
    }
}

TEST_CASE("an other interpreter not asked to import (the judged torch imports) is said so") {
    ValidationInput in;
    in.probes["env"] =
        ran("env",
            {{"nonce", "n"},
             {"env", {{"PATH", "/opt/venv/bin:/usr/bin"}}},
             {"python",
              {{"python", {{"path", "/opt/venv/bin/python"}, {"realpath", "/usr/bin/python3.11"}}},
               {"python3", nullptr}}},
             {"interpreters", json::array()}},
            "pass");
    in.runtime = plan_runtime({"PATH=/opt/venv/bin:/usr/bin"}, {}, &in.probes["env"], nullptr, "n",
                              std::nullopt);
    in.probes["torch"] = ran(
        "torch", {{"torch", "2.9.1+cu128"},
                  {"other_interpreters", json::array({{{"path", "/usr/bin/python3"},
                                                       {"torch", "2.9.1+cu128"},
                                                       {"imports", nullptr},
                                                       {"version_from", "torch/version.py"}}})}});
    auto checks = evaluate(in, test::real_kb());
    CHECK_THAT(check_of(checks, "TD127").message,
               ContainsSubstring("/usr/bin/python3 (torch 2.9.1+cu128, not imported: the judged "
                                 "python's torch imports)"));
    // not evidence that torch imports there
    CHECK(torch_in_other_interpreter(in.probes["torch"].data).path.empty());
}

TEST_CASE("TD128 says which way a pinned wheel moved: a newer NCCL, an older triton") {
    ValidationInput in;
    in.probes["torch"] =
        ran("torch",
            {{"torch", "2.9.1+cu128"},
             {"distributions",
              {{"torch",
                {{"version", "2.9.1"},
                 {"requires", json::array({"nvidia-nccl-cu12==2.27.5; platform_system == \"Linux\"",
                                           "triton==3.5.1; platform_system == \"Linux\""})}}},
               {"nvidia-nccl-cu12", {{"version", "2.32.3"}}},
               {"triton", {{"version", "3.4.0"}}}}}},
            "pass");
    const auto td128 =
        check_of(evaluate(in, test::real_kb()), "TD128");  // a copy: the vector is a temporary
    CHECK(td128.status == "fail");
    CHECK_THAT(td128.message, ContainsSubstring("nvidia-nccl-cu12 2.32.3 is installed (newer than "
                                                "the pin), torch 2.9.1 requires ==2.27.5"));
    CHECK_THAT(td128.message, ContainsSubstring("triton 3.4.0 is installed (older than the pin)"));
}

TEST_CASE("a process that died importing torchvision: TD124 judges the pair from metadata") {
    ValidationInput in;
    in.runtime.environment = {"PATH=/usr/bin", "PYTHONPATH=/opt/pkgs"};
    in.probes["torch"] = ran(
        "torch",
        {{"torch_file", "/app/.venv/lib/python3.11/site-packages/torch/__init__.py"},
         {"crash", {{"signal", "SIGSEGV"}, {"exit_code", 139}, {"stage", "import torchvision"}}},
         {"distributions",
          {{"torch",
            {{"version", "2.9.1"}, {"location", "/app/.venv/lib/python3.11/site-packages"}}},
           {"torchvision", {{"version", "0.23.0"}, {"location", "/opt/pkgs"}}}}}},
        "fail");
    auto checks = evaluate(in, test::real_kb());
    CHECK_THAT(check_of(checks, "TD119").fix, ContainsSubstring("TD124 says which"));
    const auto& td124 = check_of(checks, "TD124");
    CHECK(td124.status == "fail");
    CHECK_THAT(td124.message,
               ContainsSubstring("torchvision 0.23.0 (from /opt/pkgs, found through "
                                 "PYTHONPATH=/opt/pkgs, ahead of the interpreter's own site "
                                 "directories) does not pair with torch 2.9.1"));
    // Even a torchvision of the right version never passes as importing when it killed it.
    CHECK_THAT(td124.message, ContainsSubstring("import torchvision 0.23.0 killed the process"));
}
