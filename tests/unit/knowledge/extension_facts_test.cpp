// data/extensions.json: read strictly (every value that can reach a Dockerfile comment or a
// message is checked), and written back by `kb refresh --extensions` to the same facts.
#include "core/knowledge/extension_facts.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "engine/files.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

std::string real_text() {
    auto text = engine::read_text_file(test::source_path("data/extensions.json"));
    REQUIRE(text);
    return text.value();
}

std::string refusal(std::string text, const std::string& from, const std::string& to) {
    auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    auto facts = parse_extension_facts(text);
    REQUIRE_FALSE(facts);
    return facts.error().message;
}

}  // namespace

TEST_CASE("the bundled extension facts load and round-trip through the writer") {
    auto facts = parse_extension_facts(real_text());
    REQUIRE(facts);
    const ExtensionInfo* xf = facts->find("xformers");
    REQUIRE(xf);
    const ExtensionRelease* r = xf->release("0.0.33.post2");
    REQUIRE(r);
    CHECK(r->requires_torch == "==2.9.1");
    REQUIRE_FALSE(r->objects.empty());
    CHECK(r->objects[0].path == "xformers/_C.so");
    CHECK(extension_facts_text(facts.value()) == real_text());
}

TEST_CASE("damaged extension facts are refused naming the JSON path") {
    std::string text = real_text();
    CHECK_THAT(
        refusal(text, "\"requires_torch\": \"==2.9.1\"", "\"requires_torch\": \"==2.9.1\\n\""),
        ContainsSubstring("requires_torch"));
    CHECK_THAT(refusal(text, "\"xformers/_C.so\"", "\"../../etc/passwd\""),
               ContainsSubstring(".objects[0].path"));
    CHECK_THAT(refusal(text, "\"sm_75\"", "\"sm_75; rm\""), ContainsSubstring("targets[0]"));
    CHECK_THAT(refusal(text, "\"schema\": 1", "\"schema\": 2"), ContainsSubstring("schema"));
    CHECK_THAT(refusal(text, "\"name\": \"xformers\"", "\"name\": \"XFormers\""),
               ContainsSubstring("not a normalized name"));
}

TEST_CASE("the pip toolkits load, round-trip, and damaged ones are refused by JSON path") {
    auto facts = parse_extension_facts(real_text());
    REQUIRE(facts);
    const PipToolkit* tk = facts->toolkit("13.0");
    REQUIRE(tk);
    CHECK(tk->home == "nvidia/cu13");
    CHECK(tk->packages.front() == "nvidia-cuda-nvcc==13.0.88");
    CHECK_THAT(tk->source, ContainsSubstring("PyPI cuda-toolkit 13.0.2"));
    CHECK(facts->toolkit("12.8") == nullptr);
    REQUIRE(facts->no_toolkit("12"));
    CHECK_THAT(facts->no_toolkit("12")->source, ContainsSubstring("no bin/nvcc"));
    CHECK(extension_facts_text(facts.value()) == real_text());

    const std::string text = real_text();
    CHECK_THAT(refusal(text, "\"home\": \"nvidia/cu13\"", "\"home\": \"../../etc\""),
               ContainsSubstring("$.pip_toolkits[0].home"));
    CHECK_THAT(refusal(text, "\"cuda\": \"13.0\"", "\"cuda\": \"13\""),
               ContainsSubstring("$.pip_toolkits[0].cuda"));
    CHECK_THAT(refusal(text, "\"nvidia-cuda-nvcc==13.0.88\"", "\"nvidia-cuda-nvcc>=13\""),
               ContainsSubstring("$.pip_toolkits[0].packages[0]"));
    CHECK_THAT(refusal(text, "\"cuda_major\": \"12\"", "\"cuda_major\": \"12.8\""),
               ContainsSubstring("$.no_pip_toolkit[0].cuda_major"));
}
