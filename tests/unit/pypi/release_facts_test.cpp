// Release facts and the torch.json update, on recorded index data: a trimmed PEP 691
// page of torch (tests/data/pypi/torch.simple.json, file URLs made relative) and the
// header part of real wheels' METADATA; plus a small real zip for the range-read parser.
#include "core/pypi/release_facts.hpp"

#include <catch2/catch_test_macros.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/knowledge/knowledge_base.hpp"
#include "core/pypi/kb_update.hpp"
#include "core/pypi/wheel_name.hpp"
#include "core/pypi/zip_directory.hpp"
#include "engine/pypi_client.hpp"
#include "test_support.hpp"

using namespace td::pypi;

namespace {

const std::string k_page = "https://index.test/simple/torch/";

ProjectIndex torch_index() {
    auto idx =
        parse_project_index(td::test::source_text("tests/data/pypi/torch.simple.json"), k_page);
    REQUIRE(idx);
    return idx.value();
}

CoreMetadata metadata(const std::string& name) {
    auto md = parse_core_metadata(td::test::source_text("tests/data/pypi/" + name));
    REQUIRE(md);
    return md.value();
}

std::string value_of(const ReleaseFacts& f, const std::string& path) {
    const Fact* fact = f.find(path);
    return fact ? fact->value() : "(none)";
}

ReleaseFacts facts_2_11() {
    ProjectIndex idx = torch_index();
    auto rw = release_wheels(idx, "2.11.0");
    REQUIRE(rw);
    ReleaseFacts facts;
    facts.version = "2.11.0";
    wheel_name_facts("PyPI", rw.value(), facts);
    CoreMetadata md = metadata("torch-2.11.0.METADATA");
    CoreMetadata tk = metadata("cuda-toolkit-13.0.2.METADATA");
    MarkerEnvironment env;
    env.python_version = rw->metadata_python;
    pin_facts(cite_wheel("PyPI", "torch", *rw->metadata_wheel), md, env, &tk,
              "PyPI cuda-toolkit 13.0.2 wheel cuda_toolkit-13.0.2-py2.py3-none-any.whl (sha256 b1)",
              facts);
    return facts;
}

}  // namespace

TEST_CASE("PEP 691 page: files, hashes, relative URLs, build tags", "[pypi]") {
    ProjectIndex idx = torch_index();
    CHECK(idx.name == "torch");
    auto wheels = idx.linux_wheels("2.10.0");
    REQUIRE(wheels.size() == 7);  // the build-3 wheels replace the untagged ones
    for (const auto* w : wheels) CHECK(w->wheel->build == 3);
    CHECK(wheels.front()->url.rfind("https://index.test/packages/", 0) == 0);
    CHECK(wheels.front()->sha256.size() == 64);
    CHECK(idx.release_versions() ==
          std::vector<std::string>{"1.13.1", "2.10.0", "2.11.0", "2.15.0"});
    CHECK_FALSE(parse_project_index("{\"meta\":{\"api-version\":\"2.0\"},\"files\":[]}", k_page));
    CHECK_FALSE(parse_project_index("<html>", k_page));
    CHECK(resolve_url("https://a.test/simple/x/", "../../p/f.whl") == "https://a.test/p/f.whl");
    CHECK(resolve_url("https://a.test/simple/x/", "/p/f.whl") == "https://a.test/p/f.whl");
}

TEST_CASE("torch 2.11.0: Python range, free-threaded builds, glibc, pins via cuda-toolkit",
          "[pypi]") {
    ReleaseFacts f = facts_2_11();
    CHECK(value_of(f, "python.min") == "3.10");
    CHECK(value_of(f, "python.max") == "3.14");
    REQUIRE(f.find("python.free_threaded"));
    CHECK(f.find("python.free_threaded")->values == std::vector<std::string>{"3.13t", "3.14t"});
    CHECK(value_of(f, "glibc") == "2.28");
    CHECK(value_of(f, "default_variant") == "cu130");
    CHECK(value_of(f, "variants.cu130.cuda") == "13.0");
    CHECK(value_of(f, "variants.cu130.cuda_runtime") == "13.0.96");
    CHECK(value_of(f, "variants.cu130.cublas") == "13.1.0.3");
    CHECK(value_of(f, "variants.cu130.cudnn") == "9.19.0.56");
    CHECK(value_of(f, "variants.cu130.nccl") == "2.28.9");
    // Every fact names its wheel and hash, never a host.
    for (const auto& fact : f.facts) {
        CHECK(fact.source.find("PyPI torch 2.11.0 wheel torch-2.11.0-") == 0);
        CHECK(fact.source.find("sha256 ") != std::string::npos);
        CHECK(fact.source.find("://") == std::string::npos);
    }
    CHECK(f.find("variants.cu130.cudnn")->source.find("nvidia-cudnn-cu13==9.19.0.56") !=
          std::string::npos);
    CHECK(f.find("variants.cu130.cublas")->source.find("cuda-toolkit 13.0.2") != std::string::npos);
}

TEST_CASE("torch 1.13.1: cp311 wheels exist; pins without NCCL", "[pypi]") {
    ProjectIndex idx = torch_index();
    auto rw = release_wheels(idx, "1.13.1");
    REQUIRE(rw);
    ReleaseFacts f;
    wheel_name_facts("PyPI", rw.value(), f);
    CHECK(value_of(f, "python.min") == "3.7");
    CHECK(value_of(f, "python.max") == "3.11");
    CHECK(value_of(f, "glibc") == "2.5");
    CHECK(f.find("python.free_threaded")->values.empty());
    MarkerEnvironment env;
    env.python_version = rw->metadata_python;
    pin_facts("PyPI torch 1.13.1 wheel w (sha256 x)", metadata("torch-1.13.1.METADATA"), env,
              nullptr, "", f);
    CHECK(value_of(f, "default_variant") == "cu117");
    CHECK(value_of(f, "variants.cu117.cuda_runtime") == "11.7.99");
    CHECK(value_of(f, "variants.cu117.cudnn") == "8.5.0.96");
    CHECK(value_of(f, "variants.cu117.cublas") == "11.10.3.66");
    CHECK_FALSE(f.find("variants.cu117.nccl"));  // 1.13 links NCCL statically: no pin
}

TEST_CASE("torch 2.12.0 names cuBLAS as a range: not a fact, reported as not pinned", "[pypi]") {
    ReleaseFacts f;
    MarkerEnvironment env;
    env.python_version = "3.13";
    CoreMetadata tk = metadata("cuda-toolkit-13.0.2.METADATA");
    pin_facts("PyPI torch 2.12.0 wheel w (sha256 x)", metadata("torch-2.12.0.METADATA"), env, &tk,
              "PyPI cuda-toolkit 13.0.2 wheel t (sha256 y)", f);
    CHECK(f.find("variants.cu130.cublas") == nullptr);
    REQUIRE(f.notes.size() == 1);
    CHECK(f.notes[0].find("variants.cu130.cublas: nvidia-cublas") == 0);
    CHECK(f.notes[0].find("<=13.1.1.3,>=13.1.0.3 is not pinned") != std::string::npos);
    CHECK(value_of(f, "variants.cu130.cudnn") == "9.20.0.48");
}

namespace {
// torch 2.11.0's METADATA with its cuDNN requirement replaced.
CoreMetadata torch_with_cudnn(const std::string& requirement) {
    std::string text = td::test::source_text("tests/data/pypi/torch-2.11.0.METADATA");
    auto at = text.find("nvidia-cudnn-cu13==9.19.0.56");
    REQUIRE(at != std::string::npos);
    text.replace(at, std::string("nvidia-cudnn-cu13==9.19.0.56").size(), requirement);
    auto md = parse_core_metadata(text);
    REQUIRE(md);
    return md.value();
}
}  // namespace

TEST_CASE("N5: only ==VERSION is a library fact; ===, ranges and prefixes are reported", "[pypi]") {
    MarkerEnvironment env;
    env.python_version = "3.13";
    CoreMetadata tk = metadata("cuda-toolkit-13.0.2.METADATA");
    for (std::string req : {"nvidia-cudnn-cu13===9.19\"$(id)`id`", "nvidia-cudnn-cu13===9.19.0.56",
                            "nvidia-cudnn-cu13>=9.19", "nvidia-cudnn-cu13==9.19.*"}) {
        ReleaseFacts f;
        pin_facts("PyPI torch 2.11.0 wheel w (sha256 x)", torch_with_cudnn(req), env, &tk,
                  "PyPI cuda-toolkit 13.0.2 wheel t (sha256 y)", f);
        INFO(req);
        CHECK(f.find("variants.cu130.cudnn") == nullptr);
        REQUIRE(f.notes.size() == 1);
        CHECK(f.notes[0].find("is not pinned") != std::string::npos);
        CHECK(value_of(f, "variants.cu130.nccl") == "2.28.9");
    }
    ReleaseFacts ok;
    pin_facts("PyPI torch 2.11.0 wheel w (sha256 x)",
              torch_with_cudnn("nvidia-cudnn-cu13==9.19.0.57"), env, &tk,
              "PyPI cuda-toolkit 13.0.2 wheel t (sha256 y)", ok);
    CHECK(value_of(ok, "variants.cu130.cudnn") == "9.19.0.57");
    CHECK(ok.notes.empty());
}

TEST_CASE("N5: kb_update refuses a value the loader would refuse, naming path and value",
          "[pypi]") {
    std::string data = td::test::source_text("tests/data/pypi/../../../data/torch.json");
    ReleaseFacts rel;
    rel.version = "2.11.0";
    rel.facts.push_back(Fact{"variants.cu130.cudnn", {"9.19\nRUN id"}, false, "test"});
    auto r = update_torch_data(data, {rel});
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("variants.cu130.cudnn") != std::string::npos);
    CHECK(r.error().message.find("\"9.19\\nRUN id\"") != std::string::npos);
    ReleaseFacts src;
    src.version = "2.11.0";
    src.facts.push_back(Fact{"variants.cu130.cudnn", {"9.19.0.56"}, false, "a\x1b]0;x\x07"});
    auto r2 = update_torch_data(data, {src});
    REQUIRE_FALSE(r2);
    CHECK(r2.error().message.find("source refused") != std::string::npos);
    ReleaseFacts good;
    good.version = "2.11.0";
    good.facts.push_back(Fact{"variants.cu130.cudnn", {"9.19.0.57"}, false, "test source"});
    CHECK(update_torch_data(data, {good}));
}

TEST_CASE("N6: METADATA must name the wheel's project and version", "[pypi]") {
    IndexFile f;
    f.filename = "torch-2.11.0-cp313-cp313-manylinux_2_28_x86_64.whl";
    f.wheel = parse_wheel_name(f.filename);
    REQUIRE(f.wheel);
    CoreMetadata md = metadata("torch-2.11.0.METADATA");
    CHECK(metadata_mismatch(md, f).empty());
    md.version = "2.10.0";
    CHECK(metadata_mismatch(md, f).find("says version \"2.10.0\", not \"2.11.0\"; wheel refused") !=
          std::string::npos);
    md.version = "2.11.0";
    md.name = "evil\x1b]0;t\x07";
    auto why = metadata_mismatch(md, f);
    CHECK(why.find("names the project") != std::string::npos);
    CHECK(why.find('\x1b') == std::string::npos);  // shown escaped
    md.name = "Torch";                             // PEP 503: the same project
    CHECK(metadata_mismatch(md, f).empty());
}

TEST_CASE("N6: a wheel name with characters outside the wheel grammar is not a wheel", "[pypi]") {
    CHECK(parse_wheel_name("torch-2.11.0-1-cp314-cp314-manylinux_2_28_x86_64.whl"));
    CHECK_FALSE(
        parse_wheel_name("torch-2.11.0-1\x1b]0;PWN\x07-cp314-cp314-manylinux_2_28_x86_64.whl"));
    CHECK_FALSE(parse_wheel_name("torch-2.11.0-cp314-cp314-manylinux_2_28_x86_64\n.whl"));
    CHECK_FALSE(parse_wheel_name("torch-2.11.0$(id)-cp314-cp314-manylinux_2_28_x86_64.whl"));
}

TEST_CASE("Companions: an exact pin wins; else the newest that admits torch", "[pypi]") {
    CoreMetadata tv = metadata("torchvision-0.26.0.METADATA");
    CoreMetadata ta_new = metadata("torchaudio-2.11.1.METADATA");
    CoreMetadata ta_old = metadata("torchaudio-2.11.0.METADATA");
    MarkerEnvironment env;
    auto req = [&](const CoreMetadata& md) { return md.requirement_on("torch", env); };

    CompanionPicker exact("2.11.0");
    exact.offer("0.26.0", req(tv), "PyPI torchvision 0.26.0 wheel w (sha256 x)");
    CHECK(exact.done());
    CHECK(exact.result("torchvision")->value() == "0.26.0");

    // torchaudio 2.11.1 requires torch>=2.11; 2.11.0 names no torch requirement at all.
    CHECK_FALSE(req(ta_old));
    CompanionPicker newer("2.13.0");
    newer.offer("2.11.1", req(ta_new), "PyPI torchaudio 2.11.1 wheel a (sha256 y)");
    newer.offer("2.11.0", req(ta_old), "PyPI torchaudio 2.11.0 wheel b (sha256 z)");
    CHECK_FALSE(newer.done());
    auto fact = newer.result("torchaudio");
    REQUIRE(fact);
    CHECK(fact->value() == "2.11.1");
    CHECK(fact->source.find("torch>=2.11") != std::string::npos);

    CompanionPicker none("2.10.0");
    none.offer("2.11.1", req(ta_new), "c");
    CHECK_FALSE(none.result("torchaudio"));
}

TEST_CASE("The torch.json update reports changed facts and adds new releases", "[pypi]") {
    std::string data = R"({
  "schema": 1,
  "torch": [
    {
      "version": "2.11.0",
      "python": {
        "min": "3.10",
        "max": "3.14"
      },
      "torchvision": "0.26.0",
      "torchaudio": "2.11.0",
      "variants": {
        "cu126": {},
        "cu130": {
          "cuda": "13.0",
          "cudnn": "9.17.1.4",
          "nccl": "2.28.9",
          "arch_list": [
            "12.0+PTX"
          ]
        },
        "cpu": {}
      },
      "default_variant": "cu130",
      "source": [
        "https://github.com/pytorch/pytorch/releases/tag/v2.11.0"
      ]
    }
  ]
}
)";
    ReleaseFacts f = facts_2_11();
    ReleaseFacts added;
    added.version = "2.15.0";
    added.facts.push_back({"python.min", {"3.11"}, false, "PyPI torch 2.15.0 wheel a (sha256 b)"});
    added.facts.push_back(
        {"default_variant", {"cu132"}, false, "PyPI torch 2.15.0 wheel a (sha256 b)"});
    added.facts.push_back(
        {"variants.cu132.cuda", {"13.2"}, false, "PyPI torch 2.15.0 wheel a (sha256 b)"});
    auto up = update_torch_data(data, {f, added});
    REQUIRE(up);
    bool cudnn_changed = false;
    for (const auto& c : up->changes)
        if (c.release == "2.11.0" && c.path == "variants.cu130.cudnn") {
            cudnn_changed = true;
            CHECK(c.before == "9.17.1.4");
            CHECK(c.after == "9.19.0.56");
        }
    CHECK(cudnn_changed);
    auto doc = nlohmann::ordered_json::parse(up->text);
    const auto& r = doc["torch"][0];
    CHECK(r["variants"]["cu130"]["cudnn"] == "9.19.0.56");
    CHECK(r["variants"]["cu130"]["arch_list"][0] == "12.0+PTX");  // not a refresh fact: kept
    CHECK(r["glibc"] == "2.28");
    CHECK(r["evidence"]["variants.cu130.cudnn"].get<std::string>().find("sha256") !=
          std::string::npos);
    // New keys go where the file's layout puts them.
    std::vector<std::string> keys;
    for (auto& [k, v] : r.items()) keys.push_back(k);
    CHECK(keys == std::vector<std::string>{"version", "python", "glibc", "torchvision",
                                           "torchaudio", "variants", "default_variant", "source",
                                           "evidence"});
    REQUIRE(doc["torch"].size() == 2);
    CHECK(doc["torch"][1]["version"] == "2.15.0");
    CHECK(doc["torch"][1]["variants"]["cu132"]["cuda"] == "13.2");

    // Applying the same facts again changes nothing.
    auto again = update_torch_data(up->text, {f, added});
    REQUIRE(again);
    CHECK(again->changes.empty());
    CHECK(again->text == up->text);
}

TEST_CASE("The data file keeps its layout through an update", "[pypi]") {
    std::ifstream in(td::test::source_path("data/torch.json"));
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    auto up = update_torch_data(text, {});
    REQUIRE(up);
    CHECK(up->text == text);
}

TEST_CASE("Zip: end record, central directory and one member of a real small wheel", "[pypi]") {
    std::string whl = td::test::source_text("tests/data/pypi/tiny-1.0-py3-none-any.whl");
    auto loc = locate_central_directory(whl, whl.size());  // the comment is skipped
    REQUIRE(loc);
    CHECK(loc->entries == 3);
    auto entries = parse_central_directory(std::string_view(whl).substr(loc->offset, loc->size));
    REQUIRE(entries);
    const ZipEntry* md = find_wheel_metadata(entries.value());
    REQUIRE(md);
    CHECK(md->name == "tiny-1.0.dist-info/METADATA");
    CHECK(md->method == 8);
    auto at = member_data_offset(std::string_view(whl).substr(md->local_header_offset), *md);
    REQUIRE(at);
    auto text = td::engine::inflate_raw(whl.substr(at.value(), md->compressed_size),
                                        md->uncompressed_size, 1 << 20);
    REQUIRE(text);
    CHECK(text.value() == td::test::source_text("tests/data/pypi/torchvision-0.26.0.METADATA"));

    // Damage is an error, not a crash.
    CHECK_FALSE(locate_central_directory(whl.substr(0, 100), whl.size()));
    CHECK_FALSE(parse_central_directory(std::string_view(whl).substr(loc->offset, loc->size - 5)));
    std::string bad = whl;
    std::size_t eocd = bad.rfind(std::string("PK\x05\x06", 4));
    REQUIRE(eocd != std::string::npos);
    bad[eocd + 19] = '\x7f';  // the central directory's offset now lies far outside
    CHECK_FALSE(locate_central_directory(bad, bad.size()));
}

TEST_CASE("Zip: a ZIP64 end record is followed", "[pypi]") {
    // ZIP64 end record (56 bytes), locator (20), classic end record (22) with 0xFFFFFFFF.
    std::string tail;
    auto put = [&](std::uint64_t v, int n) {
        for (int i = 0; i < n; ++i) tail += static_cast<char>((v >> (8 * i)) & 0xff);
    };
    std::uint64_t archive = 6000000000ULL, tail_start = archive - 98;
    put(0x06064b50, 4);
    put(44, 8);
    put(45, 2);
    put(45, 2);
    put(0, 4);
    put(0, 4);
    put(70000, 8);
    put(70000, 8);
    put(7000000, 8);        // size
    put(5000000000ULL, 8);  // offset
    put(0x07064b50, 4);
    put(0, 4);
    put(tail_start, 8);
    put(1, 4);
    put(0x06054b50, 4);
    put(0, 2);
    put(0, 2);
    put(0xFFFF, 2);
    put(0xFFFF, 2);
    put(0xFFFFFFFF, 4);
    put(0xFFFFFFFF, 4);
    put(0, 2);
    auto loc = locate_central_directory(tail, archive);
    REQUIRE(loc);
    CHECK(loc->entries == 70000);
    CHECK(loc->offset == 5000000000ULL);
    CHECK(loc->size == 7000000);
}

TEST_CASE("linux/arm64: the aarch64 wheels give that platform's facts, prefixed, no Python range",
          "[pypi]") {
    // Two of PyPI's torch 2.11.0 aarch64 wheels (names and hashes as kb refresh read them)
    // beside a macOS arm64 one, which is not Linux.
    const std::string page = R"({"meta":{"api-version":"1.1"},"name":"torch","files":[
      {"filename":"torch-2.11.0-cp310-cp310-manylinux_2_28_aarch64.whl","url":"../../p/a.whl",
       "hashes":{"sha256":"4cf8687f4aec3900f748d553483ef40e0ac38411c3c48d0a86a438f6d7a99b18"}},
      {"filename":"torch-2.11.0-cp314-cp314-manylinux_2_28_aarch64.whl","url":"../../p/b.whl",
       "hashes":{"sha256":"2bb3cc54bd0dea126b0060bb1ec9de0f9c7f7342d93d436646516b0330cd5be7"}},
      {"filename":"torch-2.11.0-cp314-cp314-macosx_14_0_arm64.whl","url":"../../p/c.whl",
       "hashes":{"sha256":"0000000000000000000000000000000000000000000000000000000000000000"}}]})";
    auto idx = parse_project_index(page, k_page);
    REQUIRE(idx);
    CHECK(idx->linux_wheels("2.11.0").empty());  // no x86_64 wheel here
    REQUIRE(idx->linux_wheels("2.11.0", "aarch64").size() == 2);
    auto missing = release_wheels(idx.value(), "2.11.0");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message == "torch 2.11.0 has no Linux x86_64 wheel on the index");
    auto rw = release_wheels(idx.value(), "2.11.0", "aarch64");
    REQUIRE(rw);
    CHECK(rw->metadata_python == "3.14");
    ReleaseFacts arm;
    wheel_name_facts("PyPI", rw.value(), arm);
    MarkerEnvironment env;
    env.python_version = rw->metadata_python;
    env.platform_machine = "aarch64";
    CoreMetadata tk = metadata("cuda-toolkit-13.0.2.METADATA");
    pin_facts(cite_wheel("PyPI", "torch", *rw->metadata_wheel), metadata("torch-2.11.0.METADATA"),
              env, &tk, "PyPI cuda-toolkit 13.0.2 wheel (sha256 b1)", arm);
    ReleaseFacts out;
    add_platform_facts("linux/arm64", arm, out);
    CHECK(value_of(out, "platforms.linux/arm64.glibc") == "2.28");
    CHECK(value_of(out, "platforms.linux/arm64.default_variant") == "cu130");
    CHECK(value_of(out, "platforms.linux/arm64.variants.cu130.cudnn") == "9.19.0.56");
    CHECK(out.find("platforms.linux/arm64.python.min") == nullptr);
    CHECK(
        out.find("platforms.linux/arm64.variants.cu130.cudnn")
            ->source.find("torch-2.11.0-cp314-cp314-manylinux_2_28_aarch64.whl (sha256 2bb3cc54") !=
        std::string::npos);
    // Every fact written passes the grammar the loader applies.
    for (const auto& f : out.facts) CHECK(td::check_torch_fact(f.path, f.value()).empty());
}

TEST_CASE("wheel names: Linux per machine and the glibc floor of its tag", "[pypi]") {
    auto w = parse_wheel_name("torch-2.9.1-cp311-cp311-manylinux2014_aarch64.whl");
    REQUIRE(w);
    CHECK(w->linux_for("aarch64"));
    CHECK_FALSE(w->linux_x86_64());
    CHECK(w->glibc_floor("aarch64") == "2.17");
    CHECK(w->glibc_floor().empty());
}
