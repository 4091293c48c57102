#include "core/kernels/kernel_judge.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "kernel_fixtures.hpp"

using namespace td::kernels;
using Catch::Matchers::ContainsSubstring;

namespace {

Arch sm(const char* s) { return *parse_arch(s, "sm_"); }
Arch compute(const char* s) { return *parse_arch(s, "compute_"); }
ComputeCapability cc(const char* s) { return *parse_compute_capability(s); }

KernelImages images(std::vector<const char*> sass, std::vector<const char*> ptx = {},
                    PtxIsa isa = {8, 4}) {
    KernelImages out;
    for (auto s : sass) out.sass.push_back(sm(s));
    for (auto p : ptx) out.ptx.push_back(PtxTarget{compute(p), isa});
    return out;
}

GpuTarget gpu(const char* name, const char* c) { return GpuTarget{name, cc(c), std::nullopt}; }

}  // namespace

TEST_CASE("kernels: architecture names and compute capabilities parse strictly") {
    CHECK(sm("sm_90a").number == 90);
    CHECK(sm("sm_90a").suffix == ArchSuffix::arch_specific);
    CHECK(compute("compute_100f").suffix == ArchSuffix::family_specific);
    CHECK(compute("compute_100f").name("compute_") == "compute_100f");
    CHECK_FALSE(parse_arch("sm_90x", "sm_"));
    CHECK_FALSE(parse_arch("sm_", "sm_"));
    CHECK_FALSE(parse_arch("compute_80", "sm_"));
    CHECK_FALSE(parse_arch("sm_123456", "sm_"));
    CHECK(cc("12.0").number() == 120);
    CHECK(cc("8.6").text() == "8.6");
    for (const char* bad : {"", "12", "12.", "12.10", "x.0", "1.2.3", "-1.0", "0.5"})
        CHECK_FALSE(parse_compute_capability(bad));
    CHECK(parse_ptx_isa("8.7") == PtxIsa{8, 7});
    CHECK(parse_ptx_isa("9.10") == PtxIsa{9, 10});
    for (const char* bad : {"", "8", "8.", ".7", "8.7.1", "a.b", "8.-1"})
        CHECK_FALSE(parse_ptx_isa(bad));
}

TEST_CASE("kernels: SASS runs on the same major with an equal or higher minor") {
    CHECK(sass_runs_on(sm("sm_80"), cc("8.6")));
    CHECK(sass_runs_on(sm("sm_80"), cc("8.0")));
    CHECK_FALSE(sass_runs_on(sm("sm_86"), cc("8.0")));
    CHECK_FALSE(sass_runs_on(sm("sm_80"), cc("9.0")));
    CHECK_FALSE(sass_runs_on(sm("sm_90"), cc("12.0")));
    CHECK(sass_runs_on(sm("sm_120"), cc("12.1")));
    CHECK(sass_runs_on(sm("sm_100"), cc("10.3")));
    CHECK_FALSE(sass_runs_on(sm("sm_100"), cc("11.0")));  // Thor is its own major
}

TEST_CASE("kernels: a targets run on exactly their cc, f targets on their family") {
    CHECK(sass_runs_on(sm("sm_90a"), cc("9.0")));
    CHECK(sass_runs_on(sm("sm_100a"), cc("10.0")));
    CHECK_FALSE(sass_runs_on(sm("sm_100a"), cc("10.3")));
    CHECK(sass_runs_on(sm("sm_100f"), cc("10.3")));
    CHECK_FALSE(sass_runs_on(sm("sm_103f"), cc("10.0")));
    CHECK(sass_runs_on(sm("sm_120f"), cc("12.1")));
    CHECK_FALSE(sass_runs_on(sm("sm_100f"), cc("12.0")));

    CHECK(ptx_jits_to(compute("compute_80"), cc("12.0")));
    CHECK(ptx_jits_to(compute("compute_80"), cc("8.0")));
    CHECK_FALSE(ptx_jits_to(compute("compute_90"), cc("8.9")));
    CHECK(ptx_jits_to(compute("compute_120a"), cc("12.0")));
    CHECK_FALSE(ptx_jits_to(compute("compute_120a"), cc("12.1")));
    CHECK_FALSE(ptx_jits_to(compute("compute_90a"), cc("10.0")));
    CHECK(ptx_jits_to(compute("compute_100f"), cc("10.3")));
    CHECK_FALSE(ptx_jits_to(compute("compute_100f"), cc("12.0")));
    CHECK_FALSE(ptx_jits_to(compute("compute_103f"), cc("10.0")));
}

TEST_CASE("kernels: a failure names the object, what it has and what the GPU needs") {
    auto v =
        judge_kernels("flash_attn_2_cuda.so", images({"sm_80", "sm_90"}), gpu("RTX 5090", "12.0"));
    CHECK(v.how == KernelRun::no_image);
    CHECK_FALSE(v.runs());
    CHECK(v.message ==
          "flash_attn_2_cuda.so has sm_80, sm_90; RTX 5090 needs sm_120 or PTX <= compute_120");

    auto b300 = judge_kernels("x.so", images({"sm_90", "sm_100a"}), gpu("", "10.3"));
    CHECK(b300.message ==
          "x.so has sm_90, sm_100a; a GPU of compute capability 10.3 needs sm_100 to sm_103 or "
          "PTX <= compute_103 (sm_100a runs only on 10.0)");

    auto spark = judge_kernels("y.so", images({}, {"compute_100f"}), gpu("DGX Spark", "12.1"));
    CHECK(spark.message ==
          "y.so has compute_100f (PTX ISA 8.4); DGX Spark needs sm_120 or sm_121 or PTX <= "
          "compute_121 (compute_100f JIT-compiles only for 10.x)");
}

TEST_CASE("kernels: SASS is preferred; PTX is JIT-compiled when no SASS fits") {
    auto sass = judge_kernels("t.so", images({"sm_80", "sm_86", "sm_90"}, {"compute_90"}),
                              gpu("A10", "8.6"));
    CHECK(sass.how == KernelRun::sass);
    CHECK(sass.image == "sm_86");
    CHECK(sass.message == "t.so runs on A10 with sm_86");

    auto jit = judge_kernels("t.so", images({"sm_80", "sm_90"}, {"compute_80", "compute_90"}),
                             gpu("RTX 5090", "12.0"));
    CHECK(jit.how == KernelRun::ptx_jit);
    CHECK(jit.image == "compute_90 (PTX ISA 8.4)");
    CHECK(jit.runs());

    GpuTarget old_driver = gpu("RTX 5090", "12.0");
    old_driver.max_ptx_isa = PtxIsa{8, 0};
    auto too_new = judge_kernels("t.so", images({"sm_80"}, {"compute_90"}), old_driver);
    CHECK(too_new.how == KernelRun::no_image);
    CHECK_THAT(too_new.message,
               ContainsSubstring("compute_90 is PTX ISA 8.4, newer than the driver's 8.0"));

    auto nothing = judge_kernels("libc10.so", KernelImages{}, gpu("H100", "9.0"));
    CHECK(nothing.how == KernelRun::no_kernels);
    CHECK(nothing.message == "libc10.so carries no GPU code");
}

TEST_CASE("kernels: containers without an image are counted although the object runs") {
    std::vector<ContainerProfile> profiles{
        {images({"sm_80", "sm_120"}), 5}, {images({"sm_90a"}), 2}, {KernelImages{}, 1}};
    auto v = judge_kernels("z.so", images({"sm_80", "sm_90a", "sm_120"}), gpu("RTX 5090", "12.0"),
                           profiles);
    CHECK(v.how == KernelRun::sass);
    CHECK(v.containers_judged == 7);
    CHECK(v.containers_without_image == 2);
    CHECK(v.containers_complete);
    CHECK(v.message == "z.so runs on RTX 5090 with sm_120");
}

TEST_CASE("kernels: the family fixture judged for several GPUs") {
    const std::string bytes = td::test::kernels::read_fixture("family.o");
    MemoryByteSource src(bytes.data(), bytes.size());
    auto k = audit_object(src);
    auto on = [&](const char* c) { return judge_kernels("family.o", k.runnable(), gpu("", c)); };
    CHECK(on("9.0").image == "sm_90a");
    CHECK(on("10.0").image == "sm_100f");
    CHECK(on("10.3").image == "sm_100f");
    CHECK(on("12.0").image == "sm_120f");
    CHECK(on("12.1").image == "sm_120f");
    CHECK(on("8.9").how == KernelRun::no_image);
    CHECK(on("11.0").how == KernelRun::no_image);
    CHECK_THAT(on("8.9").message, ContainsSubstring("needs sm_80 to sm_89 or PTX <= compute_89"));
}
