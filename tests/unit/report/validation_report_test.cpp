#include "report/validation_report.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <nlohmann/json.hpp>

using namespace td;
using Catch::Matchers::ContainsSubstring;
using json = nlohmann::json;

namespace {

report::ImageValidation image_in_tier(const std::string& tier, const std::string& reason) {
    report::ImageValidation v;
    v.image = "example/arm64:1";
    v.platform = "linux/arm64";
    v.tier = tier;
    v.tier_reason = reason;
    return v;
}

}  // namespace

TEST_CASE("validate reports: the reading tier and its reason in every format") {
    auto emulated = image_in_tier("emulated", "its code runs under qemu-user");
    CHECK_THAT(report::validation_table(emulated),
               ContainsSubstring("  linux/arm64 emulated: its code runs under qemu-user\n"));
    CHECK_THAT(report::validation_markdown({emulated}),
               ContainsSubstring("linux\\/arm64, emulated: its code runs under qemu\\-user"));
    json j = json::parse(report::validation_json({emulated}))["images"][0];
    CHECK(j["tier"] == "emulated");
    CHECK(j["tier_reason"] == "its code runs under qemu-user");
    CHECK(j["files_only_reason"] == "");  // only the files-only tier has one

    auto files_only = image_in_tier("files-only", "no emulation for it");
    j = json::parse(report::validation_json({files_only}))["images"][0];
    CHECK(j["tier"] == "files-only");
    CHECK(j["files_only_reason"] == "no emulation for it");
    CHECK_THAT(report::validation_table(files_only),
               ContainsSubstring("linux/arm64 files-only: no emulation for it"));

    // The full tier (the default) adds no line.
    report::ImageValidation full;
    full.image = "example/amd64:1";
    full.platform = "linux/amd64";
    CHECK(json::parse(report::validation_json({full}))["images"][0]["tier"] == "full");
    CHECK_THAT(report::validation_table(full), !ContainsSubstring("linux/amd64"));
}
