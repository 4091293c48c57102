#include "core/validate/waivers.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

CheckResult result(const std::string& id, const std::string& status) {
    CheckResult r;
    r.id = id;
    r.name = check_info(id).name;
    r.status = status;
    r.message = status + " message";
    return r;
}

}  // namespace

TEST_CASE("waivers: a fail or warn becomes waived with its outcome and reason kept") {
    std::vector<CheckResult> rs = {result("TD130", "fail"), result("TD131", "warn"),
                                   result("TD101", "fail")};
    auto notes = apply_waivers(rs, {{"TD130", "ipc=host", "--waive"},
                                    {"TD131", "CI hides GPUs", "settings"},
                                    {"TD130", "later source loses", "manifest manifests/a.json"}});
    CHECK(notes.empty());
    CHECK(rs[0].status == "waived");
    CHECK(rs[0].outcome == "fail");
    CHECK(rs[0].waiver_reason == "ipc=host");
    CHECK(rs[0].waiver_source == "--waive");
    CHECK(rs[1].status == "waived");
    CHECK(rs[1].outcome == "warn");
    CHECK(rs[1].waiver_source == "settings");
    CHECK(rs[2].status == "fail");  // not waived: untouched
    CHECK(rs[2].outcome.empty());
}

TEST_CASE("waivers: a waiver that changes nothing is never silent") {
    std::vector<CheckResult> rs = {result("TD130", "pass"), result("TD101", "error"),
                                   result("TD131", "skip")};
    auto notes = apply_waivers(rs, {{"TD130", "r", "--waive"},
                                    {"TD101", "r", "settings"},
                                    {"TD131", "r", "manifest manifests/a.json"},
                                    {"TD145", "r", "--waive"}});
    REQUIRE(notes.size() == 4);
    CHECK_THAT(notes[0], ContainsSubstring("TD130 (--waive) not used: the check passed"));
    CHECK_THAT(notes[1], ContainsSubstring("could not be judged"));
    CHECK(rs[1].status == "error");  // missing evidence stays an error
    CHECK_THAT(notes[2], ContainsSubstring("was skipped"));
    CHECK_THAT(notes[3], ContainsSubstring("TD145 (--waive) not used: the check did not run"));
    for (const auto& r : rs) CHECK(r.status != "waived");
}

TEST_CASE("waivers: unknown, non-waivable, reasonless and multi-line waivers are refused") {
    CHECK_THAT(waiver_problem("TD13", "r"), ContainsSubstring("is not a check ID"));
    CHECK_THAT(waiver_problem("TD1300", "r"), ContainsSubstring("did you mean TD130?"));
    CHECK_THAT(waiver_problem("TD112", "r"),
               ContainsSubstring("TD112 (files.intact) is not waivable"));
    CHECK_THAT(waiver_problem("TD127", "r"), ContainsSubstring("not waivable"));
    CHECK_THAT(waiver_problem("TD130", ""), ContainsSubstring("has no reason"));
    CHECK_THAT(waiver_problem("TD130", "a\nLABEL x=y"), ContainsSubstring("TD130"));
    CHECK(waiver_problem("TD130", "jobs run with --ipc=host") == "");
    std::string error;
    CHECK(parse_waiver("TD130=ok", "--waive", error).reason == "ok");
    CHECK(error.empty());
    parse_waiver("TD130", "--waive", error);
    CHECK_THAT(error, ContainsSubstring("is not ID=reason"));
    parse_waiver("TD130=", "--waive", error);
    CHECK_THAT(error, ContainsSubstring("has no reason"));
}

TEST_CASE("waivers: image labels io.torchdock.waive.ID are the vendor's claims, each noted") {
    auto notes = image_waiver_claims({{"io.torchdock.waive.TD130", "ipc=host"},
                                      {"io.torchdock.waive.TD112", "tampering is fine"},
                                      {"io.torchdock.waive.TD999", "x"},
                                      {"io.torchdock.cuda", "12.4"}});
    REQUIRE(notes.size() == 3);
    for (const auto& n : notes) CHECK_THAT(n, ContainsSubstring("not applied"));
    CHECK_THAT(notes[0], ContainsSubstring("TD112"));
}
