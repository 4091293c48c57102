#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/knowledge/knowledge_base.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {}  // namespace

TEST_CASE("torch 2.1.2 with cu124 is refused, naming the variants that exist") {
    auto e = test::refusal(test::matrix_manifest(
        "nvidia-cuda",
        R"({"torch": ["2.1.2"], "cuda": ["cu124"], "flavor": ["runtime"], "os": ["ubuntu22.04"]})"));
    CHECK_THAT(e, ContainsSubstring("$.matrix.cuda[0]: torch 2.1.2 has no cu124 wheels; published "
                                    "variants: cu118, cu121, cpu"));
    CHECK_THAT(e, ContainsSubstring("cu124 wheels exist for torch 2.4.0"));
}

TEST_CASE("Python 3.13 with torch 2.3 is refused") {
    // Stated explicitly...
    auto e = test::refusal(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.3.1"], "cuda": ["cu121"], "os": ["ubuntu22.04"]})",
        R"(, "python": "3.13")"));
    CHECK_THAT(e, ContainsSubstring(
                      "$.python: torch 2.3.1 publishes wheels for Python 3.8 to 3.12, not 3.13"));
    CHECK_THAT(e, ContainsSubstring("the first torch with Python 3.13 wheels is 2.5.0"));
    // ...and implied by an OS whose Python is 3.13.
    e = test::refusal(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.3.1"], "cuda": ["cpu"], "os": ["debian13"]})"));
    CHECK_THAT(e, ContainsSubstring("$.matrix.os[0]: torch 2.3.1 publishes wheels for Python 3.8 "
                                    "to 3.12, not 3.13 (the Python of this base image)"));
}

TEST_CASE("a Python that is not the OS Python is refused with the OSes that have it") {
    auto e = test::refusal(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.4.1"], "cuda": ["cu121"], "os": ["ubuntu22.04"]})",
        R"(, "python": "3.11")"));
    CHECK_THAT(e, ContainsSubstring("Python 3.11 is not the Python of this base (3.10)"));
    CHECK_THAT(e, ContainsSubstring("choose an OS with Python 3.11: debian12"));
    // nvidia/cuda has Ubuntu images only, so no Debian is suggested there.
    e = test::refusal(test::matrix_manifest(
        "nvidia-cuda",
        R"({"torch": ["2.4.1"], "cuda": ["cu121"], "flavor": ["runtime"], "os": ["ubuntu22.04"]})",
        R"(, "python": "3.11")"));
    CHECK_THAT(e, ContainsSubstring("set \"python\": \"3.10\"\n"));
}

TEST_CASE("sm_120 with cu124 wheels is refused") {
    auto e = test::refusal(test::matrix_manifest(
        "nvidia-cuda",
        R"({"torch": ["2.5.1"], "cuda": ["cu124"], "flavor": ["runtime"], "os": ["ubuntu22.04"]})",
        R"(, "target_gpus": ["RTX 5090"])"));
    CHECK_THAT(e,
               ContainsSubstring("$.target_gpus[0]: CUDA 12.4 does not support RTX 5090 (sm_120): "
                                 "it targets sm_50 to sm_90; sm_120 needs CUDA 12.8 or newer"));
}

TEST_CASE("a V100 with CUDA 13 is refused") {
    auto e = test::refusal(test::matrix_manifest(
        "nvidia-cuda",
        R"({"torch": ["2.9.1"], "cuda": ["cu130"], "flavor": ["runtime"], "os": ["ubuntu24.04"]})",
        R"(, "target_gpus": ["V100"])"));
    CHECK_THAT(
        e, ContainsSubstring(
               "$.target_gpus[0]: CUDA 13.0 does not support V100 (sm_70): it targets sm_75 to "
               "sm_121; sm_70 needs CUDA 11.6 or newer; the last CUDA that supports it is 12.9"));
}

TEST_CASE("an NGC tag that does not exist is refused") {
    auto e = test::refusal(test::matrix_manifest("ngc", R"({"ngc": ["24.13"]})"));
    CHECK_THAT(e, ContainsSubstring("$.matrix.ngc[0]: NGC PyTorch release \"24.13\" does not exist "
                                    "(no nvcr.io/nvidia/pytorch:24.13-py3)"));
}

TEST_CASE("unknown OSes and GPUs get did-you-mean; unknown torch releases say what is covered") {
    auto e = test::refusal(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.4.2"], "cuda": ["cu121"], "os": ["ubuntu22.4"]})",
        R"(, "target_gpus": ["H10"])"));
    CHECK_THAT(e, ContainsSubstring("torch \"2.4.2\" is not in the knowledge base: data/torch.json "
                                    "covers torch 1.13.0 to "));
    CHECK_THAT(e, ContainsSubstring("its 2.4 releases are 2.4.0, 2.4.1"));
    CHECK_THAT(e, ContainsSubstring("run `torchdock kb refresh`"));
    CHECK_THAT(e, !ContainsSubstring("did you mean \"2."));
    CHECK_THAT(e, ContainsSubstring("OS \"ubuntu22.4\" is not in the knowledge base"));
    CHECK_THAT(e, ContainsSubstring("did you mean \"ubuntu22.04\"?"));
    CHECK_THAT(e, ContainsSubstring("GPU model \"H10\" is not in the knowledge base"));
}

TEST_CASE("a torch release newer than the knowledge base: coverage and refresh, no did-you-mean") {
    // 2.99.0 is one edit away from 2.9.0: a plain release number is never "corrected".
    auto e = test::refusal(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.99.0"], "cuda": ["cpu"], "os": ["ubuntu22.04"]})"));
    CHECK_THAT(e,
               ContainsSubstring("torch \"2.99.0\" is not in the knowledge base: data/torch.json "
                                 "covers torch 1.13.0 to "));
    CHECK_THAT(e, ContainsSubstring("and 2.99.0 is newer; run `torchdock kb refresh`"));
    CHECK_THAT(e, !ContainsSubstring("did you mean"));
    // Text that is not a release number is a typo (the manifest grammar stops it first);
    // the knowledge base's own text then suggests the nearest release.
    e = test::refusal(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.4.l"], "cuda": ["cpu"], "os": ["ubuntu22.04"]})"));
    CHECK_THAT(e, ContainsSubstring("torch version \"2.4.l\" is not X.Y.Z"));
    std::string typo = test::real_kb().unknown_torch_text("2.11.O");
    CHECK_THAT(typo, ContainsSubstring("torch \"2.11.O\" is not a release number"));
    CHECK_THAT(typo, ContainsSubstring("did you mean \"2.11.0\"?"));
    e = test::refusal(test::matrix_manifest(
        "os-pip", R"({"torch": ["1.12.1"], "cuda": ["cpu"], "os": ["ubuntu22.04"]})"));
    CHECK_THAT(e, ContainsSubstring("torchdock renders nothing older than 1.13.0"));
}

TEST_CASE("nvidia/cuda tags that do not exist are refused") {
    auto e = test::refusal(test::matrix_manifest(
        "nvidia-cuda",
        R"({"torch": ["2.4.1"], "cuda": ["cu118"], "flavor": ["runtime"], "os": ["ubuntu24.04"]})"));
    CHECK_THAT(e, ContainsSubstring("nvidia/cuda has no CUDA 11.8 tags for ubuntu24.04; it has "
                                    "them for: ubuntu18.04, ubuntu20.04, ubuntu22.04"));
    e = test::refusal(test::matrix_manifest(
        "nvidia-cuda-cudnn",
        R"({"torch": ["2.4.1"], "cuda": ["cpu"], "flavor": ["runtime"], "os": ["ubuntu22.04"]})"));
    CHECK_THAT(e, ContainsSubstring("cpu wheels need base \"os-pip\""));
}

TEST_CASE("expectations that contradict the knowledge base are refused") {
    auto e = test::refusal(test::matrix_manifest(
        "nvidia-cuda",
        R"({"torch": ["2.1.2"], "cuda": ["cu121"], "flavor": ["runtime"], "os": ["ubuntu22.04"]})",
        R"(, "expect": {"cudnn_major": 9, "nccl": "2.20.5"})"));
    CHECK_THAT(e, ContainsSubstring("$.expect.cudnn_major: expected cuDNN 9, but "
                                    "t-2.1.2-cu121-runtime-ubuntu22.04 loads cuDNN 8.9.2.26"));
    CHECK_THAT(e, ContainsSubstring("$.expect.nccl: expected NCCL 2.20.5"));
}

TEST_CASE("excluded cells are skipped, valid ones resolve fully") {
    auto plan = test::plan_one(test::matrix_manifest(
        "nvidia-cuda-cudnn",
        R"({"torch": ["2.1.2", "2.4.1"], "cuda": ["cu121", "cu124"], "flavor": ["devel"], "os": ["ubuntu22.04"],
            "exclude": [{"torch": "2.1.2", "cuda": "cu124"}]})",
        R"(, "target_gpus": ["A100", "H100"])"));
    REQUIRE(test::problems_text(plan).empty());
    REQUIRE(plan.variants.size() == 3);
    const Variant& v = plan.variants.back();
    CHECK(v.name == "t-2.4.1-cu124-devel-ubuntu22.04");
    CHECK(v.base_ref == "nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04");
    CHECK(v.min_driver == "550.54.15");
    CHECK(v.min_driver_compat == "525.60.13");
    CHECK(v.cudnn == "9.1.0.70");
    CHECK(plan.variants[0].base_ref == "nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04");
}

TEST_CASE("a GPU the wheels' arch list cannot run is refused, naming variants that can") {
    auto e = test::refusal(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.9.1"], "cuda": ["cu128"], "os": ["ubuntu24.04"]})",
        R"(, "target_gpus": ["P100"])"));
    // 2.9.1's arch list was read from its wheel's binaries (kb refresh --arch-lists).
    CHECK_THAT(e, ContainsSubstring("$.matrix.cuda[0]: torch 2.9.1+cu128 wheels are built for 7.0, "
                                    "7.5, 8.0, 8.6, 9.0, 10.0, 12.0, which cannot run on P100 "
                                    "(sm_60); variants of torch 2.9.1 that do: cu126"));
    // 2.9.0's comes from RELEASE.md, not the binaries: the refusal says so.
    auto old = test::refusal(test::matrix_manifest(
        "os-pip", R"({"torch": ["2.9.0"], "cuda": ["cu128"], "os": ["ubuntu24.04"]})",
        R"(, "target_gpus": ["P100"])"));
    CHECK_THAT(old, ContainsSubstring("$.matrix.cuda[0]: torch 2.9.0+cu128 wheels are built for "
                                      "7.0, 7.5, 8.0, 8.6, 9.0, 10.0, 12.0 (unconfirmed in the "
                                      "knowledge base), which cannot run on P100 (sm_60); variants "
                                      "of torch 2.9.0 that do: cu126"));
}

TEST_CASE("arch list coverage follows cubin and PTX compatibility") {
    CHECK(arch_list_covers({"8.0"}, "8.6"));         // same major, higher minor
    CHECK_FALSE(arch_list_covers({"8.6"}, "8.0"));   // lower minor cannot run newer cubin
    CHECK_FALSE(arch_list_covers({"9.0"}, "10.0"));  // another major needs PTX
    CHECK(arch_list_covers({"9.0+PTX"}, "12.0"));    // PTX JIT on newer GPUs
    CHECK_FALSE(arch_list_covers({"9.0+PTX"}, "8.0"));
}
