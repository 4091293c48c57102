// Facts the knowledge-base issue corrected, as render, the GPU table and the knowledge base
// answer them (each would fail on the data before the fix).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/knowledge/knowledge_base.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

const std::string& dockerfile(const RenderPlan& plan) {
    REQUIRE(plan.problems.empty());
    for (const auto& [path, text] : plan.files)
        if (path.find("/Dockerfile") != std::string::npos) return text;
    FAIL("no Dockerfile rendered");
    static std::string none;
    return none;
}

}  // namespace

TEST_CASE("torch 1.13.1 (Python 3.7 to 3.11 on PyPI) renders on Debian 12's Python 3.11") {
    auto plan = test::plan_one(test::matrix_manifest(
        "os-pip", R"({"torch": ["1.13.1"], "cuda": ["cu117"], "os": ["debian12"]})"));
    INFO(test::problems_text(plan));
    const std::string& df = dockerfile(plan);
    CHECK_THAT(df, ContainsSubstring("torch==1.13.1+cu117"));
    // CUDA 11.7's floor is 11.7 Update 1's row of the release notes' toolkit-driver table
    // (>=515.48.07), not the installer's bundled 515.65.01, and it is confirmed.
    CHECK_THAT(df, ContainsSubstring("io.torchdock.min-driver=\"515.48.07\""));
    CHECK_THAT(df, !ContainsSubstring("io.torchdock.min-driver-unconfirmed"));
}

TEST_CASE("the cu116 build of torch 1.13.0 is no longer refused") {
    auto plan = test::plan_one(test::matrix_manifest(
        "os-pip", R"({"torch": ["1.13.0"], "cuda": ["cu116"], "os": ["ubuntu22.04"]})"));
    INFO(test::problems_text(plan));
    CHECK_THAT(dockerfile(plan), ContainsSubstring("torch==1.13.0+cu116"));
}

TEST_CASE("torch 2.15.0 (added from PyPI) renders with its cu132 default build") {
    auto plan = test::plan_one(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.15.0"], "cuda": ["cu132"], "os": ["ubuntu24.04"]})"));
    INFO(test::problems_text(plan));
    const std::string& df = dockerfile(plan);
    CHECK_THAT(df, ContainsSubstring("torch==2.15.0+cu132"));
    CHECK_THAT(df, ContainsSubstring("io.torchdock.cudnn=\"9.26.0.51\""));
    // Python 3.10 wheels were dropped in 2.15.
    auto old_python = test::plan_one(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.15.0"], "cuda": ["cu132"], "os": ["ubuntu22.04"]})"));
    CHECK_THAT(
        test::problems_text(old_python),
        ContainsSubstring("torch 2.15.0 publishes wheels for Python 3.11 to 3.15, not 3.10"));
}

TEST_CASE("torch 2.11.0's cu130 build pins cuDNN 9.19.0.56; torchaudio pairs through 2.11.x") {
    const KnowledgeBase& kb = test::real_kb();
    const TorchRelease* t = kb.torch("2.11.0");
    REQUIRE(t);
    REQUIRE(t->variant("cu130"));
    CHECK(t->variant("cu130")->cudnn == "9.19.0.56");
    CHECK(t->variant("cu130")->cuda_runtime == "13.0.96");
    CHECK(t->glibc == "2.28");
    CHECK(t->python_free_threaded == std::vector<std::string>{"3.13t", "3.14t"});
    for (const char* v : {"2.12.0", "2.13.0", "2.14.0"}) {
        INFO(v);
        REQUIRE(kb.torch(v));
        CHECK(kb.torch(v)->torchaudio == "2.11.1");
    }
    REQUIRE(kb.torch("2.12.1"));
    CHECK(kb.torch("2.12.1")->variant("cu129"));
}

TEST_CASE("no PTX in torch 2.5's cu124 and 2.11-2.14's cu130 wheels") {
    const KnowledgeBase& kb = test::real_kb();
    for (const char* v : {"2.5.0", "2.5.1"}) {
        INFO(v);
        CHECK_FALSE(arch_list_covers(kb.torch(v)->variant("cu124")->arch_list, "12.0"));
    }
    for (const char* v : {"2.11.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0"}) {
        INFO(v);
        const auto& arch = kb.torch(v)->variant("cu130")->arch_list;
        CHECK(arch_list_covers(arch, "12.0"));        // sm_120 SASS
        CHECK(arch_list_covers(arch, "12.1"));        // same major: the sm_120 cubin runs
        CHECK_FALSE(arch_list_covers(arch, "13.0"));  // nothing to JIT for a newer GPU
    }
}

TEST_CASE("the GPU table knows common cards by the names nvidia-smi prints") {
    const KnowledgeBase& kb = test::real_kb();
    struct Case {
        const char* name;
        const char* cc;
    };
    for (const auto& c :
         {Case{"RTX 5080", "12.0"}, Case{"NVIDIA GeForce RTX 5080", "12.0"},
          Case{"RTX 5070 Ti", "12.0"}, Case{"RTX 5070", "12.0"}, Case{"RTX 5060", "12.0"},
          Case{"GTX 1080", "6.1"}, Case{"NVIDIA GeForce GTX 1080", "6.1"}, Case{"RTX 2080", "7.5"},
          Case{"NVIDIA GeForce RTX 2080 Ti", "7.5"}, Case{"P40", "6.1"}, Case{"Tesla P40", "6.1"},
          Case{"P4", "6.1"}, Case{"Tesla K40", "3.5"},
          Case{"NVIDIA GeForce RTX 4060 Laptop GPU", "8.9"}, Case{"NVIDIA A800-SXM4-80GB", "8.0"},
          // The arm64 (Grace) superchips of issue 24: GH200 sm_90, GB200 sm_100, GB300 sm_103.
          Case{"GH200", "9.0"}, Case{"GB200", "10.0"}, Case{"NVIDIA GB300", "10.3"}}) {
        INFO(c.name);
        const GpuModel* g = kb.gpu(c.name);
        REQUIRE(g);
        CHECK(g->cc == c.cc);
    }
    CHECK(kb.gpu("Tesla P40")->datacenter);
    CHECK_FALSE(kb.gpu("RTX 5080")->datacenter);
}

TEST_CASE("CUDA 11.6 and 11.7 are known; 13.3 to 13.5 floors are unconfirmed") {
    const KnowledgeBase& kb = test::real_kb();
    REQUIRE(kb.cuda("11.6"));
    REQUIRE(kb.cuda("11.7"));
    CHECK(kb.cudart_soname("11.7") == "libcudart.so.11.0");
    for (const char* mm : {"13.3", "13.4", "13.5"}) {
        INFO(mm);
        CHECK(kb.min_driver_unconfirmed(mm));
    }
    for (const char* mm : {"12.8", "13.0", "11.8", "11.7"}) {
        INFO(mm);
        CHECK_FALSE(kb.min_driver_unconfirmed(mm));
    }
}

TEST_CASE("a build without an arch list renders, with a warning that targets are unchecked") {
    auto plan = test::plan_one(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.15.0"], "cuda": ["cu132"], "os": ["ubuntu24.04"]})",
        R"(, "target_gpus": ["H100"])"));
    INFO(test::problems_text(plan));
    REQUIRE(plan.problems.empty());
    REQUIRE(plan.warnings.size() == 1);
    CHECK_THAT(plan.warnings[0].message,
               ContainsSubstring("no arch list for torch 2.15.0+cu132, so variant "
                                 "t-2.15.0-cu132-ubuntu24.04 is not checked against the target "
                                 "GPUs"));
}
