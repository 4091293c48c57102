#include "core/render/manifest.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

std::string parse_errors(const std::string& text) {
    Diagnostics diags("m.json");
    auto m = parse_manifest("m.json", text, diags);
    std::string out;
    for (const auto& d : diags.items()) out += format_diagnostic(d) + "\n";
    if (m) CHECK(out.empty());
    return out;
}

const char* k_valid = R"({
  "schema": 1,
  "name": "fam",
  "image": "torchdock/fam",
  "base": "nvidia-cuda",
  "matrix": {"torch": ["2.4.1"], "cuda": ["cu121"], "flavor": ["runtime"], "os": ["ubuntu22.04"]},
  "pip": ["numpy==1.26.4"],
  "user": {"name": "trainer"},
  "env": {"A": "1"}
})";

}  // namespace

TEST_CASE("a valid manifest parses into the model") {
    Diagnostics diags("m.json");
    auto m = parse_manifest("m.json", k_valid, diags);
    REQUIRE(m);
    CHECK(m->name == "fam");
    CHECK(m->base == BaseKind::NvidiaCuda);
    CHECK(m->cuda == std::vector<std::string>{"cu121"});
    CHECK(m->user->uid == 1000);
    CHECK(m->user->gid == 1000);
    CHECK(m->sha256.size() == 64);
    CHECK(m->pos_of("$.matrix.cuda[0]").line == 6);
}

TEST_CASE("unknown keys get a did-you-mean with file:line:col and JSON path") {
    std::string e = parse_errors(R"({
  "schema": 1, "name": "fam", "image": "torchdock/fam", "base": "nvidia-cuda",
  "matrix": {"torch": ["2.4.1"], "cuda": ["cu121"], "flavour": ["runtime"], "os": ["ubuntu22.04"]},
  "targt_gpus": ["H100"]
})");
    CHECK_THAT(
        e, ContainsSubstring(
               "m.json:3:53: $.matrix.flavour: unknown key \"flavour\"; did you mean \"flavor\"?"));
    CHECK_THAT(
        e,
        ContainsSubstring(
            "m.json:4:3: $.targt_gpus: unknown key \"targt_gpus\"; did you mean \"target_gpus\"?"));
    CHECK_THAT(e, ContainsSubstring("missing axis \"flavor\""));
}

TEST_CASE("every problem in a file is reported in one pass") {
    std::string e = parse_errors(R"({
  "schema": 2, "name": "Bad Name", "image": "torchdock/fam", "base": "nvidia-cuda",
  "matrix": {"torch": ["2.4"], "cuda": ["cuda12"], "flavor": ["slim"], "os": ["ubuntu22.04"]},
  "pip": ["numpy==1.26; curl x|sh", "torch>=2"],
  "apt": ["Git; rm -rf /"],
  "user": {"name": "root", "uid": 0},
  "env": {"BAD-NAME": "x", "OK": "line\nbreak"},
  "python": "2.7"
})");
    for (const char* want :
         {"$.schema: unsupported schema 2", "$.name: bad name", "$.matrix.torch[0]",
          "$.matrix.cuda[0]", "$.matrix.flavor[0]", "$.pip[0]", "$.pip[1]: only exact pins",
          "$.apt[0]: bad Debian package name", "$.user.name", "$.user.uid", "$.env[\"BAD-NAME\"]",
          "$.env.OK: control character \"\\n\"", "$.python"})
        CHECK_THAT(e, ContainsSubstring(want));
}

TEST_CASE("shell injection in manifest values is refused before rendering") {
    std::string base = k_valid;
    auto with_pip = [&](const std::string& pip) {
        std::string t = base;
        t.replace(t.find("\"numpy==1.26.4\""), 15, pip);
        return parse_errors(t);
    };
    CHECK_THAT(with_pip(R"("numpy==1.26; curl x|sh")"), ContainsSubstring("$.pip[0]"));
    CHECK_THAT(with_pip(R"("numpy==1.26\nRUN curl evil")"), ContainsSubstring("$.pip[0]"));
    CHECK_THAT(with_pip(R"("numpy==1.26.4", "numpy==1.26.4")"),
               ContainsSubstring("duplicate entry"));
    CHECK_THAT(
        parse_errors(
            R"({"schema":1,"name":"f","image":"Evil Image; rm","base":"ngc","matrix":{"ngc":["24.05"]}})"),
        ContainsSubstring("$.image"));
    CHECK_THAT(
        parse_errors(
            R"({"schema":1,"name":"f","image":"a/b","base":"ngc","matrix":{"ngc":["24.05"]},"description":"x\ny"})"),
        ContainsSubstring("$.description: control character"));
    CHECK_THAT(
        parse_errors(
            R"({"schema":1,"name":"f","image":"a/b","base":"ngc","matrix":{"ngc":["24.05"]},"openmpi":"4.1; id"})"),
        ContainsSubstring("$.openmpi"));
}

TEST_CASE("axes must fit the base kind") {
    CHECK_THAT(
        parse_errors(
            R"({"schema":1,"name":"f","image":"a/b","base":"ngc","matrix":{"ngc":["24.05"],"flavor":["devel"]}})"),
        ContainsSubstring("$.matrix.flavor: the \"flavor\" axis does not apply to base \"ngc\""));
    CHECK_THAT(parse_errors(R"({"schema":1,"name":"f","image":"a/b","base":"cuda","matrix":{}})"),
               ContainsSubstring("$.base: \"cuda\" is not one of"));
    CHECK_THAT(
        parse_errors(
            R"({"schema":1,"name":"f","image":"a/b","base":"debian-torch","matrix":{"os":["debian12"]},"target_gpus":["H100"]})"),
        ContainsSubstring("CPU-only"));
    CHECK_THAT(
        parse_errors(
            R"({"schema":1,"name":"f","image":"a/b","base":"ngc","matrix":{"ngc":["24.05"],"exclude":[{"ngc":"99.99"}]}})"),
        ContainsSubstring("is not a value of matrix.ngc"));
}

TEST_CASE("missing required keys and wrong types") {
    std::string e = parse_errors(R"({"name": 5, "matrix": []})");
    CHECK_THAT(e, ContainsSubstring("missing required key \"schema\""));
    CHECK_THAT(e, ContainsSubstring("$.name: expected a string, found a number"));
    CHECK_THAT(e, ContainsSubstring("$.matrix: expected an object, found an array"));
    CHECK_THAT(parse_errors("{\"schema\": 1,"), ContainsSubstring("m.json:1:14: syntax error"));
}

TEST_CASE("manifest waivers: check IDs with a reason, refused with did-you-mean and path") {
    std::string text = k_valid;
    text.insert(text.rfind('}'), R"(, "waivers": {"TD130": "jobs run with --ipc=host"})");
    Diagnostics diags("m.json");
    auto m = parse_manifest("m.json", text, diags);
    REQUIRE(m);
    CHECK(m->waivers ==
          std::vector<std::pair<std::string, std::string>>{{"TD130", "jobs run with --ipc=host"}});
    std::string bad = k_valid;
    bad.insert(bad.rfind('}'), R"(, "waivers": {"TD1300": "x", "TD112": "y", "TD131": ""})");
    std::string errors = parse_errors(bad);
    CHECK_THAT(errors, ContainsSubstring("$.waivers.TD1300: \"TD1300\" is not a check ID (did "
                                         "you mean TD130?)"));
    CHECK_THAT(errors, ContainsSubstring("$.waivers.TD112: TD112 (files.intact) is not waivable"));
    CHECK_THAT(errors, ContainsSubstring("$.waivers.TD131: the waiver of TD131 has no reason"));
}
