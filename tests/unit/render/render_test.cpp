#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/render/dockerfile.hpp"
#include "engine/files.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

// Set TORCHDOCK_UPDATE_GOLDEN=1 to rewrite tests/golden/ after an intended change.
TEST_CASE("rendered output matches the golden files byte for byte") {
    RenderPlan plan = test::golden_plan();
    REQUIRE(test::problems_text(plan).empty());
    REQUIRE(plan.files.size() == 3);  // the Dockerfile, its locked requirements, the index
    bool update = std::getenv("TORCHDOCK_UPDATE_GOLDEN") != nullptr;
    for (const auto& [path, text] : plan.files) {
        std::string name = path == "index.json" ? "index.json"
                           : path.ends_with("/Dockerfile")
                               ? path.substr(0, path.find('/')) + ".Dockerfile"
                               : path.substr(0, path.find('/')) + "." + k_requirements_lock;
        std::string golden_path = test::source_path("tests/golden/" + name);
        if (update) std::ofstream(golden_path, std::ios::binary) << text;
        auto golden = engine::read_text_file(golden_path);
        REQUIRE(golden);
        CHECK(golden.value() == text);
    }
}

TEST_CASE("rendering is deterministic") {
    CHECK(test::golden_plan().files == test::golden_plan().files);
}

TEST_CASE("a locked base is pinned by digest with the tag kept in a comment") {
    RenderPlan plan = test::golden_plan();
    const std::string& df = plan.files.at("golden-2.4.1-cu124-devel-ubuntu22.04/Dockerfile");
    CHECK_THAT(
        df, ContainsSubstring(
                "# base: nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04 (locked)\n"
                "FROM "
                "nvidia/"
                "cuda@sha256:1111111111111111111111111111111111111111111111111111111111111111\n"));
    CHECK_THAT(df, ContainsSubstring("org.opencontainers.image.base.digest=\"sha256:1111"));
}

TEST_CASE("torch is installed before the extra packages so changing them keeps the torch layer") {
    const std::string df =
        test::golden_plan(false).files.at("golden-2.4.1-cu124-devel-ubuntu22.04/Dockerfile");
    auto torch = df.find("torch==2.4.1+cu124");
    for (const char* s :
         {"torch==2.4.1+cu124", "git=1:2.34.1-1ubuntu1.11", "numpy==1.26.4", "LABEL"})
        REQUIRE(df.find(s) != std::string::npos);
    CHECK(torch < df.find("git=1:2.34.1-1ubuntu1.11"));
    CHECK(torch < df.find("numpy==1.26.4"));
    CHECK(df.find("numpy==1.26.4") < df.find("LABEL"));
    CHECK(df.find("torchaudio") == std::string::npos);
}

TEST_CASE("the index build arguments come after the apt layers, so another mirror keeps them") {
    // Every RUN after an ARG depends on its value (BuildKit's cache key).
    for (bool locked : {true, false}) {
        const std::string df =
            test::golden_plan(locked).files.at("golden-2.4.1-cu124-devel-ubuntu22.04/Dockerfile");
        auto arg = df.find("ARG PIP_INDEX_URL");
        auto first_pip = df.find("python -m pip install");
        REQUIRE(arg != std::string::npos);
        REQUIRE(first_pip != std::string::npos);
        CHECK(arg < first_pip);
        CHECK(df.find("ARG PIP_INDEX_URL", arg + 1) == std::string::npos);
        CHECK(df.find("apt-get install") < arg);  // the system Python's layer keeps its cache
        if (locked) CHECK(df.rfind("apt-get install") < arg);
    }
}

TEST_CASE("label and env values are literal in the Dockerfile") {
    CHECK(dockerfile_quote("a \"b\" $HOME \\x") == "\"a \\\"b\\\" \\$HOME \\\\x\"");
}

TEST_CASE("a bad lock file is reported with its path") {
    auto text = engine::read_text_file(test::source_path("tests/data/golden.json"));
    REQUIRE(text);
    auto plan = plan_render(
        {ManifestSource{"m.json", text.value(), "m.lock.json",
                        R"({"schema": 1, "images": {"nvidia/cuda:x": {"digest": "sha256:xyz"}}})"}},
        test::real_kb());
    CHECK_THAT(test::problems_text(plan),
               ContainsSubstring(
                   "m.lock.json:1:54: $.images[\"nvidia/cuda:x\"].digest: digest \"sha256:xyz\""));
    CHECK(plan.files.empty());
}

TEST_CASE("the same family name in two manifests is refused") {
    const char* m =
        R"({"schema":1,"name":"same","image":"a/b","base":"ngc","matrix":{"ngc":["24.05"]}})";
    auto plan =
        plan_render({ManifestSource{"a.json", m, {}, {}}, ManifestSource{"b.json", m, {}, {}}},
                    test::real_kb());
    CHECK_THAT(
        test::problems_text(plan),
        ContainsSubstring("b.json:1:20: $.name: family name \"same\" is already used by a.json"));
}

TEST_CASE("tree diff names missing, stale and extra files") {
    auto d = diff_tree({{"a", "1"}, {"b", "2"}}, {{"b", "3"}, {"c", "4"}});
    CHECK(d.missing == std::vector<std::string>{"a"});
    CHECK(d.changed == std::vector<std::string>{"b"});
    CHECK(d.extra == std::vector<std::string>{"c"});
}

TEST_CASE("a lock file that no longer fits its manifest is warned about, not ignored") {
    auto text = engine::read_text_file(test::source_path("tests/data/golden.json"));
    REQUIRE(text);
    auto plan = plan_render(
        {ManifestSource{"m.json", text.value(), "m.lock.json",
                        R"({"schema": 1, "images": {"debian:trixie": {"digest": "sha256:)" +
                            std::string(64, 'a') + R"("}}})"}},
        test::real_kb());
    REQUIRE(plan.problems.empty());
    std::string all;
    for (const auto& w : plan.warnings) all += format_diagnostic(w) + "\n";
    CHECK_THAT(all, ContainsSubstring("does not pin nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04"));
    CHECK_THAT(all, ContainsSubstring("pins debian:trixie, which no variant uses any more"));
}

TEST_CASE("a manifest file name with a newline and a FROM line is refused; nothing renders",
          "[regression]") {
    // Adversarial report D1: the path reached the header comment and a LABEL raw.
    auto text = engine::read_text_file(test::source_path("tests/data/golden.json"));
    REQUIRE(text);
    std::string evil = "manifests/x\nFROM debian:bookworm\nRUN echo INJECTED; id\nRUN true #.json";
    RenderPlan plan = plan_render({ManifestSource{evil, text.value(), {}, {}}}, test::real_kb());
    CHECK(plan.files.empty());
    REQUIRE_FALSE(plan.problems.empty());
    std::string shown = format_diagnostic(plan.problems.front());
    CHECK_THAT(shown, ContainsSubstring("control character"));
    CHECK(shown.find('\n') == std::string::npos);  // the name is shown escaped, on one line
    for (const char* bad : {"manifests/x\xff.json", "manifests/Upper.json", "manifests/a_b.json",
                            "manifests/.json", "manifests/x.yaml"}) {
        INFO(bad);
        CHECK(plan_render({ManifestSource{bad, text.value(), {}, {}}}, test::real_kb())
                  .files.empty());
    }
}

TEST_CASE("dockerfile_quote never writes a control byte, whatever reaches it") {
    CHECK(dockerfile_quote("a\nFROM x") == "\"a\\\\x0aFROM x\"");
    CHECK(dockerfile_quote("say \"$HOME\"\\") == "\"say \\\"\\$HOME\\\"\\\\\"");
}

TEST_CASE("a matrix whose exclude rules remove every cell is an error, not an empty family",
          "[regression]") {
    std::string manifest = R"({"schema": 1, "name": "t", "image": "torchdock/t",
        "base": "debian-torch", "matrix": {"os": ["debian12"], "exclude": [{"os": "debian12"}]}})";
    RenderPlan plan =
        plan_render({ManifestSource{"manifests/t.json", manifest, {}, {}}}, test::real_kb());
    REQUIRE_FALSE(plan.problems.empty());
    CHECK_THAT(test::problems_text(plan), ContainsSubstring("remove every cell"));
}

TEST_CASE("the problem total counts every problem, not only the 100 kept per file",
          "[regression]") {
    std::string pins;
    for (int i = 0; i < 150; ++i) pins += std::string(i ? "," : "") + "\"bad pin\"";
    std::string manifest = R"({"schema": 1, "name": "t", "image": "torchdock/t",
        "base": "debian-torch", "matrix": {"os": ["debian12"]}, "pip": [)" +
                           pins + "]}";
    RenderPlan plan =
        plan_render({ManifestSource{"manifests/t.json", manifest, {}, {}}}, test::real_kb());
    CHECK(plan.problem_count == 150);
    REQUIRE(plan.problems.size() == 101);
    CHECK_THAT(plan.problems.back().message, ContainsSubstring("and 50 more problems"));
    CHECK(plan.problems.front().pos.line > 0);
}

TEST_CASE("manifest waivers are rendered as io.torchdock.waive.ID labels, quoted") {
    auto text = engine::read_text_file(test::source_path("tests/data/golden.json"));
    REQUIRE(text);
    std::string m = text.value();
    m.insert(m.rfind('}'), R"(, "waivers": {"TD130": "jobs run with \"--ipc=host\" $X"})");
    auto plan = test::plan_one(m);
    REQUIRE(plan.problems.empty());
    bool found = false;
    for (const auto& [path, content] : plan.files)
        if (path.ends_with("/Dockerfile"))
            found = content.find(
                        "io.torchdock.waive.TD130=\"jobs run with \\\"--ipc=host\\\" "
                        "\\$X\"") != std::string::npos;
    CHECK(found);
}
