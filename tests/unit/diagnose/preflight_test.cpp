#include "core/diagnose/preflight.hpp"

#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/diagnose/container_requirement.hpp"
#include "core/diagnose/host_gpus.hpp"
#include "test_support.hpp"
#include "util/strings.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

const ForwardCompat& real_fc() {
    static const ForwardCompat fc = [] {
        std::ifstream in(test::source_path("data/forward_compat.json"));
        std::stringstream text;
        text << in.rdbuf();
        auto parsed = ForwardCompat::parse(text.str());
        if (!parsed) throw std::runtime_error(parsed.error().message);
        return parsed.value();
    }();
    return fc;
}

PreflightResult check(const std::string& cuda, const std::string& driver,
                      const std::vector<std::string>& gpus, const std::string& arch_list = "",
                      const std::string& nccl = "") {
    std::map<std::string, std::string> expect{{"cuda", cuda}};
    if (!arch_list.empty()) expect["arch-list"] = arch_list;
    if (!nccl.empty()) expect["nccl"] = nccl;
    return preflight(expect, driver, gpus, test::real_kb(), real_fc());
}

std::string all_reasons(const PreflightResult& r) {
    std::string out;
    for (const auto& t : r.targets) out += t.gpu + ": " + join(t.reasons, "; ") + "\n";
    return out;
}

}  // namespace

TEST_CASE("forward_compat.json parses and follows NVIDIA's support matrix") {
    const ForwardCompat& fc = real_fc();
    CHECK_FALSE(fc.branches.empty());
    CHECK_THAT(fc.requirement, ContainsSubstring("Data Center"));
    CHECK(fc.supports("535.104.05", "12.4"));    // C
    CHECK(fc.supports("535.104.05", "12.4.1"));  // patch versions are the same package
    CHECK(fc.supports("535.230.02", "13.0"));    // C: 535 runs 13.x through cuda-compat
    CHECK(fc.supports("535.104.05", "13.4"));
    CHECK_FALSE(fc.supports("535.104.05", "12.2"));  // N/A: 535 is 12.2's own driver
    CHECK_FALSE(fc.supports("535.104.05", "13.5"));  // not in the matrix
    CHECK(fc.supports("570.124.06", "12.9"));
    CHECK(fc.supports("570.124.06", "13.0"));
    CHECK_FALSE(fc.supports("570.124.06", "12.8"));  // N/A
    CHECK_FALSE(fc.supports("570.124.06", "12.6"));  // X
    CHECK(fc.supports("580.65.06", "13.1"));
    CHECK_FALSE(fc.supports("580.65.06", "12.9"));  // X (backward compatibility needs no package)
    CHECK_FALSE(fc.supports("560.35.03", "12.8"));  // a New Feature Branch: not a target
    CHECK_FALSE(fc.supports("470.57.02", "12.1"));  // end of life
    CHECK_FALSE(fc.supports("550.54.15", "12.6"));  // end of life
    CHECK_FALSE(fc.supports("garbage", "12.4"));
    REQUIRE(fc.branch_of("470.256.02"));
    CHECK(fc.branch_of("470.256.02")->end_of_life);
    CHECK(fc.branch_of("535.104.05")->native_cuda == "12.2");
    CHECK(fc.branch_of("999.1") == nullptr);
}

TEST_CASE("ForwardCompat::parse names what is wrong") {
    auto bad = [](const std::string& text) {
        auto r = ForwardCompat::parse(text);
        REQUIRE_FALSE(r);
        CHECK(r.error().kind == ErrorKind::Config);
        return r.error().message;
    };
    CHECK_THAT(bad("{"), ContainsSubstring("not JSON"));
    CHECK_THAT(bad(R"({"schema": 2, "branches": []})"), ContainsSubstring("$.schema"));
    CHECK_THAT(bad(R"({"schema": 1})"), ContainsSubstring("$.branches"));
    CHECK_THAT(
        bad(R"({"schema": 1, "branches": [{"branch": 535, "min_driver": "535", "native_cuda": "12.2", "cuda": ["12.4"]}]})"),
        ContainsSubstring("$.branches[0].source"));
    CHECK_THAT(
        bad(R"({"schema": 1, "branches": [{"branch": 535, "min_driver": "550", "native_cuda": "12.2", "cuda": [], "source": "x"}]})"),
        ContainsSubstring("$.branches[0].min_driver"));
    CHECK_THAT(
        bad(R"({"schema": 1, "branches": [{"branch": 535, "min_driver": "535", "native_cuda": "12.2", "cuda": ["12"], "source": "x"}]})"),
        ContainsSubstring("$.branches[0].cuda[0]"));
}

// Driver x CUDA x GPU, from NVIDIA's tables: toolkit driver floors (CUDA release notes), the
// minor-version-compatibility floors (>= 450 for 11.x, >= 525 for 12.x, >= 580 for 13.x),
// the forward-compatibility matrix (data/forward_compat.json) and the sm lists of each toolkit.
TEST_CASE("preflight over a table of driver x CUDA x GPU cases") {
    struct Case {
        const char* name;
        const char* cuda;
        const char* driver;
        std::vector<std::string> gpus;
        const char* arch;
        bool ok;
        bool driver_ok;
        const char* verdict;  // a substring of driver_verdict
        const char* reason;   // a substring of the targets' reasons, or ""
    };
    const std::vector<Case> cases = {
        {"12.4 on its own driver",
         "12.4",
         "550.54.15",
         {"H100"},
         "",
         true,
         true,
         "meets CUDA 12.4's minimum driver 550.54.15",
         ""},
        {"12.4 on 535 via minor-version compatibility",
         "12.4",
         "535.104.05",
         {"NVIDIA H100 80GB HBM3"},
         "",
         true,
         true,
         "minor-version compatibility",
         ""},
        {"minor-version compatibility names the PTX caveat",
         "12.4",
         "535.104.05",
         {"H100"},
         "",
         true,
         true,
         "no PTX JIT of newer PTX",
         ""},
        {"minor-version compatibility works on GeForce too",
         "12.8",
         "535.104.05",
         {"RTX 4090"},
         "",
         true,
         true,
         "minor-version compatibility",
         ""},
        {"12.4 on 470 with H100: the 470 branch is end of life for cuda-compat",
         "12.4",
         "470.57.02",
         {"H100"},
         "",
         false,
         false,
         "end of life",
         // With CUDA 11.6 in the knowledge base, 11.8 is no longer its oldest CUDA, so it
         // can tell that a 470 driver predates sm_90.
         "predates H100 (cc 9.0)"},
        {"12.x on 450 is not ok",
         "12.4",
         "450.80.02",
         {"A100"},
         "",
         false,
         false,
         "needs driver >= 550.54.15",
         ""},
        {"12.x on 450 names the minor-compat floor",
         "12.1",
         "450.80.02",
         {"A100"},
         "",
         false,
         false,
         "or >= 525.60.13",
         ""},
        {"13.0 on 535 with H100 only with cuda-compat",
         "13.0",
         "535.104.05",
         {"H100"},
         "",
         true,
         true,
         "ok only with the CUDA forward-compatibility package (cuda-compat-13-0)",
         ""},
        {"forward compatibility says it is not for GeForce/RTX",
         "13.0",
         "535.104.05",
         {"A100", "H100"},
         "",
         true,
         true,
         "does not work on GeForce/RTX",
         ""},
        {"13.0 on 535 with an RTX 4090: no forward compatibility",
         "13.0",
         "535.104.05",
         {"RTX 4090"},
         "",
         false,
         false,
         "only on data-center GPUs",
         ""},
        {"one GeForce among data-center GPUs spoils forward compatibility",
         "13.0",
         "570.124.06",
         {"H100", "RTX 4090"},
         "",
         false,
         false,
         "RTX 4090 is not",
         ""},
        {"13.0 on 570 with data-center GPUs via cuda-compat",
         "13.0",
         "570.124.06",
         {"H100", "A100"},
         "",
         true,
         true,
         "cuda-compat-13-0",
         ""},
        {"13.0 on 550: 550 is end of life for cuda-compat",
         "13.0",
         "550.54.15",
         {"H100"},
         "",
         false,
         false,
         "end of life",
         ""},
        {"13.0 on 525: no cuda-compat for that branch",
         "13.0",
         "525.60.13",
         {"H100"},
         "",
         false,
         false,
         "not in NVIDIA's forward-compatibility matrix",
         ""},
        {"12.9 on 580: backward compatibility",
         "12.9",
         "580.65.06",
         {"H100"},
         "",
         true,
         true,
         "meets",
         ""},
        {"13.4 (driver branch R615) on 610 via minor-version compatibility",
         "13.4",
         "610.43.02",
         {"B200"},
         "",
         true,
         true,
         "minor-version compatibility",
         ""},
        {"11.8 on 470 via minor-version compatibility",
         "11.8",
         "470.57.02",
         {"V100"},
         "",
         true,
         true,
         "minor-version compatibility",
         ""},
        {"V100 with CUDA 13: sm_70 dropped",
         "13.0",
         "580.95.05",
         {"V100"},
         "",
         false,
         true,
         "meets",
         "CUDA 13.0 dropped sm_70; the last CUDA for it is 12.9"},
        {"RTX 5090 with CUDA 12.4 needs 12.8",
         "12.4",
         "570.124.06",
         {"RTX 5090"},
         "",
         false,
         true,
         "meets",
         "it needs CUDA 12.8 or newer"},
        {"RTX 5090 with CUDA 12.8",
         "12.8",
         "570.124.06",
         {"NVIDIA GeForce RTX 5090"},
         "8.0;8.6;8.9;9.0;10.0;12.0",
         true,
         true,
         "meets",
         ""},
        {"RTX 5090 on a 550 driver predates Blackwell",
         "12.8",
         "550.54.15",
         {"RTX 5090"},
         "",
         false,
         true,
         "minor-version compatibility",
         "predates RTX 5090"},
        {"B200 on 535 with cuda-compat 12.8: the kernel driver still predates it",
         "12.8",
         "535.104.05",
         {"B200"},
         "",
         false,
         true,
         "minor-version compatibility",
         "driver of the CUDA 12.8 generation (>= 570.26)"},
        {"arch list without sm_90",
         "12.4",
         "550.54.15",
         {"H100"},
         "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86",
         false,
         true,
         "meets",
         "has no kernels for H100 (cc 9.0, sm_90)"},
        {"torch-style arch list with sm_90",
         "12.4",
         "550.54.15",
         {"H100"},
         "sm_50,sm_80,sm_86,sm_90",
         true,
         true,
         "meets",
         ""},
        {"PTX-only coverage breaks under minor-version compatibility",
         "12.4",
         "535.104.05",
         {"H100"},
         "8.0;8.6+PTX",
         false,
         true,
         "minor-version compatibility",
         "only through PTX"},
        {"PTX-only coverage is fine on a new enough driver",
         "12.4",
         "550.54.15",
         {"H100"},
         "8.0;8.6+PTX",
         true,
         true,
         "meets",
         ""},
        {"unknown GPU with did-you-mean",
         "12.4",
         "550.54.15",
         {"RTX 4009"},
         "",
         false,
         true,
         "meets",
         "did you mean \"RTX 4090\"?"},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        PreflightResult r = check(c.cuda, c.driver, c.gpus, c.arch);
        INFO("verdict: " << r.driver_verdict);
        INFO("reasons: " << all_reasons(r));
        CHECK(r.ok == c.ok);
        CHECK(r.driver_ok == c.driver_ok);
        CHECK_THAT(r.driver_verdict, ContainsSubstring(c.verdict));
        REQUIRE(r.targets.size() == c.gpus.size());
        if (std::string(c.reason).empty()) {
            for (const auto& t : r.targets) {  // what fails here is the driver, never the GPUs
                CHECK(t.ok);
                CHECK(t.reasons.empty());
            }
        } else {
            CHECK_THAT(all_reasons(r), ContainsSubstring(c.reason));
            CHECK(std::any_of(r.targets.begin(), r.targets.end(),
                              [](const PreflightTarget& t) { return !t.ok; }));
        }
    }
}

TEST_CASE("preflight targets keep the model as given and its compute capability") {
    auto r = check("12.4", "550.54.15", {"NVIDIA H100 80GB HBM3", "nvidia a100-sxm4-80gb"});
    REQUIRE(r.targets.size() == 2);
    CHECK(r.targets[0].gpu == "NVIDIA H100 80GB HBM3");
    CHECK(r.targets[0].cc == "9.0");
    CHECK(r.targets[1].gpu == "nvidia a100-sxm4-80gb");
    CHECK(r.targets[1].cc == "8.0");
    CHECK(r.ok);
}

TEST_CASE("driver floors from --expect win over the knowledge base") {
    std::map<std::string, std::string> expect{
        {"cuda", "12.4"}, {"min-driver", "560.28.03"}, {"min-driver-compat", "545.23.06"}};
    auto r = preflight(expect, "550.54.15", {"H100"}, test::real_kb(), real_fc());
    CHECK(r.driver_ok);
    CHECK_THAT(r.driver_verdict, ContainsSubstring("minimum driver 560.28.03"));
    CHECK_THAT(r.driver_verdict, ContainsSubstring(">= 545.23.06"));
}

TEST_CASE("no driver version or no GPUs") {
    auto unknown = check("12.4", "", {"H100"});
    CHECK_FALSE(unknown.driver_ok);
    CHECK_FALSE(unknown.ok);
    CHECK_THAT(unknown.driver_verdict, ContainsSubstring("unknown"));

    auto no_gpus = check("13.0", "535.104.05", {});
    CHECK_FALSE(no_gpus.driver_ok);
    CHECK_THAT(no_gpus.driver_verdict, ContainsSubstring("no GPUs were named"));
    CHECK(no_gpus.targets.empty());
}

TEST_CASE("preflight run flags") {
    auto plain = check("12.4", "550.54.15", {"H100"});
    CHECK(plain.run_flags ==
          std::vector<std::string>{"--gpus all", "--ulimit memlock=-1", "--ulimit stack=67108864"});
    auto nccl = check("12.4", "550.54.15", {"H100"}, "", "2.21.5");
    CHECK(nccl.run_flags == std::vector<std::string>{"--gpus all", "--ipc=host",
                                                     "--ulimit memlock=-1",
                                                     "--ulimit stack=67108864"});
    CHECK_THAT(join(nccl.notes, "\n"), ContainsSubstring("--shm-size=8g"));
}

TEST_CASE("preflight notes the forward-compatibility package and target GPUs") {
    auto fc = check("13.0", "535.104.05", {"H100"});
    CHECK_THAT(join(fc.notes, "\n"), ContainsSubstring("/usr/local/cuda-13.0/compat"));

    std::map<std::string, std::string> expect{{"cuda", "12.4"}, {"target-gpus", "A100, H100"}};
    auto r =
        preflight(expect, "550.54.15", {"L40S", "NVIDIA H100 PCIe"}, test::real_kb(), real_fc());
    std::string notes = join(r.notes, "\n");
    CHECK_THAT(notes, ContainsSubstring("L40S is not among the image's target GPUs"));
    CHECK_THAT(notes, !ContainsSubstring("NVIDIA H100 PCIe is not among"));
}

TEST_CASE("a driver floor the knowledge base could not confirm is printed as unconfirmed") {
    // CUDA 13.4's floor is only a driver branch (R615) in its release notes.
    PreflightResult r = check("13.4", "615.20.01", {"H100"});
    CHECK(r.driver_ok);
    CHECK_THAT(r.driver_verdict,
               ContainsSubstring("minimum driver 615 (unconfirmed in the knowledge base)"));
    r = check("13.4", "580.95.05", {"RTX 5090"});
    CHECK_THAT(r.driver_verdict, ContainsSubstring("(unconfirmed in the knowledge base)"));
    // A confirmed floor is printed plainly.
    r = check("12.4", "550.54.15", {"H100"});
    CHECK_THAT(r.driver_verdict, !ContainsSubstring("unconfirmed"));
}

TEST_CASE(
    "NVIDIA_REQUIRE_CUDA: groups are alternatives, commas join conditions; brand and arch "
    "are unknown here") {
    using O = RequirementVerdict::Outcome;
    CHECK(evaluate_require_cuda("cuda>=12.8", "570.124.06", "12.8").outcome == O::Met);
    CHECK(evaluate_require_cuda("cuda>=12.8", "535.104.05", "12.2").outcome == O::NotMet);
    // nvidia/cuda's form: the CUDA floor, or a data-center branch by brand and driver range.
    std::string nv =
        "cuda>=12.8 brand=tesla,driver>=470,driver<471 brand=tesla,driver>=535,driver<536";
    CHECK(evaluate_require_cuda(nv, "525.60.13", "12.0").outcome == O::NotMet);
    auto branch = evaluate_require_cuda(nv, "535.104.05", "12.2");
    CHECK(branch.outcome == O::Unknown);  // depends on the brand
    CHECK_THAT(branch.detail, ContainsSubstring("brand"));
    CHECK(evaluate_require_cuda("", "535.104.05", "12.2").outcome == O::Unknown);
}

TEST_CASE(
    "preflight honours the image's NVIDIA_REQUIRE_CUDA: the toolkit refuses to start it, "
    "so minor-version compatibility needs NVIDIA_DISABLE_REQUIRE=1",
    "[regression]") {
    // Real-image report D8: driver 535 runs CUDA 12.8 through minor-version compatibility,
    // but the image's cuda>=12.8 stops the container before it starts.
    std::map<std::string, std::string> expect{{"cuda", "12.8"}, {"arch-list", "8.9;9.0"}};
    auto r = preflight(expect, "535.104.05", {"RTX 4090"}, test::real_kb(), real_fc(),
                       ContainerRequirements{"cuda>=12.8", false, ""});
    CHECK_THAT(r.driver_verdict, ContainsSubstring("NVIDIA_DISABLE_REQUIRE=1"));
    CHECK(std::find(r.run_flags.begin(), r.run_flags.end(), "-e NVIDIA_DISABLE_REQUIRE=1") !=
          r.run_flags.end());
    auto allowed = preflight(expect, "535.104.05", {"RTX 4090"}, test::real_kb(), real_fc(),
                             ContainerRequirements{"cuda>=12.8", true, ""});
    CHECK(std::find(allowed.run_flags.begin(), allowed.run_flags.end(),
                    "-e NVIDIA_DISABLE_REQUIRE=1") == allowed.run_flags.end());
}

TEST_CASE(
    "preflight says unknown, not yes, when it could check neither the driver nor the "
    "kernels",
    "[regression]") {
    auto r = preflight({}, "535.104.05", {"RTX 4090"}, test::real_kb(), real_fc());
    CHECK(r.answer == "unknown");
    // Labels alone are expectations: without the image's torch or its kernels examined, a
    // pass is "unknown", a failure still "no".
    CHECK(check("12.4", "560.35.03", {"H100"}, "9.0").answer == "unknown");
    CHECK(check("13.0", "535.104.05", {"RTX 4090"}, "8.9").answer == "no");
}

namespace {

// What the torch probe and probe-kernels report of a pip-installed torch 2.9.1+cu128 (arch
// list trimmed), and an extension built for sm_80 only.
ImageProbes probed_image() {
    ImageProbes p;
    p.torch = nlohmann::json::parse(
        R"({"torch":"2.9.1+cu128","cuda":"12.8","arch_list":["sm_80","sm_90"],
            "loaded_libraries":["/v/site-packages/torch/lib/libtorch_cuda.so"]})");
    p.audit = nlohmann::json::parse(R"({"objects":[
        {"path":"/v/site-packages/torch/lib/libtorch_cuda.so","has_fatbin":true,
         "sass":["sm_80","sm_90"],"ptx":[]},
        {"path":"/v/site-packages/flash_attn_2_cuda.so","has_fatbin":true,"sass":["sm_80"],
         "ptx":[]},
        {"path":"/v/site-packages/nvidia/cufft/lib/libcufftw.so.11","has_fatbin":true,
         "sass":["sm_52"],"ptx":[]}]})");
    return p;
}

}  // namespace

TEST_CASE("preflight judges each GPU on the image's audited kernels, labels or not") {
    auto r = preflight({}, "570.124.06", {"A100", "H100"}, test::real_kb(), real_fc(), {},
                       probed_image());
    // torch's CUDA stands in for the missing label, so the driver is checked too.
    CHECK_THAT(r.driver_verdict, ContainsSubstring("CUDA 12.8's minimum driver"));
    REQUIRE(r.targets.size() == 2);
    CHECK(r.targets[0].ok);  // A100: every object has sm_80; libcufftw is not loaded
    CHECK_FALSE(r.targets[1].ok);
    CHECK_THAT(join(r.targets[1].reasons, "\n"),
               ContainsSubstring("kernel audit: flash_attn_2_cuda.so has sm_80; H100 needs sm_90"));
    CHECK(r.answer == "no");
}

TEST_CASE("preflight without an audit says why; labels alone are never a yes") {
    ImageProbes none;
    none.not_audited = "probe-kernels timed out after 60 s";
    auto r = preflight({{"arch-list", "8.0;9.0"}}, "570.124.06", {"H100"}, test::real_kb(),
                       real_fc(), {}, none);
    CHECK(r.answer == "unknown");
    CHECK_THAT(join(r.notes, "\n"),
               ContainsSubstring("not audited: probe-kernels timed out after 60 s"));
    CHECK_THAT(join(r.notes, "\n"), ContainsSubstring("expectations, not evidence"));
    // The user chose to skip the audit: the labels' answer stands, and says so.
    none.not_audited = "--no-kernel-audit";
    CHECK(preflight({{"arch-list", "8.0;9.0"}}, "570.124.06", {"H100"}, test::real_kb(), real_fc(),
                    {}, none)
              .answer == "yes");
}

TEST_CASE("a CPU build of torch behind CUDA labels is never a yes for a GPU", "[regression]") {
    ImageProbes cpu;
    cpu.torch = nlohmann::json::parse(R"({"torch":"2.9.1+cpu","cuda":null,"arch_list":[]})");
    cpu.not_audited = "probe-kernels found no GPU code";
    auto r = preflight({{"cuda", "12.8"}, {"arch-list", "8.0;9.0"}}, "570.124.06", {"H100"},
                       test::real_kb(), real_fc(), {}, cpu);
    CHECK(r.answer == "no");
    REQUIRE(r.targets.size() == 1);
    CHECK_THAT(join(r.targets[0].reasons, "\n"), ContainsSubstring("CPU build"));
    ContainerRequirements hidden{"", false, "CUDA_VISIBLE_DEVICES="};
    auto h = preflight({{"cuda", "12.8"}}, "570.124.06", {"H100"}, test::real_kb(), real_fc(),
                       hidden, probed_image());
    CHECK_THAT(join(h.notes, "\n"), ContainsSubstring("CUDA_VISIBLE_DEVICES="));
}

TEST_CASE("torch built for another Python than the image runs is the reason, not a yes",
          "[regression]") {
    // real-images-3 case 5: a Python 3.11 venv copied into a 3.13 stage (no torch module).
    ImageProbes other;
    other.torch = nlohmann::json::parse(R"({"torch":null,
        "site_dirs":["/app/.venv/lib/python3.11/site-packages"],
        "torch_for_other_python":[{"dir":"/app/.venv/lib/python3.11/site-packages",
          "python":"3.11","evidence":"lib/python3.11","interpreter":"/app/.venv/bin/python",
          "interpreter_python":"3.13.5"}]})");
    other.not_audited = "probe-kernels found no GPU code";
    auto r = preflight({}, "570.124.06", {"H100"}, test::real_kb(), real_fc(), {}, other);
    CHECK(r.answer == "no");
    REQUIRE(r.targets.size() == 1);
    CHECK_THAT(join(r.targets[0].reasons, "\n"),
               ContainsSubstring("built for Python 3.11 (lib/python3.11), but the image runs "
                                 "Python 3.13.5"));
    // case 6: the same torch on PYTHONPATH fails to import; the import error names the cause
    other.torch["import_error"] = "ImportError: Failed to load PyTorch C extensions:";
    auto r6 = preflight({}, "570.124.06", {"H100"}, test::real_kb(), real_fc(), {}, other);
    CHECK(r6.answer == "no");
    CHECK_THAT(join(r6.targets[0].reasons, "\n"),
               ContainsSubstring("Failed to load PyTorch C extensions:; the cause: torch in "
                                 "/app/.venv/lib/python3.11/site-packages is built for Python "
                                 "3.11"));
}

TEST_CASE("preflight notes archs torch reports but its binary lacks") {
    ImageProbes p = probed_image();
    p.torch["arch_list"] = {"sm_80", "sm_90", "sm_120"};
    auto r = preflight({}, "570.124.06", {"A100"}, test::real_kb(), real_fc(), {}, p);
    CHECK_THAT(join(r.notes, "\n"), ContainsSubstring("torch reports sm_120 but libtorch_cuda.so"));
}

TEST_CASE("preflight: an audit with no GPU code decides nothing about the GPUs") {
    ImageProbes p;
    p.audit = nlohmann::json::parse(R"({"objects":[]})");
    auto r = preflight({}, "570.124.06", {"H100"}, test::real_kb(), real_fc(), {}, p);
    CHECK(r.answer == "unknown");
}

TEST_CASE("host_gpus: the driver and GPU names a host's probe-cuda saw", "[preflight]") {
    auto two = host_gpus(nlohmann::json::parse(
        R"({"nvidia_driver": "570.124.06", "devices": [{"name": "NVIDIA H100 80GB HBM3"},
            {"name": "NVIDIA A100-SXM4-80GB"}]})"));
    CHECK(two.driver == "570.124.06");
    CHECK(two.gpus == std::vector<std::string>{"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"});
    // No driver (a CPU node): nothing; odd types are not taken for facts.
    auto none = host_gpus(nlohmann::json::parse(R"({"nvidia_driver": null, "devices": []})"));
    CHECK(none.driver.empty());
    CHECK(none.gpus.empty());
    auto odd = host_gpus(nlohmann::json::parse(
        R"({"nvidia_driver": 570, "devices": ["H100", {"name": 7}, {"name": "T4"}]})"));
    CHECK(odd.driver.empty());
    CHECK(odd.gpus == std::vector<std::string>{"", "T4"});
    CHECK(host_gpus(nlohmann::json()).gpus.empty());
    CHECK(host_gpus(nlohmann::json::array()).driver.empty());
}
