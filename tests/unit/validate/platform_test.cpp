#include "core/validate/platform.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/validate/checks.hpp"
#include "core/validate/probe_plan.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

ProbeRun probe(const std::string& name, std::string json_text) {
    for (auto& c : json_text)
        if (c == '\n') c = ' ';
    return parse_probe_output(name, json_text + "\n", 0);
}

// What the files-only tier of an arm64 image gathers: probe-record's distributions (given), and
// nothing from the probes that run the image's code.
ValidationInput files_only_arm64_image(const std::string& distributions) {
    ValidationInput in;
    in.platform = "linux/arm64";
    in.files_only_reason = reading_tier("arm64", "x86_64", false, false, false).reason;
    in.expect = {{"source", "image labels"},
                 {"cuda", "13.0"},
                 {"torch", "2.11.0"},
                 {"target-gpus", "GB200"}};
    in.probes["record"] = probe("record", R"({"probe":"record","schema":1,"status":"pass",
        "reason":"","data":{"distributions":[)" +
                                              distributions + R"(]}})");
    return in;
}

const std::string k_torch_211 =
    R"({"name":"torch","version":"2.11.0","dist_info":"/s/torch-2.11.0.dist-info","files":9,
        "problems":[],"tags":["cp311-cp311-manylinux_2_28_aarch64"],
        "elf":{"aarch64/64":{"count":24,"first":"torch/_C.cpython-311-aarch64-linux-gnu.so"}},
        "texts":{"torch/version.py":"from typing import Optional\n__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n"}})";

}  // namespace

TEST_CASE("platform: architecture names, ELF machines and wheel tags") {
    CHECK(oci_arch("x86_64") == "amd64");
    CHECK(oci_arch("AArch64") == "arm64");
    CHECK(oci_arch("arm64") == "arm64");
    CHECK(oci_arch("ppc64le") == "ppc64le");
    CHECK(elf_machine_of("arm64") == "aarch64");
    CHECK(elf_machine_of("x86_64") == "x86_64");
    CHECK(elf_machine_of("riscv64").empty());
    CHECK(wheel_tag_machine("cp311-cp311-manylinux_2_28_aarch64") == "aarch64");
    CHECK(wheel_tag_machine("py3-none-manylinux2014_sbsa") == "aarch64");  // PyPI cusparselt
    CHECK(wheel_tag_machine("py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64") == "x86_64");
    CHECK(wheel_tag_machine("cp311-cp311-musllinux_1_2_x86_64") == "x86_64");
    CHECK(wheel_tag_machine("py3-none-any") == "");
    CHECK(wheel_tag_machine("cp311-cp311-win_amd64") == "windows");
    CHECK(wheel_tag_machine("cp311-cp311-macosx_11_0_arm64") == "macos");
    CHECK_FALSE(wheel_tag_machine("garbage").has_value());
}

TEST_CASE(
    "platform: the reading tier is chosen by architecture, emulation, probes and --files-only") {
    using K = ReadingTier::Kind;
    CHECK(reading_tier("amd64", "x86_64", false, false, false).kind == K::Full);
    CHECK(reading_tier("arm64", "aarch64", false, false, false).kind == K::Full);
    CHECK(reading_tier("amd64", "x86_64", false, false, false).reason.empty());
    // Emulated and the probes for arm64 are built: the image's code runs under qemu-user.
    auto emulated = reading_tier("arm64", "x86_64", false, true, true);
    CHECK(emulated.kind == K::Emulated);
    CHECK(emulated.name() == "emulated");
    CHECK_THAT(emulated.reason, ContainsSubstring("runs under qemu-user"));
    CHECK_THAT(emulated.reason, ContainsSubstring("no GPU tier"));
    // Emulated, but no linux/arm64 probes: files only, and the missing probes named.
    auto no_probes = reading_tier("arm64", "x86_64", false, true, false);
    CHECK(no_probes.kind == K::FilesOnly);
    CHECK_THAT(no_probes.reason,
               ContainsSubstring("emulates linux/arm64 (binfmt qemu), but torchdock's linux/arm64 "
                                 "probes were not built"));
    auto plain = reading_tier("arm64", "x86_64", false, false, true);
    CHECK(plain.kind == K::FilesOnly);
    CHECK(plain.name() == "files-only");
    CHECK_THAT(plain.reason,
               ContainsSubstring("linux/arm64 and the engine runs linux/amd64 with no "
                                 "emulation"));
    // --files-only wins over everything, on any image.
    CHECK(reading_tier("amd64", "x86_64", true, false, false).kind == K::FilesOnly);
    CHECK(reading_tier("arm64", "x86_64", true, true, true).kind == K::FilesOnly);
    CHECK_THAT(reading_tier("amd64", "x86_64", true, false, false).reason,
               ContainsSubstring("--files-only"));
    // An engine or image that records no architecture: the full tier, as before.
    CHECK(reading_tier("", "x86_64", false, false, false).kind == K::Full);
    CHECK(reading_tier("arm64", "", false, true, true).kind == K::Full);
}

TEST_CASE("platform: the probe set for an image's architecture") {
    CHECK(probe_set_subdir("amd64", "x86_64") == "");
    CHECK(probe_set_subdir("arm64", "aarch64") == "");
    CHECK(probe_set_subdir("arm64", "x86_64") == "linux-arm64");
    CHECK(probe_set_subdir("", "x86_64") == "");
    CHECK_FALSE(probe_set_subdir("ppc64le", "x86_64").has_value());
}

TEST_CASE("platform: import directories read from names") {
    auto debian = files_only_site_dirs("/usr/bin/python3", "/usr/bin/python3.11",
                                       {"PATH=/usr/bin", "HOME=/root"});
    CHECK(debian == std::vector<std::string>{
                        "/usr/lib/python3.11/site-packages", "/usr/lib64/python3.11/site-packages",
                        "/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages",
                        "/usr/lib/python3.11/dist-packages",
                        "/root/.local/lib/python3.11/site-packages"});
    // A venv: its own site-packages first (its python links to the base interpreter), and
    // PYTHONPATH before everything.
    auto venv = files_only_site_dirs("/app/.venv/bin/python", "/usr/local/bin/python3.12",
                                     {"PYTHONPATH=/work/src:relative", "HOME=/"});
    REQUIRE(venv.size() >= 3);
    CHECK(venv[0] == "/work/src");
    CHECK(venv[1] == "/app/.venv/lib/python3.12/site-packages");
    CHECK(venv[2] == "/usr/local/lib/python3.12/site-packages");
    // No minor in any name: every minor 3.14 down to 3.8.
    auto unknown = files_only_site_dirs("/opt/py/bin/python", "/opt/py/bin/python", {});
    CHECK(unknown.front() == "/opt/py/lib/python3.14/site-packages");
    CHECK(unknown.size() == 14);
}

TEST_CASE("platform: torch/version.py") {
    auto v = parse_torch_version_py(
        "__version__ = '2.10.0+cpu'\ndebug = False\ncuda: Optional[str] = None\n"
        "git_version = 'abc'\nhip: Optional[str] = None\n");
    CHECK(v.read);
    CHECK(v.version == "2.10.0+cpu");
    CHECK(v.cuda.empty());
    auto c = parse_torch_version_py("__version__ = \"2.11.0\"\ncuda = \"13.0\"\n");
    CHECK(c.version == "2.11.0");
    CHECK(c.cuda == "13.0");
    CHECK_FALSE(parse_torch_version_py("print('hello')\n").read);
}

TEST_CASE("files-only tier: the healthy arm64 image passes what its files can show") {
    auto in = files_only_arm64_image(k_torch_211);
    in.probes["kernels"] = probe("kernels", R"({"probe":"kernels","schema":1,"status":"pass",
        "reason":"","data":{"objects":[{"path":"/s/torch/lib/libtorch_cuda.so","has_fatbin":true,
        "sass":["sm_80","sm_90","sm_100"],"ptx":[]}]}})");
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD132").status == "pass");
    CHECK(test::check_of(r, "TD133").status == "pass");
    CHECK_THAT(test::check_of(r, "TD133").message, ContainsSubstring("torch was not run"));
    CHECK(test::check_of(r, "TD125").status == "pass");
    // Everything that rests on running the image's code is skipped, and says so.
    for (const char* id : {"TD101", "TD119", "TD121", "TD126", "TD128", "TD140", "TD145"}) {
        INFO(id);
        CHECK(test::check_of(r, id).status == "skip");
        CHECK_THAT(test::check_of(r, id).message, ContainsSubstring("files-only tier"));
    }
}

TEST_CASE("files-only tier: an x86_64 wheel in an arm64 image is named") {
    auto in =
        files_only_arm64_image(k_torch_211 + R"(,{"name":"nvidia-nccl-cu13","version":"2.28.9",
        "files":3,"problems":[],"tags":["py3-none-manylinux_2_18_x86_64"],
        "elf":{"x86_64/64":{"count":1,"first":"nvidia/nccl/lib/libnccl.so.2"}}})");
    auto all = evaluate(in, test::real_kb());
    const auto& r = test::check_of(all, "TD132");
    CHECK(r.status == "fail");
    CHECK_THAT(r.message, ContainsSubstring("nvidia-nccl-cu13 2.28.9: its wheel tag "
                                            "py3-none-manylinux_2_18_x86_64 is for x86_64"));
    CHECK_THAT(r.message,
               ContainsSubstring("1 x86_64/64 ELF object (first nvidia/nccl/lib/libnccl.so.2)"));
    // Distributions that say nothing of a platform (an older probe-record): not a pass.
    auto silent =
        files_only_arm64_image(R"({"name":"torch","version":"2.11.0","files":1,"problems":[]})");
    CHECK(test::check_of(evaluate(silent, test::real_kb()), "TD132").status == "skip");
    // A platform torchdock cannot name an ELF machine for: not judged, and said.
    in.platform = "linux/riscv64";
    CHECK(test::check_of(evaluate(in, test::real_kb()), "TD132").status == "skip");
}

TEST_CASE("files-only tier: a CPU-only torch behind CUDA labels fails from its files") {
    auto in = files_only_arm64_image(
        R"({"name":"torch","version":"2.10.0+cpu","files":9,"problems":[],
        "tags":["cp311-cp311-manylinux_2_28_aarch64"],"elf":{"aarch64/64":{"count":20,"first":"torch/lib/libc10.so"}},
        "texts":{"torch/version.py":"__version__ = '2.10.0+cpu'\ncuda: Optional[str] = None\n"}})");
    auto all = evaluate(in, test::real_kb());
    const auto& r = test::check_of(all, "TD133");
    CHECK(r.status == "fail");
    CHECK_THAT(r.message,
               ContainsSubstring("torch/version.py says 2.10.0+cpu, 2.11.0 is labelled"));
    CHECK_THAT(r.message, ContainsSubstring("CPU-only build (torch/version.py cuda = None) in an "
                                            "image labelled CUDA 13.0"));
    // The fix names the release that would work there, from data/torch.json's platforms.
    CHECK_THAT(r.fix, ContainsSubstring("torch 2.10.0 on linux/arm64 is a CPU-only build on PyPI"));
    CHECK_THAT(r.fix, ContainsSubstring("built for CUDA 13 is torch 2.11.0"));
    // Unreadable version.py: no evidence, never a pass.
    auto unread = files_only_arm64_image(
        R"({"name":"torch","version":"2.11.0","files":1,"problems":[],"texts":{"torch/version.py":null}})");
    CHECK(test::check_of(evaluate(unread, test::real_kb()), "TD133").status == "error");
}

TEST_CASE("files-only tier: the probes get import directories, the machine and version.py") {
    RuntimePlan plan;
    plan.candidates = {"/usr/bin/python3"};
    plan.files_only_machine = "aarch64";
    plan.files_only_site_dirs = {"/usr/local/lib/python3.11/dist-packages",
                                 "/usr/lib/python3/dist-packages"};
    CHECK(files_only_probe_flags("libs", plan) ==
          std::vector<std::string>{
              "--site-dirs=/usr/local/lib/python3.11/dist-packages,/usr/lib/python3/dist-packages",
              "--machine=aarch64"});
    CHECK(files_only_probe_flags("record", plan) ==
          std::vector<std::string>{
              "--site-dirs=/usr/local/lib/python3.11/dist-packages,/usr/lib/python3/dist-packages",
              "--text=torch:torch/version.py",
              "--inspect=/usr/local/lib/python3.11/dist-packages/torch/version.py,"
              "/usr/lib/python3/dist-packages/torch/version.py"});
    CHECK(files_only_probe_flags("kernels", plan).front() ==
          "--paths=/usr/local/lib/python3.11/dist-packages,/usr/lib/python3/dist-packages");
    CHECK(files_only_probe_flags("cuda", plan).empty());
    // The realpath comes from probe-env's interpreter list.
    ProbeRun env = probe("env", R"({"probe":"env","schema":1,"status":"pass","reason":"","data":
        {"interpreters":[{"path":"/usr/bin/python3","realpath":"/usr/bin/python3.11","via":"PATH"}]}})");
    plan.environment = {"PATH=/usr/bin"};
    CHECK(site_dirs_by_name_of(plan, &env).front() == "/usr/lib/python3.11/site-packages");
    plan.candidates.clear();
    CHECK(site_dirs_by_name_of(plan, &env).empty());
}
