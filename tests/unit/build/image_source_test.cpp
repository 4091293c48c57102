// Image sources (the transports), the OCI and `docker save` documents, a layer's entries,
// how the engine resolves USER and builds a process's environment, and sizes.
#include "core/build/image_source.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

const std::string k_d1 = "sha256:" + std::string(64, 'a');
const std::string k_d2 = "sha256:" + std::string(64, 'b');
const std::string k_d3 = "sha256:" + std::string(64, 'c');

}  // namespace

TEST_CASE("image sources: transports as skopeo names them, bare names stay the engine's") {
    auto engine = parse_image_source("tdreal/torch:uv");
    REQUIRE(engine);
    CHECK(engine->in_engine());
    auto reg = parse_image_source("docker://127.0.0.1:5000/team/torch:2.9.1");
    REQUIRE(reg);
    CHECK(reg->transport == ImageSource::Transport::Registry);
    CHECK(reg->registry_ref.registry == "127.0.0.1:5000");
    CHECK(reg->registry_ref.repository == "team/torch");
    CHECK(reg->registry_ref.tag == "2.9.1");
    auto oci = parse_image_source("oci:/srv/layout:train");
    REQUIRE(oci);
    CHECK(oci->transport == ImageSource::Transport::OciDir);
    CHECK(oci->path == "/srv/layout");
    CHECK(oci->ref == "train");
    auto saved = parse_image_source("docker-archive:/tmp/x.tar:tdreal/torch:uv");
    REQUIRE(saved);
    CHECK(saved->path == "/tmp/x.tar");
    CHECK(saved->ref == "tdreal/torch:uv");
    auto sqsh = parse_image_source("squashfs:/shared/images/torch+2.9.1.sqsh");
    REQUIRE(sqsh);
    CHECK(sqsh->transport == ImageSource::Transport::Squashfs);
    CHECK(sqsh->path == "/shared/images/torch+2.9.1.sqsh");
    CHECK(parse_image_source("oci-archive:/tmp/o.tar")->ref.empty());
}

TEST_CASE("image sources: what is refused, and why") {
    auto unknown = parse_image_source("dokcer://x/y:1");
    REQUIRE(!unknown);
    CHECK_THAT(unknown.error().message, ContainsSubstring("unknown transport"));
    CHECK_THAT(unknown.error().message, ContainsSubstring("docker://"));
    CHECK_THAT(parse_image_source("containers-storage:x").error().message,
               ContainsSubstring("not one torchdock reads"));
    CHECK_THAT(parse_image_source("oci:").error().message, ContainsSubstring("names no file"));
    CHECK_THAT(parse_image_source("oci::ref").error().message, ContainsSubstring("both parts"));
    CHECK_THAT(parse_image_source("docker://").error().message,
               ContainsSubstring("names no image"));
    CHECK(!parse_image_source("docker://UPPER/Case:1"));
    CHECK(!parse_image_source(std::string("oci:/tmp/a\nb")));
}

TEST_CASE("OCI documents: an index, a manifest and a configuration read strictly") {
    std::string index =
        R"({"schemaVersion":2,"manifests":[
      {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
        k_d1 +
        R"(","size":10,"platform":{"os":"linux","architecture":"arm64","variant":"v8"},
       "annotations":{"org.opencontainers.image.ref.name":"arm"}},
      {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
        k_d2 + R"(","size":10,"platform":{"os":"linux","architecture":"amd64"}}]})";
    auto parsed = parse_index(index);
    REQUIRE(parsed);
    REQUIRE(parsed->size() == 2);
    CHECK(parsed->at(0).platform == "linux/arm64");
    CHECK(parsed->at(0).ref_name == "arm");
    CHECK(pick_manifest(parsed.value(), "", "linux/amd64")->digest == k_d2);
    CHECK(pick_manifest(parsed.value(), "arm", "linux/amd64")->digest == k_d1);
    auto none = pick_manifest(parsed.value(), "", "linux/s390x");
    REQUIRE(!none);
    CHECK_THAT(none.error().message, ContainsSubstring("linux/arm64"));
    CHECK_THAT(pick_manifest(parsed.value(), "nope", "").error().message,
               ContainsSubstring("no image named \"nope\""));

    std::string manifest =
        R"({"schemaVersion":2,"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":")" +
        k_d1 +
        R"(","size":5},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":")" +
        k_d2 + R"(","size":7}]})";
    auto m = parse_manifest(manifest);
    REQUIRE(m);
    CHECK(m->config.digest == k_d1);
    REQUIRE(m->layers.size() == 1);
    std::string foreign = manifest;
    foreign.replace(foreign.find("tar+gzip"), 8, "foreign+x");
    CHECK(!parse_manifest(foreign));
    CHECK_THAT(parse_index(R"({"manifests":[{"digest":"md5:abc"}]})").error().message,
               ContainsSubstring("sha256"));

    auto config = parse_image_config(R"({"architecture":"amd64","os":"linux","config":{
      "Env":["PATH=/opt/venv/bin:/usr/bin","A=1"],"Entrypoint":["/usr/bin/uv","run"],"Cmd":null,
      "User":"trainer","WorkingDir":"/app","Labels":{"k":"v"},"Volumes":{"/data":{}}},
      "rootfs":{"type":"layers","diff_ids":[")" +
                                     k_d3 + R"("]}})");
    REQUIRE(config);
    CHECK(config->env.size() == 2);
    CHECK(config->entrypoint == std::vector<std::string>{"/usr/bin/uv", "run"});
    CHECK(config->cmd.empty());
    CHECK(config->user == "trainer");
    CHECK(config->working_dir == "/app");
    CHECK(config->labels.at("k") == "v");
    CHECK(config->volumes == std::vector<std::string>{"/data"});
    CHECK(config->diff_ids == std::vector<std::string>{k_d3});
    CHECK(!parse_image_config(R"({"config":{"Env":"PATH=/bin"}})"));
}

TEST_CASE("docker save: manifest.json and the image a reference picks") {
    auto saved = parse_saved_manifest(
        R"([{"Config":"a.json","RepoTags":["tdreal/torch:uv"],"Layers":["1/layer.tar"]},
                                          {"Config":"b.json","RepoTags":["tdreal/torch:nonccl"],"Layers":["1/layer.tar","2/layer.tar"]}])");
    REQUIRE(saved);
    CHECK(pick_saved_image(saved.value(), "tdreal/torch:nonccl")->config == "b.json");
    auto ambiguous = pick_saved_image(saved.value(), "");
    REQUIRE(!ambiguous);
    CHECK_THAT(ambiguous.error().message, ContainsSubstring("holds 2 images"));
    CHECK_THAT(pick_saved_image(saved.value(), "other:1").error().message,
               ContainsSubstring("tdreal/torch:uv"));
    CHECK(!parse_saved_manifest("[]"));
    CHECK(!parse_saved_manifest(R"([{"RepoTags":[]}])"));
}

TEST_CASE("layer entries: whiteouts, opaque markers and paths that could leave the root") {
    auto normal = classify_layer_entry("./usr/lib/x.so");
    CHECK(normal.kind == LayerEntry::Kind::Normal);
    CHECK(normal.path == "usr/lib/x.so");
    CHECK(classify_layer_entry("etc/").path == "etc");
    auto wh = classify_layer_entry("opt/venv/.wh.torch");
    CHECK(wh.kind == LayerEntry::Kind::Whiteout);
    CHECK(wh.path == "opt/venv/torch");
    auto opq = classify_layer_entry("opt/venv/.wh..wh..opq");
    CHECK(opq.kind == LayerEntry::Kind::Opaque);
    CHECK(opq.path == "opt/venv");
    CHECK(classify_layer_entry("../etc/passwd").kind == LayerEntry::Kind::Refused);
    CHECK(classify_layer_entry("a/../../etc").kind == LayerEntry::Kind::Refused);
    CHECK(classify_layer_entry("/etc/passwd").kind == LayerEntry::Kind::Refused);
    CHECK(classify_layer_entry("a/.wh.").kind == LayerEntry::Kind::Refused);
    CHECK(classify_layer_entry("./").path.empty());
}

TEST_CASE("USER and the environment, as the engine resolves them") {
    std::string passwd =
        "root:x:0:0:root:/root:/bin/bash\ntrainer:x:1000:1001::/home/trainer:/bin/sh\n";
    std::string group = "root:x:0:\nvideo:x:44:\n";
    CHECK(resolve_image_user("", passwd, group)->home == "/root");
    auto named = resolve_image_user("trainer", passwd, group);
    REQUIRE(named);
    CHECK(named->uid == 1000);
    CHECK(named->gid == 1001);
    CHECK(named->home == "/home/trainer");
    auto numeric = resolve_image_user("4242", passwd, group);
    REQUIRE(numeric);
    CHECK(numeric->uid == 4242);
    CHECK(numeric->gid == 0);
    CHECK(numeric->home == "/");
    CHECK(resolve_image_user("trainer:video", passwd, group)->gid == 44);
    CHECK(resolve_image_user("1000:7", passwd, group)->gid == 7);
    CHECK_THAT(resolve_image_user("ghost", passwd, group).error().message,
               ContainsSubstring("unable to find user ghost"));
    CHECK(!resolve_image_user("trainer:nogroup", passwd, group));

    auto env = engine_environment({"PATH=/opt/venv/bin:/usr/bin", "A=1"}, {"A=2", "LD_PRELOAD="},
                                  "h", "/root");
    CHECK(env == std::vector<std::string>{"PATH=/opt/venv/bin:/usr/bin", "A=2",
                                          "LD_PRELOAD=", "HOSTNAME=h", "HOME=/root"});
    auto bare = engine_environment({}, {}, "h", "/home/trainer");
    CHECK(bare.front() == "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    CHECK(bare.back() == "HOME=/home/trainer");
}

TEST_CASE("sizes") {
    CHECK(parse_byte_size("4096").value() == 4096);
    CHECK(parse_byte_size("50G").value() == (std::uint64_t{50} << 30));
    CHECK(parse_byte_size("512MiB").value() == (std::uint64_t{512} << 20));
    CHECK(parse_byte_size("1tb").value() == (std::uint64_t{1} << 40));
    CHECK(parse_byte_size("0").value() == 0);
    CHECK(!parse_byte_size("5X"));
    CHECK(!parse_byte_size("G"));
    CHECK(!parse_byte_size("-1G"));
}
