// What the image says is a claim; what torchdock read of its files is evidence (issue 33):
// the platform from the files, TD119 backed by probe-record's inspection, the files-only tier
// judged on files, and waivers that neither the image nor a repository can use against the
// user's own --expect.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/validate/checks.hpp"
#include "core/validate/platform.hpp"
#include "core/validate/probe_plan.hpp"
#include "core/validate/waivers.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;
using json = nlohmann::json;

namespace {

using test::ran;

json elf_file(const std::string& path, const std::string& elf, bool cpython) {
    return {{"path", path},      {"exists", true}, {"realpath", path},
            {"type", "regular"}, {"elf", elf},     {"cpython", cpython}};
}

// A torch probe answer as a fake interpreter could print it.
json torch_answer(const std::string& exe, const std::string& file) {
    return {
        {"torch", "2.9.1+cu128"}, {"cuda", "12.8"},
        {"python", "3.11.2"},     {"python_executable", exe},
        {"torch_file", file},     {"site_dirs", json::array({"/usr/lib/python3/dist-packages"})}};
}

json record_with(const json& inspected, const json& distributions = json::array()) {
    return {{"site_dirs", json::array({"/usr/lib/python3/dist-packages"})},
            {"distributions", distributions},
            {"files", 0},
            {"inspected", inspected}};
}

const std::string k_file = "/venv/lib/python3.11/site-packages/torch/__init__.py";

}  // namespace

TEST_CASE("files_platform: the python PATH runs decides, a #! script followed; else the shell") {
    json env = {{"python",
                 {{"python3",
                   {{"path", "/usr/bin/python3"},
                    {"identity", elf_file("/usr/bin/python3.11", "x86_64/64", true)}}},
                  {"python", nullptr}}},
                {"shell", elf_file("/bin/dash", "aarch64/64", false)}};
    auto p = files_platform(env);
    CHECK(p.machine == "x86_64");
    CHECK_THAT(p.evidence, ContainsSubstring("/usr/bin/python3.11"));
    // A script at python3 whose program is an aarch64 ELF: the program's machine.
    env["python"]["python3"]["identity"] = {
        {"path", "/usr/bin/python3"},
        {"exists", true},
        {"type", "regular"},
        {"shebang", "#!/opt/py/bin/python3.12"},
        {"runs", elf_file("/opt/py/bin/python3.12", "aarch64/64", true)}};
    CHECK(files_platform(env).machine == "aarch64");
    // No python at all: the shell says it.
    env["python"] = {{"python3", nullptr}, {"python", nullptr}};
    p = files_platform(env);
    CHECK(p.machine == "aarch64");
    CHECK_THAT(p.evidence, ContainsSubstring("its shell"));
    CHECK(files_platform(json::object()).machine.empty());
    CHECK(files_platform(json("garbage")).machine.empty());
}

TEST_CASE("platform_claim_problem: the config's architecture is a claim the files can refute") {
    FilesPlatform x86{"x86_64", "/usr/bin/python3.11 (the `python3` PATH runs) is an x86_64 ELF"};
    CHECK(platform_claim_problem("amd64", x86).empty());
    CHECK(platform_claim_problem("AMD64", x86).empty());
    CHECK(platform_claim_problem("", x86).empty());
    CHECK(platform_claim_problem("s390x", FilesPlatform{}).empty());
    const std::string p = platform_claim_problem("riscv64", x86);
    CHECK_THAT(p, ContainsSubstring("config says linux/riscv64"));
    CHECK_THAT(p, ContainsSubstring("linux/amd64"));
    CHECK_THAT(p, ContainsSubstring("/usr/bin/python3.11"));
    CHECK(platform_claim_problem("s390x", FilesPlatform{"s390", "x"}).empty());
    CHECK(oci_arch_of_elf("aarch64") == "arm64");
    CHECK(oci_arch_of_elf("ppc64") == "ppc64le");
}

TEST_CASE("TD132 fails when the config claims another platform than the files are built for") {
    ValidationInput in;
    in.platform = "linux/amd64";
    in.platform_problem =
        "the image config says linux/arm64, but its files are built for "
        "linux/amd64 (/bin/dash (its shell) is an x86_64 ELF)";
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD132").status == "fail");
    CHECK_THAT(test::check_of(r, "TD132").message, ContainsSubstring("config says linux/arm64"));
}

TEST_CASE("TD119: a torch answer passes only where probe-record's reading of the files backs it") {
    ValidationInput in;
    in.probes["torch"] = ran("torch", torch_answer("/usr/bin/python3", k_file));
    SECTION("a real interpreter and a torch file its RECORD lists: pass") {
        in.probes["record"] = ran(
            "record",
            record_with(json::array(
                {elf_file("/usr/bin/python3", "x86_64/64", true),
                 {{"path", k_file},
                  {"exists", true},
                  {"type", "regular"},
                  {"record",
                   {{"dist", "torch 2.9.1+cu128"}, {"dist_info", "/x"}, {"verified", true}}}}})));
        auto r = evaluate(in, test::real_kb());
        CHECK(test::check_of(r, "TD119").status == "pass");
        CHECK_THAT(test::check_of(r, "TD119").message, ContainsSubstring("RECORD"));
    }
    SECTION("a shell script at the interpreter's path: fail, whatever it printed") {
        json script = {{"path", "/usr/bin/python3"},
                       {"exists", true},
                       {"type", "regular"},
                       {"shebang", "#!/bin/sh"},
                       {"runs", elf_file("/bin/dash", "x86_64/64", false)}};
        in.probes["record"] = ran(
            "record", record_with(json::array({script, {{"path", k_file}, {"exists", false}}})));
        auto r = evaluate(in, test::real_kb());
        CHECK(test::check_of(r, "TD119").status == "fail");
        CHECK_THAT(test::check_of(r, "TD119").message, ContainsSubstring("#!/bin/sh"));
        CHECK_THAT(test::check_of(r, "TD119").message,
                   ContainsSubstring("not a CPython interpreter"));
    }
    SECTION("a real interpreter but a torch.__file__ that is not in the image: fail") {
        in.probes["record"] =
            ran("record",
                record_with(json::array({elf_file("/usr/bin/python3", "x86_64/64", true),
                                         {{"path", k_file}, {"exists", false}, {"error", "x"}}})),
                "waived");
        auto r = evaluate(in, test::real_kb());
        CHECK(test::check_of(r, "TD119").status == "fail");
        CHECK_THAT(test::check_of(r, "TD119").message, ContainsSubstring("torch.__file__"));
    }
    SECTION("a torch file no RECORD lists and no egg-info ties: fail") {
        in.probes["record"] =
            ran("record", record_with(json::array({elf_file("/usr/bin/python3", "x86_64/64", true),
                                                   {{"path", k_file},
                                                    {"exists", true},
                                                    {"type", "regular"},
                                                    {"record", nullptr},
                                                    {"egg_info", nullptr}}})));
        CHECK(test::check_of(evaluate(in, test::real_kb()), "TD119").status == "fail");
    }
    SECTION("an OS package's torch: its egg-info ties the file") {
        in.probes["record"] =
            ran("record",
                record_with(json::array(
                    {elf_file("/usr/bin/python3", "x86_64/64", true),
                     {{"path", k_file},
                      {"exists", true},
                      {"type", "regular"},
                      {"record", nullptr},
                      {"egg_info", "/usr/lib/python3/dist-packages/torch-1.13.egg-info"}}})),
                "waived");
        auto r = evaluate(in, test::real_kb());
        CHECK(test::check_of(r, "TD119").status == "pass");
        CHECK_THAT(test::check_of(r, "TD119").message, ContainsSubstring("egg-info"));
    }
    SECTION("no probe-record answer: not judged, never a pass") {
        CHECK(test::check_of(evaluate(in, test::real_kb()), "TD119").status == "error");
    }
}

TEST_CASE("probe plan: probe-record inspects the interpreter and torch.__file__, in its site dir") {
    ProbeRun torch = ran("torch", torch_answer("/usr/bin/python3", k_file));
    auto flags = dynamic_probe_flags("record", &torch, nullptr, test::real_kb(), "");
    std::string all;
    for (const auto& f : flags) all += f + " ";
    CHECK_THAT(all, ContainsSubstring("--inspect=/usr/bin/python3," + k_file));
    CHECK_THAT(all, ContainsSubstring("/venv/lib/python3.11/site-packages"));
    // the site dir torch was imported from: another torch elsewhere is listed, not hashed
    CHECK_THAT(all, ContainsSubstring("--imported=torch@/venv/lib/python3.11/site-packages "));
}

TEST_CASE("TD112: a torch this python does not import is named, not counted as checked") {
    ValidationInput in;
    json dists = json::array(
        {{{"name", "torch"},
          {"version", "2.9.1"},
          {"dist_info", "/opt/pkgs/torch-2.9.1.dist-info"},
          {"problems", json::array()}},
         {{"name", "torch"},
          {"version", "2.9.1"},
          {"dist_info", "/app/.venv/lib/python3.11/site-packages/torch-2.9.1.dist-info"},
          {"shadowed_by", "/opt/pkgs"},
          {"problems", json::array()}}});
    json data = record_with(json::array(), dists);
    data["files"] = 12000;
    data["hashed_bytes"] = 1LL << 31;
    in.probes["record"] = ran("record", data);
    auto td112 = test::check_of(evaluate(in, test::real_kb()), "TD112");
    CHECK(td112.status == "pass");
    CHECK_THAT(td112.observed, ContainsSubstring("12000 files, 2048 MiB"));
    CHECK_THAT(td112.observed,
               ContainsSubstring("torch 2.9.1 in /app/.venv/lib/python3.11/site-packages (not "
                                 "read: this python imports torch from /opt/pkgs)"));
}

TEST_CASE("files-only tier: no torch files fails TD119, labels or not; torch files skip it") {
    ValidationInput in;
    in.files_only_reason = "--files-only: the image's files are read, none of its code is run";
    in.expect = {{"torch", "2.9.1"}, {"cuda", "12.8"}, {"source", "image labels"}};
    in.probes["record"] = ran("record", record_with(json::array()), "waived");
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD119").status == "fail");
    CHECK_THAT(test::check_of(r, "TD119").message, ContainsSubstring("no torch files"));
    in.expect.clear();
    CHECK(test::check_of(evaluate(in, test::real_kb()), "TD119").status == "fail");
    // No python at all: probe-record had no directory to read; no torch, a failure.
    in.probes.erase("record");
    r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD119").status == "fail");
    CHECK_THAT(test::check_of(r, "TD119").message, ContainsSubstring("no python interpreter"));
    in.probes["record"] =
        ran("record",
            record_with(json::array(), json::array({{{"name", "torch"},
                                                     {"version", "2.9.1"},
                                                     {"dist_info", "/x/torch-2.9.1.dist-info"},
                                                     {"files", 10},
                                                     {"problems", json::array()}}})));
    r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD119").status == "skip");
    CHECK_THAT(test::check_of(r, "TD119").message, ContainsSubstring("torch's files are there"));
}

TEST_CASE(
    "waivers: the image's labels are claims, never applied; the user's --expect is unwaivable") {
    auto notes = image_waiver_claims(
        {{"io.torchdock.waive.TD101", "accepted by the vendor"}, {"io.torchdock.cuda", "12.8"}});
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], ContainsSubstring("not applied"));
    CHECK_THAT(notes[0], ContainsSubstring("io.torchdock.waive.TD101"));

    ValidationInput in;
    in.expect = {{"cuda", "12.8"}, {"source", "--expect"}};
    in.user_expect_keys = {"cuda"};
    in.probes["cuda"] = ran("cuda", {{"runtime_version", 13000}}, "waived");
    auto r = evaluate(in, test::real_kb());
    REQUIRE(test::check_of(r, "TD101").status == "fail");
    CHECK(test::check_of(r, "TD101").user_expectations == std::vector<std::string>{"cuda"});
    auto unused = apply_waivers(r, {{"TD101", "we know", "--waive"}});
    CHECK(test::check_of(r, "TD101").status == "fail");
    REQUIRE(unused.size() == 1);
    CHECK_THAT(unused[0], ContainsSubstring("your own --expect cuda"));
    // The same failure from the image's own label is the user's to waive.
    in.user_expect_keys.clear();
    r = evaluate(in, test::real_kb());
    apply_waivers(r, {{"TD101", "we know", "--waive"}});
    CHECK(test::check_of(r, "TD101").status == "waived");
    CHECK(waiver_given_by_user({"TD101", "x", "--waive"}));
    CHECK_FALSE(waiver_given_by_user({"TD101", "x", "manifest manifests/a.json"}));
}

TEST_CASE("waivers: a reason of blanks is no reason") {
    CHECK_THAT(waiver_problem("TD130", " "), ContainsSubstring("has no reason"));
    CHECK_THAT(waiver_problem("TD130", "\t "), ContainsSubstring("has no reason"));
    CHECK(waiver_problem("TD130", "runs with --ipc=host").empty());
}
