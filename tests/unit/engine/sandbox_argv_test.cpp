// The bubblewrap command line of a probe in the sandbox: the image's USER, ENV, WORKDIR,
// VOLUMEs and ENTRYPOINT applied as the engine applies them (engine/sandbox).
#include <unistd.h>

#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <filesystem>
#include <fstream>

#include "engine/sandbox.hpp"

using namespace td;
using namespace td::engine;
using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

// The argument after `flag` (its first occurrence), or "".
std::string after(const std::vector<std::string>& argv, const std::string& flag,
                  std::size_t skip = 0) {
    auto it = std::find(argv.begin(), argv.end(), flag);
    if (it == argv.end() || std::distance(it, argv.end()) <= static_cast<long>(skip + 1)) return {};
    return *(it + 1 + static_cast<long>(skip));
}

bool has_sequence(const std::vector<std::string>& argv, const std::vector<std::string>& seq) {
    return std::search(argv.begin(), argv.end(), seq.begin(), seq.end()) != argv.end();
}

}  // namespace

TEST_CASE(
    "sandbox: bubblewrap's arguments carry the image's configuration as the engine applies it") {
    if (!find_bwrap()) SKIP("bubblewrap is not installed (scripts/install-deps.sh installs it)");
    std::string t = (fs::temp_directory_path() / "td-sbx-XXXXXX").string();
    fs::path root = ::mkdtemp(t.data());
    fs::create_directories(root / "etc");
    std::ofstream(root / "etc/passwd")
        << "root:x:0:0:root:/root:/bin/sh\ntrainer:x:1000:1001::/home/trainer:/bin/sh\n";
    std::ofstream(root / "etc/group") << "root:x:0:\n";
    ImageInfo info;
    info.id = "sha256:" + std::string(64, 'e');
    info.user = "trainer";
    info.working_dir = "/app";
    info.env = {"PATH=/app/.venv/bin:/usr/bin", "A=1"};
    info.entrypoint = {"/usr/bin/uv", "run"};
    info.volumes = {"/data", "relative", "/x/../etc"};
    SandboxHost host(root, info, "oci:/layout:train");

    ContainerRunSpec spec;
    spec.image = info.id;
    spec.cmd = {"/opt/torchdock-probes/probe-env", "--json"};
    spec.env = {"A=2"};
    spec.binds = {"/usr/libexec/torchdock/probes:/opt/torchdock-probes:ro"};
    auto argv = host.bwrap_argv(spec);
    REQUIRE(argv);
    const auto& a = argv.value();
    CHECK(after(a, "--uid") == "1000");
    CHECK(after(a, "--gid") == "1001");
    CHECK(after(a, "--chdir") == "/app");
    CHECK(has_sequence(a, {"--unshare-user", "--unshare-pid", "--unshare-ipc"}));
    CHECK(std::find(a.begin(), a.end(), "--unshare-net") != a.end());
    CHECK(has_sequence(a, {"--cap-drop", "ALL"}));
    CHECK(std::find(a.begin(), a.end(), "--cap-add") == a.end());  // not root
    CHECK(has_sequence(a, {"--ro-bind", "/usr/libexec/torchdock/probes", "/opt/torchdock-probes"}));
    CHECK(has_sequence(a, {"--tmpfs", "/data"}));
    CHECK(!has_sequence(a, {"--tmpfs", "relative"}));
    CHECK(!has_sequence(a, {"--tmpfs", "/x/../etc"}));
    CHECK(has_sequence(a, {"--remount-ro", "/"}));
    CHECK(has_sequence(a, {"--setenv", "A", "2"}));
    CHECK(has_sequence(a, {"--setenv", "HOME", "/home/trainer"}));
    CHECK(has_sequence(a, {"--setenv", "PATH", "/app/.venv/bin:/usr/bin"}));
    // The ENTRYPOINT never receives a probe's command unless kept.
    CHECK(has_sequence(a, {"--", "/opt/torchdock-probes/probe-env", "--json"}));
    spec.keep_entrypoint = true;
    CHECK(has_sequence(host.bwrap_argv(spec).value(),
                       {"--", "/usr/bin/uv", "run", "/opt/torchdock-probes/probe-env"}));

    spec.network_mode = "host";
    auto shared = host.bwrap_argv(spec).value();
    CHECK(std::find(shared.begin(), shared.end(), "--unshare-net") == shared.end());
    spec.gpus = -1;
    CHECK_THAT(host.bwrap_argv(spec).error().message, ContainsSubstring("binds no GPU"));
    spec.gpus = 0;
    spec.image = "other";
    CHECK(!host.bwrap_argv(spec));

    info.user = "";
    SandboxHost as_root(root, info, "oci:/layout:train");
    spec.image = info.id;
    auto r = as_root.bwrap_argv(spec).value();
    CHECK(after(r, "--uid") == "0");
    CHECK(has_sequence(r, {"--cap-add", "CAP_DAC_OVERRIDE"}));
    info.user = "ghost";
    SandboxHost missing(root, info, "x");
    spec.image = info.id;
    CHECK_THAT(missing.bwrap_argv(spec).error().message,
               ContainsSubstring("unable to find user ghost"));
    CHECK(as_root.inspect_image("oci:/layout:train").value().has_value());
    CHECK(!as_root.inspect_image("something-else").value().has_value());
    fs::remove_all(root);
}
