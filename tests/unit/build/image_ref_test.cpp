// Image references and mirrors (image_ref), the build index `build` reads (build_index),
// torchdock's settings file (settings) and lock files (lockfile).
#include "core/build/image_ref.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/build/build_index.hpp"
#include "core/build/settings.hpp"
#include "core/json/diagnostics.hpp"
#include "core/render/lockfile.hpp"
#include "engine/files.hpp"
#include "test_support.hpp"
#include "util/strings.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

const std::string k_digest =
    "sha256:b16cef8cbcb20935c0f052e37fc3d38dc92bfec0bcfb894c328547f81e932d67";
const std::string k_digest2 =
    "sha256:1111111111111111111111111111111111111111111111111111111111111111";

ImageRef parsed(const std::string& text) {
    auto r = ImageRef::parse(text);
    INFO(text << ": " << (r ? "" : r.error().message));
    REQUIRE(r);
    return r.value();
}

}  // namespace

// ---------------------------------------------------------------------------- ImageRef

TEST_CASE("image ref: short Docker Hub names") {
    auto r = parsed("debian:bookworm");
    CHECK(r.registry == "docker.io");
    CHECK(r.repository == "library/debian");
    CHECK(r.tag == "bookworm");
    CHECK(r.digest.empty());
    CHECK(r.str() == "debian:bookworm");
    CHECK(r.api_host() == "registry-1.docker.io");
    CHECK_FALSE(r.plain_http());

    auto cuda = parsed("nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04");
    CHECK(cuda.registry == "docker.io");
    CHECK(cuda.repository == "nvidia/cuda");
    CHECK(cuda.tag == "12.4.1-cudnn-devel-ubuntu22.04");
    CHECK(cuda.str() == "nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04");
}

TEST_CASE("image ref: a missing tag means latest, unless there is a digest") {
    auto r = parsed("debian");
    CHECK(r.tag == "latest");
    CHECK(r.str() == "debian:latest");

    auto d = parsed("debian@" + k_digest);
    CHECK(d.tag.empty());
    CHECK(d.digest == k_digest);
    CHECK(d.str() == "debian@" + k_digest);

    auto both = parsed("debian:bookworm@" + k_digest);
    CHECK(both.tag == "bookworm");
    CHECK(both.digest == k_digest);
    CHECK(both.str() == "debian:bookworm@" + k_digest);
}

TEST_CASE("image ref: explicit docker.io/library is shortened by str()") {
    auto r = parsed("docker.io/library/debian:bookworm");
    CHECK(r.registry == "docker.io");
    CHECK(r.repository == "library/debian");
    CHECK(r.str() == "debian:bookworm");
    CHECK(parsed("docker.io/nvidia/cuda:12.1.1-runtime-ubuntu22.04").str() ==
          "nvidia/cuda:12.1.1-runtime-ubuntu22.04");
}

TEST_CASE("image ref: other registries keep their host; ports are not tags") {
    auto nv = parsed("nvcr.io/nvidia/pytorch:24.01-py3");
    CHECK(nv.registry == "nvcr.io");
    CHECK(nv.repository == "nvidia/pytorch");
    CHECK(nv.tag == "24.01-py3");
    CHECK(nv.api_host() == "nvcr.io");
    CHECK_FALSE(nv.plain_http());
    CHECK(nv.str() == "nvcr.io/nvidia/pytorch:24.01-py3");

    auto local = parsed("127.0.0.1:5000/library/debian@" + k_digest);
    CHECK(local.registry == "127.0.0.1:5000");
    CHECK(local.repository == "library/debian");
    CHECK(local.tag.empty());
    CHECK(local.digest == k_digest);
    CHECK(local.api_host() == "127.0.0.1:5000");
    CHECK(local.plain_http());
    CHECK(local.str() == "127.0.0.1:5000/library/debian@" + k_digest);

    auto port_only = parsed("registry.example.com:5000/ml/golden");
    CHECK(port_only.registry == "registry.example.com:5000");
    CHECK(port_only.repository == "ml/golden");
    CHECK(port_only.tag == "latest");
    CHECK_FALSE(port_only.plain_http());
}

TEST_CASE("image ref: localhost registries are plain http") {
    auto a = parsed("localhost:5000/torch:cpu");
    CHECK(a.registry == "localhost:5000");
    CHECK(a.repository == "torch");
    CHECK(a.plain_http());
    auto b = parsed("localhost/torch:cpu");
    CHECK(b.registry == "localhost");
    CHECK(b.plain_http());
    CHECK(parsed("127.0.0.1/x:1").plain_http());
    CHECK(parsed("127.1.2.3:443/x:1").plain_http());
    CHECK_FALSE(parsed("10.0.0.1:5000/x:1").plain_http());
    CHECK_FALSE(parsed("localhost.example.com/x:1").plain_http());
}

TEST_CASE("image ref: str() round-trips through parse") {
    for (const std::string& text : std::vector<std::string>{
             "debian:bookworm", "nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04",
             "nvcr.io/nvidia/pytorch:24.01-py3", "127.0.0.1:5000/library/debian:bookworm",
             "localhost:5000/a/b/c:1.0", "debian@" + k_digest, "ghcr.io/org/img:tag@" + k_digest}) {
        INFO(text);
        auto r = parsed(text);
        CHECK(r.str() == text);
        auto again = parsed(r.str());
        CHECK(again.registry == r.registry);
        CHECK(again.repository == r.repository);
        CHECK(again.tag == r.tag);
        CHECK(again.digest == r.digest);
    }
}

TEST_CASE("image ref: invalid references are Config errors") {
    for (const std::string& text : std::vector<std::string>{
             "", "Debian:bookworm", "debian:", "debian:-x", "debian:bad tag", "debian@sha256:abc",
             "debian@" + k_digest.substr(0, 67) + "ABCD", "a b", "-debian", "debian/", "/debian",
             "bad_host:x/y:1", "host:port/x", "debian:bookworm\n"}) {
        INFO(quote_value(text));
        auto r = ImageRef::parse(text);
        CHECK_FALSE(r);
        if (!r) CHECK(r.error().kind == ErrorKind::Config);
    }
}

TEST_CASE("image ref: mirrors replace the registry and keep the rest") {
    Mirrors mirrors{{"docker.io", "127.0.0.1:5000"}, {"nvcr.io", "mirror.example.com"}};
    auto m = apply_mirrors(parsed("debian:bookworm"), mirrors);
    CHECK(m.registry == "127.0.0.1:5000");
    CHECK(m.repository == "library/debian");
    CHECK(m.tag == "bookworm");
    CHECK(m.str() == "127.0.0.1:5000/library/debian:bookworm");
    CHECK(m.plain_http());
    CHECK(m.api_host() == "127.0.0.1:5000");

    auto pinned = apply_mirrors(parsed("nvidia/cuda@" + k_digest), mirrors);
    CHECK(pinned.str() == "127.0.0.1:5000/nvidia/cuda@" + k_digest);

    auto nv = apply_mirrors(parsed("nvcr.io/nvidia/pytorch:24.01-py3"), mirrors);
    CHECK(nv.str() == "mirror.example.com/nvidia/pytorch:24.01-py3");
    CHECK_FALSE(nv.plain_http());

    // Registries without a mirror, and an empty mirror map, change nothing.
    CHECK(apply_mirrors(parsed("ghcr.io/org/img:1"), mirrors).str() == "ghcr.io/org/img:1");
    CHECK(apply_mirrors(parsed("debian:bookworm"), {}).str() == "debian:bookworm");
}

TEST_CASE("image ref: parse_mirror") {
    auto ok = parse_mirror("docker.io=127.0.0.1:5000");
    REQUIRE(ok);
    CHECK(ok->first == "docker.io");
    CHECK(ok->second == "127.0.0.1:5000");
    auto named = parse_mirror("nvcr.io=localhost:5001");
    REQUIRE(named);
    CHECK(named->second == "localhost:5001");

    for (const std::string& text : std::vector<std::string>{
             "", "docker.io", "=127.0.0.1:5000", "docker.io=", "docker.io=http://x",
             "docker.io=127.0.0.1:5000/path", "docker.io=mirror host", "docker.io=127.0.0.1:",
             "docker.io=127.0.0.1:port", "docker/io=127.0.0.1:5000", "docker.io=-bad.example"}) {
        INFO(quote_value(text));
        auto r = parse_mirror(text);
        CHECK_FALSE(r);
        if (!r) {
            CHECK(r.error().kind == ErrorKind::Usage);
            CHECK_THAT(r.error().message, ContainsSubstring("mirror"));
        }
    }
}

TEST_CASE("image ref: ports outside 1..65535 are refused in references and mirrors") {
    auto ref = ImageRef::parse("evil.com:99999999999/x");
    REQUIRE_FALSE(ref);
    CHECK(ref.error().kind == ErrorKind::Config);
    CHECK_THAT(ref.error().message, ContainsSubstring("port 99999999999 is not from 1 to 65535"));
    CHECK(parsed("evil.com:443/x").registry == "evil.com:443");
    for (const std::string& text :
         {std::string("docker.io=127.0.0.1:99999999"), std::string("docker.io=127.0.0.1:0"),
          std::string("docker.io=127.0.0.1:65536"),
          std::string("docker.io:99999=127.0.0.1:5000")}) {
        INFO(text);
        auto m = parse_mirror(text);
        REQUIRE_FALSE(m);
        CHECK(m.error().kind == ErrorKind::Usage);
        CHECK_THAT(m.error().message, ContainsSubstring("is not from 1 to 65535"));
    }
    CHECK(parse_mirror("docker.io=127.0.0.1:65535"));
}

// ------------------------------------------------------------------------- build index

namespace {

std::string index_json(const std::string& name, const std::string& image, const std::string& tag,
                       const std::string& dockerfile, const std::string& family = "cpu") {
    nlohmann::json doc = {{"schema", 1},
                          {"generator", "torchdock"},
                          {"variants",
                           {{{"name", name},
                             {"family", family},
                             {"image", image},
                             {"tag", tag},
                             {"dockerfile", dockerfile},
                             {"base", "debian:bookworm"},
                             {"extra", "ignored"}}}}};
    return doc.dump(2);
}

}  // namespace

TEST_CASE("build index: the rendered golden index parses") {
    auto text = engine::read_text_file(test::source_path("tests/golden/index.json"));
    REQUIRE(text);
    auto index = parse_build_index(text.value(), "dockerfiles/index.json");
    INFO((index ? "" : index.error().message));
    REQUIRE(index);
    REQUIRE(index->size() == 1);
    const auto& e = index->front();
    CHECK(e.name == "golden-2.4.1-cu124-devel-ubuntu22.04");
    CHECK(e.family == "golden");
    CHECK(e.image == "registry.example.com:5000/ml/golden");
    CHECK(e.tag == "2.4.1-cu124-devel-ubuntu22.04");
    CHECK(e.dockerfile == "golden-2.4.1-cu124-devel-ubuntu22.04/Dockerfile");
    CHECK(e.base == "nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04");
    CHECK(e.reference() == "registry.example.com:5000/ml/golden:2.4.1-cu124-devel-ubuntu22.04");
}

TEST_CASE("build index: several variants keep their order") {
    nlohmann::json doc = {{"schema", 1}, {"variants", nlohmann::json::array()}};
    for (const char* n : {"cpu-b", "cpu-a", "cpu-c"})
        doc["variants"].push_back({{"name", n},
                                   {"family", "cpu"},
                                   {"image", "torchdock/cpu"},
                                   {"tag", n},
                                   {"dockerfile", std::string(n) + "/Dockerfile"},
                                   {"base", "debian:bookworm"}});
    auto index = parse_build_index(doc.dump(), "index.json");
    REQUIRE(index);
    REQUIRE(index->size() == 3);
    CHECK(index.value()[0].name == "cpu-b");
    CHECK(index.value()[1].name == "cpu-a");
    CHECK(index.value()[2].name == "cpu-c");
    // An empty variant list is an empty index, not an error.
    auto empty = parse_build_index(R"({"schema": 1, "variants": []})", "index.json");
    REQUIRE(empty);
    CHECK(empty->empty());
}

TEST_CASE("build index: refuses dockerfile paths that could leave the tree") {
    for (const std::string& path :
         std::vector<std::string>{"../Dockerfile", "a/../../etc/passwd", "cpu/..", "..",
                                  "/etc/passwd", "/abs/Dockerfile", ""}) {
        INFO(quote_value(path));
        auto r = parse_build_index(index_json("cpu-1", "torchdock/cpu", "1", path),
                                   "dockerfiles/index.json");
        REQUIRE_FALSE(r);
        CHECK(r.error().kind == ErrorKind::Config);
        CHECK_THAT(r.error().message, ContainsSubstring("dockerfiles/index.json"));
        CHECK_THAT(r.error().message, ContainsSubstring("cpu-1"));
    }
}

TEST_CASE("build index: refuses bad image references and family names") {
    for (const auto& [image, tag] :
         std::vector<std::pair<std::string, std::string>>{{"Torchdock/CPU", "1"},
                                                          {"torchdock/cpu", "bad tag"},
                                                          {"torchdock/cpu", ""},
                                                          {"torchdock/cpu", "-x"},
                                                          {"torchdock/cpu; rm -rf /", "1"},
                                                          {"torchdock/cpu", "1\n--push"},
                                                          {"", "1"}}) {
        INFO(quote_value(image) << " " << quote_value(tag));
        auto r = parse_build_index(index_json("v", image, tag, "v/Dockerfile"), "index.json");
        REQUIRE_FALSE(r);
        CHECK(r.error().kind == ErrorKind::Config);
        CHECK_THAT(r.error().message, ContainsSubstring("invalid entry"));
    }
    auto fam = parse_build_index(
        index_json("v", "torchdock/cpu", "1", "v/Dockerfile", "Bad Family"), "index.json");
    REQUIRE_FALSE(fam);
    CHECK(fam.error().kind == ErrorKind::Config);
}

TEST_CASE("build index: bad JSON, schema or missing keys are Config errors") {
    for (
        const std::string& text : std::vector<std::string>{
            "", "{", "[]", R"({"schema": 2, "variants": []})", R"({"variants": []})",
            R"({"schema": 1})", R"({"schema": 1, "variants": [{"name": "x"}]})",
            R"({"schema": 1, "variants": [{"name": 1, "family": "f", "image": "i", "tag": "t", "dockerfile": "d", "base": "b"}]})"}) {
        INFO(text);
        auto r = parse_build_index(text, "dockerfiles/index.json");
        REQUIRE_FALSE(r);
        CHECK(r.error().kind == ErrorKind::Config);
        CHECK_THAT(r.error().message, ContainsSubstring("dockerfiles/index.json"));
    }
}

TEST_CASE("rewrite_from_lines rewrites FROM bases and keeps everything else byte for byte") {
    const std::string dockerfile =
        "# Rendered by torchdock\n"
        "# base: debian:bookworm (locked)\n"
        "FROM debian@" +
        k_digest +
        "\n"
        "\n"
        "SHELL [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"]\n"
        "RUN echo 'FROM debian' > /x   \n"
        "ENV A=1 \\\n    B=\"two  spaces\"\t\n"
        "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04 AS runtime\n"
        "\n\n";
    std::vector<std::string> seen;
    auto out = rewrite_from_lines(dockerfile, [&](const std::string& image) {
        seen.push_back(image);
        auto ref = ImageRef::parse(image);
        return ref ? apply_mirrors(ref.value(), {{"docker.io", "127.0.0.1:5000"}}).str() : image;
    });
    CHECK(seen ==
          std::vector<std::string>{"debian@" + k_digest, "nvidia/cuda:12.4.1-runtime-ubuntu22.04"});
    const std::string expected =
        "# Rendered by torchdock\n"
        "# base: debian:bookworm (locked)\n"
        "FROM 127.0.0.1:5000/library/debian@" +
        k_digest +
        "\n"
        "\n"
        "SHELL [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"]\n"
        "RUN echo 'FROM debian' > /x   \n"
        "ENV A=1 \\\n    B=\"two  spaces\"\t\n"
        "FROM 127.0.0.1:5000/nvidia/cuda:12.4.1-runtime-ubuntu22.04 AS runtime\n"
        "\n\n";
    CHECK(out == expected);
}

TEST_CASE("rewrite_from_lines: identity keeps the text, with or without a final newline") {
    auto identity = [](const std::string& s) { return s; };
    for (const std::string& text :
         std::vector<std::string>{std::string(), std::string("\n"), std::string("FROM a"),
                                  std::string("FROM a\n"), std::string("RUN x\nFROM a\n\n"),
                                  std::string("FROM a\r\nRUN b\r\n"), std::string("FROM ")}) {
        INFO(quote_value(text));
        CHECK(rewrite_from_lines(text, identity) == text);
    }
    CHECK(rewrite_from_lines("FROM a", [](const std::string&) { return std::string("b"); }) ==
          "FROM b");
    CHECK(rewrite_from_lines("FROM a\n", [](const std::string&) { return std::string("b"); }) ==
          "FROM b\n");
}

TEST_CASE("rewrite_from_lines on the golden Dockerfile changes only the FROM line") {
    auto text = engine::read_text_file(
        test::source_path("tests/golden/golden-2.4.1-cu124-devel-ubuntu22.04.Dockerfile"));
    REQUIRE(text);
    auto out = rewrite_from_lines(text.value(), [](const std::string& image) {
        auto ref = ImageRef::parse(image);
        REQUIRE(ref);
        return apply_mirrors(ref.value(), {{"docker.io", "127.0.0.1:5000"}}).str();
    });
    auto before = split(text.value(), '\n');
    auto after = split(out, '\n');
    REQUIRE(before.size() == after.size());
    int changed = 0;
    for (std::size_t i = 0; i < before.size(); ++i) {
        if (before[i] == after[i]) continue;
        ++changed;
        CHECK(before[i] == "FROM nvidia/cuda@" + k_digest2);
        CHECK(after[i] == "FROM 127.0.0.1:5000/nvidia/cuda@" + k_digest2);
    }
    CHECK(changed == 1);
}

// ---------------------------------------------------------------------------- settings

TEST_CASE("settings: a good file with comments") {
    Diagnostics diags("torchdock.json");
    auto s = parse_settings(R"({
  // torchdock's own settings
  "schema": 1,
  "mirrors": {
    "docker.io": "127.0.0.1:5000",   /* local pull-through cache */
    "nvcr.io": "mirror.example.com:443",
  },
})",
                            diags);
    INFO(test::all_messages(diags));
    CHECK(diags.empty());
    CHECK(s.mirrors ==
          Mirrors{{"docker.io", "127.0.0.1:5000"}, {"nvcr.io", "mirror.example.com:443"}});
}

TEST_CASE("settings: schema only, no mirrors") {
    Diagnostics diags("torchdock.json");
    auto s = parse_settings(R"({"schema": 1})", diags);
    CHECK(diags.empty());
    CHECK(s.mirrors.empty());
}

TEST_CASE("settings: an unknown key is reported with a suggestion, the rest still read") {
    Diagnostics diags("torchdock.json");
    auto s = parse_settings(
        "{\n  \"schema\": 1,\n  \"mirror\": {},\n  \"mirrors\": {\"docker.io\": "
        "\"localhost:5000\"}\n}",
        diags);
    REQUIRE(diags.items().size() == 1);
    const auto& d = diags.items()[0];
    CHECK(d.file == "torchdock.json");
    CHECK(d.pos.line == 3);
    CHECK(d.pos.col == 3);
    CHECK(d.path == "$.mirror");
    CHECK_THAT(d.message, ContainsSubstring("unknown key"));
    CHECK_THAT(d.message, ContainsSubstring("did you mean \"mirrors\""));
    CHECK(s.mirrors == Mirrors{{"docker.io", "localhost:5000"}});
}

TEST_CASE("settings: a bad mirror host is reported at its value and left out") {
    Diagnostics diags("torchdock.json");
    auto s = parse_settings(
        "{\"schema\": 1, \"mirrors\": {\n"
        "  \"docker.io\": \"http://127.0.0.1:5000\",\n"
        "  \"nvcr.io\": \"127.0.0.1:5001\",\n"
        "  \"ghcr.io\": 5002\n"
        "}}",
        diags);
    REQUIRE(diags.items().size() == 2);
    CHECK(diags.items()[0].pos.line == 2);
    CHECK(diags.items()[0].pos.col == 16);
    CHECK_THAT(diags.items()[0].path, ContainsSubstring("docker.io"));
    CHECK_THAT(diags.items()[0].message, ContainsSubstring("is not a registry host"));
    CHECK(diags.items()[1].pos.line == 4);
    CHECK_THAT(diags.items()[1].message, ContainsSubstring("expected a string"));
    CHECK(s.mirrors == Mirrors{{"nvcr.io", "127.0.0.1:5001"}});
}

TEST_CASE("settings: wrong schema, missing schema, bad shapes and syntax errors") {
    auto problems = [](const std::string& text) {
        Diagnostics diags("torchdock.json");
        (void)parse_settings(text, diags);
        return test::all_messages(diags);
    };
    CHECK_THAT(problems(R"({"schema": 2})"), ContainsSubstring("unsupported settings schema 2"));
    CHECK_THAT(problems(R"({"schema": 1, "mirrors": ["docker.io=127.0.0.1:5000"]})"),
               ContainsSubstring("expected an object of registry -> mirror host"));
    CHECK_THAT(problems(R"([])"), ContainsSubstring("expected an object"));
    CHECK_THAT(problems(R"({"schema": 1,)"), ContainsSubstring("syntax error"));
    CHECK_THAT(problems(""), ContainsSubstring("syntax error"));
    CHECK_THAT(problems(R"({"schema": 1, "schema": 1})"),
               ContainsSubstring("syntax error"));  // duplicate key
}

// ---------------------------------------------------------------------------- lock files

TEST_CASE("lock file: render then parse gives the digests back; media_type is optional") {
    std::map<std::string, LockEntry> entries{
        {"nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04",
         {k_digest, "application/vnd.oci.image.index.v1+json"}},
        {"debian:bookworm", {k_digest2, ""}},
        {"127.0.0.1:5000/library/debian:bookworm",
         {k_digest, "application/vnd.docker.distribution.manifest.list.v2+json"}},
    };
    std::string text = render_lockfile(entries);
    CHECK(ends_with(text, "}\n"));

    Diagnostics diags("manifests/t.lock.json");
    auto digests = parse_lockfile(text, diags).images;
    INFO(text << test::all_messages(diags));
    CHECK(diags.empty());
    CHECK(digests == LockDigests{{"nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04", k_digest},
                                 {"debian:bookworm", k_digest2},
                                 {"127.0.0.1:5000/library/debian:bookworm", k_digest}});

    // media_type is written only where it is known.
    auto doc = nlohmann::json::parse(text);
    CHECK(doc["schema"] == 1);
    CHECK(doc["images"]["nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04"]["media_type"] ==
          "application/vnd.oci.image.index.v1+json");
    CHECK_FALSE(doc["images"]["debian:bookworm"].contains("media_type"));
    CHECK(doc["images"]["debian:bookworm"]["digest"] == k_digest2);

    // Rendering is deterministic.
    CHECK(render_lockfile(entries) == text);
}

TEST_CASE("lock file: an empty lock file round-trips") {
    std::string text = render_lockfile({});
    Diagnostics diags("t.lock.json");
    auto digests = parse_lockfile(text, diags).images;
    CHECK(diags.empty());
    CHECK(digests.empty());
}

TEST_CASE("lock file: the checked-in golden lock file parses") {
    auto text = engine::read_text_file(test::source_path("tests/data/golden.lock.json"));
    REQUIRE(text);
    Diagnostics diags("tests/data/golden.lock.json");
    auto digests = parse_lockfile(text.value(), diags).images;
    CHECK(diags.empty());
    CHECK(digests == LockDigests{{"nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04", k_digest2}});
}

TEST_CASE("lock file: bad references, digests and keys are reported, good entries kept") {
    Diagnostics diags("t.lock.json");
    auto digests = parse_lockfile(R"({
  "schema": 1,
  "images": {
    "Debian:Bookworm": {"digest": ")" +
                                      k_digest + R"("},
    "debian:bookworm": {"digest": "sha256:ABC"},
    "ubuntu:22.04": {"digest": ")" + k_digest +
                                      R"(", "mediatype": "x"},
    "nvidia/cuda:12.4.1-runtime-ubuntu22.04": {"media_type": "x"},
    "alpine:3.20": {"digest": 5},
    "busybox:1.36": {"digest": ")" + k_digest2 +
                                      R"(", "media_type": "application/vnd.oci.image.index.v1+json"}
  }
})",
                                  diags)
                       .images;
    std::string msgs = test::all_messages(diags);
    INFO(msgs);
    CHECK_THAT(msgs, ContainsSubstring("t.lock.json:4:5:"));  // the bad reference, at its key
    CHECK_THAT(msgs, ContainsSubstring("sha256:ABC"));
    CHECK_THAT(msgs, ContainsSubstring("unknown key \"mediatype\""));
    CHECK_THAT(msgs, ContainsSubstring("missing required key \"digest\""));
    CHECK_THAT(msgs, ContainsSubstring("expected a string"));
    CHECK(diags.items().size() == 5);
    // The entry with an unknown key still counts (the key is reported); the others do not.
    CHECK(digests == LockDigests{{"ubuntu:22.04", k_digest}, {"busybox:1.36", k_digest2}});
}

TEST_CASE("lock file: wrong schema and shapes") {
    auto problems = [](const std::string& text) {
        Diagnostics diags("t.lock.json");
        (void)parse_lockfile(text, diags);
        return test::all_messages(diags);
    };
    CHECK_THAT(problems(R"({"schema": 2, "images": {}})"),
               ContainsSubstring("unsupported lock schema 2"));
    CHECK_THAT(problems(R"({"schema": 1, "images": []})"),
               ContainsSubstring("expected an object of image reference"));
    CHECK_THAT(problems("{"), ContainsSubstring("syntax error"));
}

// ---------------------------------------------------------------------------------------
// Regression tests for bugs found by these tests and fixed (tag [regression]).
// ---------------------------------------------------------------------------------------

TEST_CASE("image ref: docker.io/debian is docker.io/library/debian", "[regression]") {
    // Docker normalizes a one-component Docker Hub path to library/<name>, also when the
    // registry is written out. Today repository is "debian", so a docker.io mirror turns it
    // into 127.0.0.1:5000/debian while "debian:bookworm" becomes .../library/debian.
    auto r = parsed("docker.io/debian:bookworm");
    CHECK(r.repository == "library/debian");
    CHECK(apply_mirrors(r, {{"docker.io", "127.0.0.1:5000"}}).str() ==
          apply_mirrors(parsed("debian:bookworm"), {{"docker.io", "127.0.0.1:5000"}}).str());
}

TEST_CASE("image ref: a DNS name starting with 127. is not loopback", "[regression]") {
    CHECK_FALSE(parsed("127.example.com/team/img:1").plain_http());
}

TEST_CASE("image ref: a mirror host that docker would read as a Docker Hub path is refused",
          "[regression]") {
    // "mirror" has no dot or port and is not localhost: "mirror/library/debian:bookworm"
    // means docker.io/mirror/library/debian to docker, and to ImageRef::parse.
    auto m = parse_mirror("docker.io=mirror");
    if (m) {
        auto mirrored = apply_mirrors(parsed("debian:bookworm"), {{m->first, m->second}});
        CHECK(parsed(mirrored.str()).registry == "mirror");
    }
    CHECK_FALSE(m);
}

TEST_CASE("build index: variant names that would escape the work directory are refused",
          "[regression]") {
    // build_command.cpp uses work_dir / entry.name as the build directory (and writes the
    // Dockerfile, build.log and image-id there), and prints the name to the terminal.
    for (const std::string& name :
         std::vector<std::string>{"../../outside", "/tmp/absolute", "a/../../b", "x\x1b[2J"}) {
        INFO(quote_value(name));
        CHECK_FALSE(parse_build_index(index_json(name, "torchdock/cpu", "1", "cpu/Dockerfile"),
                                      "index.json"));
    }
}

TEST_CASE("settings: a file without \"schema\" is reported, not a crash", "[regression]") {
    // parse_settings dereferences root.find("schema") after check_object() has only
    // reported the missing key: SIGSEGV today.
    for (const std::string& text :
         std::vector<std::string>{R"({"mirrors": {"docker.io": "127.0.0.1:5000"}})", "{}"}) {
        INFO(text);
        CHECK(test::runs_without_crash([&] {
            Diagnostics diags("torchdock.json");
            (void)parse_settings(text, diags);
            if (test::all_messages(diags).find("missing required key \"schema\"") ==
                std::string::npos)
                ::_exit(3);
        }));
    }
}

TEST_CASE("lock file: a file without \"schema\" or \"images\" is reported, not a crash",
          "[regression]") {
    // parse_lockfile dereferences root.find("schema") and root.find("images") the same way.
    for (const std::string& text :
         std::vector<std::string>{R"({"schema": 1})", R"({"images": {}})", "{}"}) {
        INFO(text);
        CHECK(test::runs_without_crash([&] {
            Diagnostics diags("t.lock.json");
            (void)parse_lockfile(text, diags);
            if (test::all_messages(diags).find("missing required key") == std::string::npos)
                ::_exit(3);
        }));
    }
}

TEST_CASE("lock verdicts: what a registry answer means for lock and lock --check") {
    using K = RegistryAnswer::Kind;
    const std::string a = "sha256:" + std::string(64, 'a'), b = "sha256:" + std::string(64, 'b');
    CHECK(judge_lock({K::Found, a, ""}, std::nullopt, false).status == "locked");
    CHECK(judge_lock({K::Found, a, ""}, a, false).status == "unchanged");
    CHECK(judge_lock({K::Found, b, ""}, a, false).status == "updated");
    CHECK(judge_lock({K::Found, a, ""}, a, true).status == "ok");
    auto changed = judge_lock({K::Found, b, ""}, a, true);
    CHECK(changed.drift);
    CHECK(changed.status.rfind("CHANGED upstream (locked sha256:aaaaaaaaaaaa)", 0) == 0);
    CHECK(judge_lock({K::Found, a, ""}, std::nullopt, true).drift);
    auto gone = judge_lock({K::NotFound, "", "MANIFEST_UNKNOWN: manifest unknown"}, a, true);
    CHECK(gone.drift);
    CHECK_FALSE(gone.failure);
    CHECK(judge_lock({K::NotFound, "", "x"}, a, false).failure);
    auto err = judge_lock({K::Failed, "", "connection refused"}, a, true);
    CHECK(err.failure);
    CHECK(err.status == "ERROR: connection refused");
    // A time-out is an error for both, never drift (exit 4 is decided from the kind).
    auto slow = judge_lock({K::TimedOut, "", "timed out"}, a, true);
    CHECK(slow.failure);
    CHECK_FALSE(slow.drift);
    CHECK(judge_lock({K::TimedOut, "", "timed out"}, a, false).failure);
}

TEST_CASE("lock file: bytes that are not UTF-8 never make the writer throw") {
    std::string text;
    REQUIRE_NOTHROW(text =
                        render_lockfile({{"debian:bookworm", {k_digest, "application/\xff\xfe"}}}));
    CHECK_NOTHROW((void)nlohmann::json::parse(text).dump());
}
