// The CycloneDX SBOM writer: the same facts give the same bytes whatever their order, purls
// follow the purl spec's encoding, and the lock's required_by becomes the dependency graph.
#include "core/sbom/cyclonedx.hpp"

#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace td;
using Catch::Matchers::ContainsSubstring;
using Kind = SbomComponent::Kind;

namespace {

SbomComponent of(Kind kind) {
    SbomComponent c{};
    c.kind = kind;
    return c;
}

SbomComponent python(std::string name, std::string version, std::vector<std::string> required_by) {
    SbomComponent c = of(Kind::Python);
    c.name = std::move(name);
    c.version = std::move(version);
    c.required_by = std::move(required_by);
    c.hashes = {{"SHA-256", std::string(64, 'a')}};
    c.index = "PyPI";
    return c;
}

// A small variant: torch asked for by the inputs and required by torchvision, which the inputs
// ask for too; filelock required by torch; one of each other kind.
SbomInput sample_sbom() {
    SbomInput in;
    in.subject = {"cu128-py312", "", "variant", {{"torchdock:cuda", "12.8"}}};
    in.tool_version = "1.4.0";
    in.components.push_back(python("torch", "2.9.1+cu128", {"torchvision"}));
    in.components.push_back(python("torchvision", "0.24.1+cu128", {}));
    in.components.push_back(python("filelock", "3.20.0", {"torch"}));
    SbomComponent apt = of(Kind::Apt);
    apt.name = "libstdc++6";
    apt.version = "12.2.0-14+deb12u1";
    apt.os_id = "debian12";
    in.components.push_back(apt);
    SbomComponent cuda = of(Kind::CudaLibrary);
    cuda.name = "libcudnn.so.9";
    cuda.version = "9.10.2";
    cuda.path = "/usr/local/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9";
    in.components.push_back(cuda);
    SbomComponent object = of(Kind::GpuObject);
    object.name = "libtorch_cuda.so";
    object.path = "/usr/local/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so";
    object.gpu_targets = {"sm_80", "sm_90", "compute_90"};
    object.note = "fatbin containers read by probe-kernels";
    in.components.push_back(object);
    SbomComponent base = of(Kind::BaseImage);
    base.name = "nvidia/cuda:12.8.1-runtime-ubuntu24.04";
    base.digest = "sha256:" + std::string(64, 'b');
    in.components.push_back(base);
    return in;
}

nlohmann::json parsed(const SbomInput& in) { return nlohmann::json::parse(cyclonedx_json(in)); }

const nlohmann::json& component_named(const nlohmann::json& bom, const std::string& name) {
    for (const auto& c : bom["components"])
        if (c["name"] == name) return c;
    FAIL("no component named " << name);
    return bom;  // not reached
}

std::vector<std::string> depends_on(const nlohmann::json& bom, const std::string& ref) {
    for (const auto& d : bom["dependencies"])
        if (d["ref"] == ref) return d["dependsOn"].get<std::vector<std::string>>();
    FAIL("no dependencies entry for " << ref);
    return {};
}

}  // namespace

TEST_CASE("sbom: the same input gives the same bytes, whatever the order of its components") {
    SbomInput in = sample_sbom();
    std::string first = cyclonedx_json(in);
    CHECK(cyclonedx_json(in) == first);
    std::reverse(in.components.begin(), in.components.end());
    CHECK(cyclonedx_json(in) == first);
    std::rotate(in.components.begin(), in.components.begin() + 2, in.components.end());
    CHECK(cyclonedx_json(in) == first);

    SbomInput other = sample_sbom();
    other.components[0].version = "2.9.0+cu128";
    CHECK(parsed(other)["serialNumber"] != parsed(in)["serialNumber"]);
}

TEST_CASE("sbom: valid CycloneDX 1.6 JSON with a UUID serial number") {
    auto bom = parsed(sample_sbom());
    CHECK(bom["bomFormat"] == "CycloneDX");
    CHECK(bom["specVersion"] == "1.6");
    CHECK(bom["version"] == 1);
    std::string serial = bom["serialNumber"];
    REQUIRE(serial.size() == 45);
    CHECK(serial.starts_with("urn:uuid:"));
    CHECK(serial[9 + 14] == '5');                                          // version nibble
    CHECK(std::string("89ab").find(serial[9 + 19]) != std::string::npos);  // RFC 4122 variant
    CHECK(bom["metadata"]["component"]["type"] == "container");
    CHECK(bom["metadata"]["component"]["name"] == "cu128-py312");
    CHECK(bom["metadata"]["tools"]["components"][0] ==
          nlohmann::json{{"type", "application"}, {"name", "torchdock"}, {"version", "1.4.0"}});
    CHECK(bom["components"].size() == 7);
}

TEST_CASE("sbom: components are sorted by kind, name and version with unique refs") {
    auto bom = parsed(sample_sbom());
    std::vector<std::string> names, refs;
    for (const auto& c : bom["components"]) {
        names.push_back(c["name"]);
        refs.push_back(c["bom-ref"]);
    }
    CHECK(names == std::vector<std::string>{"filelock", "torch", "torchvision", "libstdc++6",
                                            "libcudnn.so.9", "libtorch_cuda.so",
                                            "nvidia/cuda:12.8.1-runtime-ubuntu24.04"});
    std::sort(refs.begin(), refs.end());
    CHECK(std::adjacent_find(refs.begin(), refs.end()) == refs.end());

    SbomInput twice = sample_sbom();
    twice.components.push_back(twice.components[5]);  // the same GPU object listed twice
    auto doubled = parsed(twice);
    std::vector<std::string> all;
    for (const auto& c : doubled["components"]) all.push_back(c["bom-ref"]);
    std::sort(all.begin(), all.end());
    CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
}

TEST_CASE("sbom: purls encode local versions, apt versions and image digests") {
    auto bom = parsed(sample_sbom());
    CHECK(component_named(bom, "torch")["purl"] == "pkg:pypi/torch@2.9.1%2Bcu128");
    CHECK(component_named(bom, "libstdc++6")["purl"] ==
          "pkg:deb/debian/libstdc%2B%2B6@12.2.0-14%2Bdeb12u1?distro=debian12");
    CHECK(component_named(bom, "nvidia/cuda:12.8.1-runtime-ubuntu24.04")["purl"] ==
          "pkg:oci/cuda@sha256%3A" + std::string(64, 'b') +
              "?repository_url=nvidia%2Fcuda&tag=12.8.1-runtime-ubuntu24.04");
    CHECK_FALSE(component_named(bom, "libcudnn.so.9").contains("purl"));

    SbomComponent ubuntu = of(Kind::Apt);
    ubuntu.name = "libc6";
    ubuntu.version = "2.39-0ubuntu8.4";
    ubuntu.os_id = "ubuntu2404";
    CHECK(sbom_purl(ubuntu) == "pkg:deb/ubuntu/libc6@2.39-0ubuntu8.4?distro=ubuntu2404");

    SbomComponent epoch = of(Kind::Apt);
    epoch.name = "git";
    epoch.version = "1:2.39.5-0+deb12u1";
    epoch.os_id = "debian12";
    CHECK(sbom_purl(epoch) == "pkg:deb/debian/git@1%3A2.39.5-0%2Bdeb12u1?distro=debian12");

    SbomComponent spelled = of(Kind::Python);
    spelled.name = "Typing_Extensions";
    spelled.version = "4.15.0";
    CHECK(sbom_purl(spelled) == "pkg:pypi/typing-extensions@4.15.0");

    SbomComponent registry_port = of(Kind::BaseImage);
    registry_port.name = "127.0.0.1:5000/team/Base@sha256:" + std::string(64, 'c');
    CHECK(sbom_purl(registry_port) == "pkg:oci/base?repository_url=127.0.0.1%3A5000%2Fteam%2FBase");
}

TEST_CASE("sbom: a wheel by URL carries its download_url in the purl and as a distribution") {
    SbomInput in = sample_sbom();
    SbomComponent wheel = python("flash-attn", "2.8.3", {});
    wheel.index = "";
    wheel.download_url = "https://example.com/whl/flash_attn-2.8.3+cu12-cp312-linux_x86_64.whl";
    in.components.push_back(wheel);
    auto bom = parsed(in);
    const auto& c = component_named(bom, "flash-attn");
    CHECK(c["purl"] ==
          "pkg:pypi/flash-attn@2.8.3?download_url=https%3A%2F%2Fexample.com%2Fwhl%2F"
          "flash_attn-2.8.3%2Bcu12-cp312-linux_x86_64.whl");
    REQUIRE(c["externalReferences"].size() == 1);
    CHECK(c["externalReferences"][0]["type"] == "distribution");
    CHECK(c["externalReferences"][0]["url"] == wheel.download_url);
    CHECK(component_named(bom, "torch")["hashes"][0] ==
          nlohmann::json{{"alg", "SHA-256"}, {"content", std::string(64, 'a')}});
    CHECK_FALSE(component_named(bom, "torch").contains("externalReferences"));
}

TEST_CASE("sbom: dependencies invert required_by; the subject holds what nothing requires") {
    auto bom = parsed(sample_sbom());
    std::string torch = component_named(bom, "torch")["bom-ref"];
    std::string vision = component_named(bom, "torchvision")["bom-ref"];
    std::string filelock = component_named(bom, "filelock")["bom-ref"];
    CHECK(depends_on(bom, vision) == std::vector<std::string>{torch});
    CHECK(depends_on(bom, torch) == std::vector<std::string>{filelock});
    CHECK(depends_on(bom, filelock).empty());

    auto top = depends_on(bom, bom["metadata"]["component"]["bom-ref"]);
    CHECK(std::find(top.begin(), top.end(), vision) != top.end());
    CHECK(std::find(top.begin(), top.end(), torch) == top.end());
    CHECK(std::find(top.begin(), top.end(), filelock) == top.end());
    CHECK(top.size() == 5);                  // torchvision and the four components of other kinds
    CHECK(bom["dependencies"].size() == 4);  // the subject and the three Python packages
}

TEST_CASE("sbom: required_by names match as PEP 503 names; an unknown requirer leaves it top") {
    SbomInput in = sample_sbom();
    in.components[2].required_by = {"Torch"};  // filelock, spelled as a project
    SbomComponent jinja2 = python("jinja2", "3.1.6", {"not-locked"});
    jinja2.depends_on = {"markupsafe"};  // an edge given from the other end
    in.components.push_back(jinja2);
    in.components.push_back(python("MarkupSafe", "3.0.3", {}));
    auto bom = parsed(in);
    std::string torch = component_named(bom, "torch")["bom-ref"];
    std::string jinja = component_named(bom, "jinja2")["bom-ref"];
    std::string markupsafe = component_named(bom, "MarkupSafe")["bom-ref"];
    CHECK(depends_on(bom, torch) ==
          std::vector<std::string>{component_named(bom, "filelock")["bom-ref"]});
    CHECK(depends_on(bom, jinja) == std::vector<std::string>{markupsafe});
    auto top = depends_on(bom, bom["metadata"]["component"]["bom-ref"]);
    CHECK(std::find(top.begin(), top.end(), jinja) != top.end());
    CHECK(std::find(top.begin(), top.end(), markupsafe) == top.end());
}

TEST_CASE("sbom: GPU targets, paths, notes and the index are properties") {
    auto bom = parsed(sample_sbom());
    const auto& object = component_named(bom, "libtorch_cuda.so");
    CHECK(object["type"] == "file");
    CHECK(object["properties"] == nlohmann::json::parse(R"([
            {"name": "torchdock:gpu-targets", "value": "sm_80 sm_90 compute_90"},
            {"name": "torchdock:note", "value": "fatbin containers read by probe-kernels"},
            {"name": "torchdock:path",
             "value": "/usr/local/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so"}])"));
    CHECK(component_named(bom, "torch")["properties"][0] ==
          nlohmann::json{{"name", "torchdock:index"}, {"value", "PyPI"}});
    CHECK(component_named(bom, "nvidia/cuda:12.8.1-runtime-ubuntu24.04")["type"] == "container");
    CHECK(component_named(bom, "libcudnn.so.9")["type"] == "library");
}

TEST_CASE("sbom: the timestamp appears only when given") {
    SbomInput in = sample_sbom();
    CHECK_FALSE(parsed(in)["metadata"].contains("timestamp"));
    CHECK_THAT(cyclonedx_json(in), !ContainsSubstring("timestamp"));
    in.timestamp = "2026-01-02T03:04:05Z";
    CHECK(parsed(in)["metadata"]["timestamp"] == "2026-01-02T03:04:05Z");
}

TEST_CASE("sbom: bytes that are not UTF-8 in image facts do not stop the writer") {
    SbomInput in = sample_sbom();
    in.components[4].note = "read from \xff\xfe";
    auto bom = parsed(in);
    CHECK(bom["specVersion"] == "1.6");
}

TEST_CASE(
    "CycloneDX 1.6 limits: a version over 1024 characters is left out and said, never "
    "written",
    "[regression][sbom]") {
    SbomInput in = sample_sbom();
    SbomComponent huge = python("evil", std::string(5000, '7'), {});
    in.components.push_back(huge);
    SbomComponent at_limit = python("fits", std::string(1024, '1'), {});
    in.components.push_back(at_limit);
    std::string wide;  // 1024 characters, 2048 bytes: within the limit (it counts characters)
    for (int i = 0; i < 1024; ++i) wide += "\xc3\xa9";
    in.components.push_back(python("wide", wide, {}));
    std::string junk(1025, '\xff');  // not UTF-8: each byte becomes one U+FFFD
    in.components.push_back(python("junk", junk, {}));
    in.subject.version = std::string(2000, 'v');

    SbomInput fitted = in;
    auto changes = fit_cyclonedx_limits(fitted);
    REQUIRE(changes.size() == 3);
    CHECK_THAT(changes[0], ContainsSubstring("the subject cu128-py312"));
    CHECK_THAT(changes[1], ContainsSubstring("python evil: version left out: it is 5000 "
                                             "characters, over CycloneDX 1.6's limit of 1024"));
    CHECK_THAT(changes[2], ContainsSubstring("python junk: version left out: it is 1025"));
    CHECK(fit_cyclonedx_limits(fitted).empty());  // fitting twice changes nothing more

    auto bom = parsed(in);
    const auto& evil = component_named(bom, "evil");
    CHECK_FALSE(evil.contains("version"));
    CHECK(evil["purl"] == "pkg:pypi/evil");
    CHECK(evil["bom-ref"] == "pkg:pypi/evil");
    bool noted = false;
    for (const auto& p : evil["properties"])
        if (p["name"] == "torchdock:note")
            noted =
                p["value"].get<std::string>().find("it is 5000 characters") != std::string::npos;
    CHECK(noted);
    CHECK(component_named(bom, "fits")["version"] == std::string(1024, '1'));
    CHECK(component_named(bom, "wide")["version"] == wide);
    CHECK_FALSE(component_named(bom, "junk").contains("version"));
    CHECK_FALSE(bom["metadata"]["component"].contains("version"));
    // Every version in the file is within the schema's maxLength (counted in characters).
    for (const auto& c : bom["components"])
        if (c.contains("version")) {
            std::string v = c["version"];
            std::size_t chars = 0;
            for (unsigned char ch : v) chars += (ch & 0xC0) != 0x80;
            CHECK(chars <= k_cyclonedx_version_max_chars);
        }
}

TEST_CASE("CycloneDX 1.6 limits: a hash the schema cannot hold is left out with a note",
          "[regression][sbom]") {
    SbomInput in;
    in.subject = {"img:1", "sha256:c", "image", {}};
    SbomComponent c = python("pkg", "1.0", {});
    c.hashes = {{"SHA-256", std::string(63, 'a')},   // one digit short
                {"SHA-256", std::string(64, 'g')},   // not hex
                {"sha256", std::string(64, 'a')},    // not a name the schema has
                {"SHA-256", std::string(64, 'C')}};  // kept (written lower case)
    in.components.push_back(c);
    SbomInput fitted = in;
    auto changes = fit_cyclonedx_limits(fitted);
    CHECK(changes.size() == 3);
    REQUIRE(fitted.components[0].hashes.size() == 1);
    CHECK_THAT(fitted.components[0].note, ContainsSubstring("hash of 63 characters left out"));
    auto bom = parsed(in);
    const auto& hashes = component_named(bom, "pkg")["hashes"];
    REQUIRE(hashes.size() == 1);
    CHECK(hashes[0]["content"] == std::string(64, 'c'));
}
