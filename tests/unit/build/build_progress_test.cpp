// BuildProgress reads BuildKit's plain progress stream. The logs below follow what
// `DOCKER_BUILDKIT=1 docker build --progress=plain` prints with docker 20.10 (BuildKit 0.8:
// "#N <vertex name>" then "#N sha256:<vertex digest>", statuses, "#N <seconds> <log line>",
// "#N CACHED" / "#N DONE 1.2s" / "#N ERROR: ...", then an error summary and the final error).
#include "core/build/build_progress.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/strings.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

const std::string k_base_digest =
    "sha256:b16cef8cbcb20935c0f052e37fc3d38dc92bfec0bcfb894c328547f81e932d67";

std::string vertex_digest(int n) {
    // 64 hex digits, different per vertex, like the "#N sha256:..." line BuildKit 0.8 prints.
    std::string hex = "0123456789abcdef";
    std::string out = "sha256:";
    for (int i = 0; i < 64; ++i) out += hex[static_cast<std::size_t>((i * 7 + n * 13) % 16)];
    return out;
}

const std::string k_step3_title =
    "[3/7] RUN --mount=type=cache,target=/var/cache/apt,sharing=locked     "
    "--mount=type=cache,target=/var/lib/apt,sharing=locked     apt-get update && apt-get install "
    "-y "
    "--no-install-recommends python3-nope";

const std::string k_step3_error =
    "ERROR: executor failed running [/bin/bash -o pipefail -c apt-get update && apt-get install -y "
    "--no-install-recommends python3-nope]: exit code: 100";

const std::string k_final_error =
    "failed to solve with frontend dockerfile.v0: failed to build LLB: executor failed running "
    "[/bin/bash -o "
    "pipefail -c apt-get update && apt-get install -y --no-install-recommends python3-nope]: exit "
    "code: 100";

// The preamble every build starts with: internal vertices, the base image, one cached step.
std::vector<std::string> preamble() {
    return {
        "#1 [internal] load build definition from Dockerfile",
        "#1 " + vertex_digest(1),
        "#1 transferring dockerfile: 2.48kB done",
        "#1 DONE 0.0s",
        "",
        "#2 [internal] load .dockerignore",
        "#2 " + vertex_digest(2),
        "#2 transferring context: 2B done",
        "#2 DONE 0.0s",
        "",
        "#3 [internal] load metadata for 127.0.0.1:5000/library/debian@" + k_base_digest,
        "#3 " + vertex_digest(3),
        "#3 DONE 0.0s",
        "",
        "#4 [internal] settings cache mount permissions",
        "#4 " + vertex_digest(4),
        "#4 DONE 0.0s",
        "",
        "#5 [1/7] FROM 127.0.0.1:5000/library/debian@" + k_base_digest,
        "#5 " + vertex_digest(5),
        "#5 resolve 127.0.0.1:5000/library/debian@" + k_base_digest + " 0.0s done",
        "#5 " + k_base_digest + " 1.02kB / 1.02kB done",
        "#5 sha256:6d4a8ac1d4b0c0a3e1b7b1f6bd5cc2d5ea4cf9b6bda9e33c4fd84f0fd3e1a6f1 29.13MB / "
        "29.13MB 0.6s done",
        "#5 extracting sha256:6d4a8ac1d4b0c0a3e1b7b1f6bd5cc2d5ea4cf9b6bda9e33c4fd84f0fd3e1a6f1",
        "#5 extracting sha256:6d4a8ac1d4b0c0a3e1b7b1f6bd5cc2d5ea4cf9b6bda9e33c4fd84f0fd3e1a6f1 "
        "1.3s done",
        "#5 DONE 2.0s",
        "",
        "#6 [2/7] RUN rm -f /etc/apt/apt.conf.d/docker-clean; echo "
        "'Binary::apt::APT::Keep-Downloaded-Packages "
        "\"true\";' > /etc/apt/apt.conf.d/keep-cache",
        "#6 " + vertex_digest(6),
        "#6 CACHED",
        "",
    };
}

// The apt step's output, as "#7 <seconds> <line>".
const std::vector<std::string> k_apt_output = {
    "Get:1 http://debian-mirror.example/debian bookworm InRelease [151 kB]",
    "Get:2 http://debian-mirror.example/debian bookworm-updates InRelease [55.4 kB]",
    "Get:3 http://debian-mirror.example/debian-security bookworm-security InRelease [48.0 kB]",
    "Fetched 254 kB in 1s (201 kB/s)",
    "Reading package lists...",
    "Reading package lists...",
    "Building dependency tree...",
    "Reading state information...",
    "E: Unable to locate package python3-nope",
};
const std::vector<std::string> k_apt_times = {"0.532", "0.611", "0.688", "1.904", "2.473",
                                              "3.012", "3.095", "3.097", "3.101"};

std::vector<std::string> failed_apt_log() {
    auto log = preamble();
    log.push_back("#7 " + k_step3_title);
    log.push_back("#7 " + vertex_digest(7));
    for (std::size_t i = 0; i < k_apt_output.size(); ++i)
        log.push_back("#7 " + k_apt_times[i] + " " + k_apt_output[i]);
    log.push_back("#7 " + k_step3_error);
    // Docker 20.10's summary after a failed build (the plain printer has already printed
    // and dropped the vertex's logs, so the block is empty), then the CLI's error.
    log.push_back("------");
    log.push_back(" > " + k_step3_title + ":");
    log.push_back("------");
    log.push_back(k_final_error);
    return log;
}

std::vector<std::string> successful_log() {
    auto log = preamble();
    const std::vector<std::pair<std::string, std::string>> steps = {
        {"[3/7] RUN --mount=type=cache,target=/var/cache/apt,sharing=locked apt-get update && "
         "apt-get install -y "
         "--no-install-recommends python3 python3-venv",
         "Setting up python3 (3.11.2-1+b1) ..."},
        {"[4/7] RUN python3 -m venv /opt/venv", "done"},
        {"[5/7] RUN --mount=type=cache,target=/root/.cache/pip pip install --index-url "
         "https://torch-index.example/whl/cpu torch==2.4.1",
         "Successfully installed torch-2.4.1+cpu"},
        {"[6/7] RUN useradd --create-home --uid 1000 trainer",
         "useradd warning: trainer's uid 1000 outside of range"},
        {"[7/7] WORKDIR /workspace", ""},
    };
    int id = 7;
    for (const auto& [title, output] : steps) {
        std::string n = "#" + std::to_string(id);
        log.push_back(n + " " + title);
        log.push_back(n + " " + vertex_digest(id));
        if (!output.empty()) log.push_back(n + " 1.250 " + output);
        log.push_back(n + " DONE 1.3s");
        log.push_back("");
        ++id;
    }
    std::string n = "#" + std::to_string(id);
    log.push_back(n + " exporting to image");
    log.push_back(n + " " + vertex_digest(id));
    log.push_back(n + " exporting layers");
    log.push_back(n + " exporting layers 3.1s done");
    log.push_back(n +
                  " writing image "
                  "sha256:4bc5a4f0b1d0b8e3a7c3e1b1d6a2f7b9e0c4d3a2b1f0e9d8c7b6a5f4e3d2c1b0 done");
    log.push_back(n + " naming to docker.io/library/torchdock-cpu:2.4.1 done");
    log.push_back(n + " DONE 3.2s");
    return log;
}

struct Fed {
    std::vector<std::string> started;  // what feed() returned, in order
};

Fed feed_all(BuildProgress& p, const std::vector<std::string>& lines) {
    Fed out;
    for (const auto& line : lines)
        if (auto s = p.feed(line)) out.started.push_back(*s);
    return out;
}

}  // namespace

TEST_CASE("build progress: a successful docker 20.10 build reports its steps in order") {
    BuildProgress p;
    auto fed = feed_all(p, successful_log());
    REQUIRE(fed.started.size() == 7);
    CHECK(fed.started[0] == "[1/7] FROM 127.0.0.1:5000/library/debian@" + k_base_digest);
    CHECK(starts_with(fed.started[1], "[2/7] RUN rm -f /etc/apt/apt.conf.d/docker-clean"));
    CHECK(starts_with(fed.started[2], "[3/7] RUN --mount=type=cache,target=/var/cache/apt"));
    CHECK(fed.started[6] == "[7/7] WORKDIR /workspace");
    for (std::size_t i = 0; i < fed.started.size(); ++i)
        CHECK(starts_with(fed.started[i], "[" + std::to_string(i + 1) + "/7] "));
    CHECK(p.steps() == 7);
    CHECK(p.cached() == 1);
    CHECK(p.failed_step().empty());
    CHECK(p.failure_tail(15).empty());
    CHECK(p.final_error().empty());
}

TEST_CASE("build progress: internal vertices and exporting are not steps") {
    BuildProgress p;
    CHECK_FALSE(p.feed("#1 [internal] load build definition from Dockerfile"));
    CHECK_FALSE(p.feed("#1 " + vertex_digest(1)));
    CHECK_FALSE(p.feed("#1 transferring dockerfile: 2.48kB done"));
    CHECK_FALSE(p.feed("#1 DONE 0.0s"));
    CHECK_FALSE(p.feed("#2 [internal] load .dockerignore"));
    // A slash after the closing bracket (an image name) does not make a step.
    CHECK_FALSE(p.feed("#3 [internal] load metadata for 127.0.0.1:5000/library/debian:bookworm"));
    CHECK_FALSE(p.feed("#3 [auth] library/debian:pull token for registry-1.docker.io"));
    CHECK_FALSE(p.feed("#4 [internal] settings cache mount permissions"));
    CHECK_FALSE(p.feed("#12 exporting to image"));
    CHECK_FALSE(
        p.feed("#12 writing image "
               "sha256:4bc5a4f0b1d0b8e3a7c3e1b1d6a2f7b9e0c4d3a2b1f0e9d8c7b6a5f4e3d2c1b0 done"));
    CHECK(p.steps() == 0);
    CHECK(p.cached() == 0);
}

TEST_CASE("build progress: a fully cached rebuild counts every cached step") {
    BuildProgress p;
    auto log = preamble();  // [1/7] done, [2/7] cached
    for (int i = 3; i <= 7; ++i) {
        std::string n = "#" + std::to_string(i + 4);
        log.push_back(n + " [" + std::to_string(i) + "/7] RUN step " + std::to_string(i));
        log.push_back(n + " " + vertex_digest(i + 4));
        log.push_back(n + " CACHED");
        log.push_back("");
    }
    auto fed = feed_all(p, log);
    CHECK(fed.started.size() == 7);
    CHECK(p.steps() == 7);
    CHECK(p.cached() == 6);
    CHECK(p.failed_step().empty());
}

TEST_CASE("build progress: CACHED on an internal vertex is not a cached step") {
    BuildProgress p;
    CHECK_FALSE(p.feed("#4 [internal] settings cache mount permissions"));
    CHECK_FALSE(p.feed("#4 CACHED"));
    CHECK(p.cached() == 0);
    CHECK(p.feed("#6 [2/3] RUN true") == std::optional<std::string>("[2/3] RUN true"));
    CHECK_FALSE(p.feed("#6 CACHED"));
    CHECK(p.cached() == 1);
    CHECK(p.steps() == 3);
}

TEST_CASE("build progress: a failed apt step names the step, its last output lines and the error") {
    BuildProgress p;
    auto fed = feed_all(p, failed_apt_log());
    REQUIRE(fed.started.size() == 3);
    CHECK(fed.started[2] == k_step3_title);
    CHECK(p.steps() == 7);
    CHECK(p.cached() == 1);
    CHECK(p.failed_step() == k_step3_title);

    // The last n output lines, timestamps dropped, then the vertex's error line.
    CHECK(p.failure_tail(3) ==
          std::vector<std::string>{"Building dependency tree...", "Reading state information...",
                                   "E: Unable to locate package python3-nope", k_step3_error});
    // Fewer lines than asked for: all of them (no sha256:, DONE or status lines of other vertices).
    auto all = k_apt_output;
    all.push_back(k_step3_error);
    CHECK(p.failure_tail(15) == all);
    CHECK(p.failure_tail(0) == std::vector<std::string>{k_step3_error});
    // The summary block ("------", " > [3/7] RUN ...:") is not the final error; the CLI's line is.
    CHECK(p.final_error() == k_final_error);
}

TEST_CASE("build progress: feed returns the step title only the first time the vertex appears") {
    BuildProgress p;
    for (const auto& line : preamble()) (void)p.feed(line);
    CHECK(p.feed("#7 " + k_step3_title) == std::optional<std::string>(k_step3_title));
    CHECK_FALSE(p.feed("#7 " + vertex_digest(7)));
    CHECK_FALSE(
        p.feed("#7 0.532 Get:1 http://debian-mirror.example/debian bookworm InRelease [151 kB]"));
    // BuildKit 0.8 switches between busy vertices: "#7 ..." and the other vertex, then
    // prints the vertex name (and digest) again when it comes back to #7.
    CHECK_FALSE(p.feed("#7 ..."));
    CHECK_FALSE(p.feed(""));
    CHECK_FALSE(p.feed("#8 [internal] load build context"));
    CHECK_FALSE(p.feed("#8 transferring context: 2B done"));
    CHECK_FALSE(p.feed("#8 DONE 0.0s"));
    CHECK_FALSE(p.feed(""));
    CHECK_FALSE(p.feed("#7 " + k_step3_title));
    CHECK_FALSE(p.feed("#7 " + vertex_digest(7)));
    CHECK_FALSE(p.feed("#7 1.904 Fetched 254 kB in 1s (201 kB/s)"));
    CHECK_FALSE(p.feed("#7 DONE 12.3s"));
    // A later step is announced once as well.
    CHECK(p.feed("#9 [4/7] RUN python3 -m venv /opt/venv") ==
          std::optional<std::string>("[4/7] RUN python3 -m venv /opt/venv"));
    CHECK_FALSE(p.feed("#9 [4/7] RUN python3 -m venv /opt/venv"));
    CHECK(p.steps() == 7);
    CHECK(p.cached() == 1);
    CHECK(p.failed_step().empty());
}

TEST_CASE("build progress: multi-stage titles like [stage-0 5/7] are steps") {
    BuildProgress p;
    CHECK(p.feed("#9 [stage-0 5/7] RUN pip install torch==2.4.1") ==
          std::optional<std::string>("[stage-0 5/7] RUN pip install torch==2.4.1"));
    CHECK(p.steps() == 7);
    CHECK(p.feed("#4 [builder 2/3] RUN make") ==
          std::optional<std::string>("[builder 2/3] RUN make"));
    CHECK(p.steps() == 10);  // stages add up: 7 + 3
    CHECK_FALSE(p.feed("#4 CACHED"));
    CHECK(p.cached() == 1);
    CHECK(p.feed("#9 ERROR: executor failed running [/bin/sh -c pip install torch==2.4.1]: exit "
                 "code: 1") == std::nullopt);
    CHECK(p.failed_step() == "[stage-0 5/7] RUN pip install torch==2.4.1");
}

TEST_CASE("build progress: odd titles are not steps") {
    BuildProgress p;
    CHECK_FALSE(p.feed("#1 [a/b] RUN x"));  // not numbers
    CHECK_FALSE(p.feed("#2 [3/] RUN x"));   // no total
    CHECK_FALSE(p.feed("#3 [x]"));          // too short for a step
    CHECK_FALSE(p.feed("#4 resolve image config for docker.io/docker/dockerfile:1"));  // no bracket
    CHECK_FALSE(p.feed("#x [1/2] RUN x"));  // not a vertex number
    CHECK_FALSE(p.feed("# [1/2] RUN x"));   // no vertex number
    CHECK_FALSE(p.feed("#5"));              // no space at all
    CHECK_FALSE(p.feed("[1/2] RUN x"));     // not a progress line
    CHECK(p.steps() == 0);
}

TEST_CASE("build progress: a failed internal vertex is the failed step when no step failed") {
    BuildProgress p;
    const std::string meta = "[internal] load metadata for 127.0.0.1:5000/library/debian:bookworm";
    const std::string err =
        "ERROR: failed to do request: Head "
        "\"http://127.0.0.1:5000/v2/library/debian/manifests/bookworm\": "
        "dial tcp 127.0.0.1:5000: connect: connection refused";
    for (const auto& line : std::vector<std::string>{
             "#1 [internal] load build definition from Dockerfile", "#1 " + vertex_digest(1),
             "#1 transferring dockerfile: 1.97kB done", "#1 DONE 0.0s", "", "#3 " + meta,
             "#3 " + vertex_digest(3), "#3 " + err, "------", " > " + meta + ":", "------",
             "failed to solve with frontend dockerfile.v0: failed to create LLB definition: failed "
             "to do request: "
             "Head \"http://127.0.0.1:5000/v2/library/debian/manifests/bookworm\": dial tcp "
             "127.0.0.1:5000: "
             "connect: connection refused"})
        CHECK_FALSE(p.feed(line));
    CHECK(p.steps() == 0);
    CHECK(p.failed_step() == meta);
    CHECK(p.failure_tail(15) == std::vector<std::string>{err});
    CHECK_THAT(p.final_error(), ContainsSubstring("failed to create LLB definition"));
}

TEST_CASE("build progress: a step's error wins over an internal vertex's") {
    BuildProgress p;
    (void)p.feed("#2 [internal] load build context");
    (void)p.feed("#2 ERROR: context canceled by something");
    CHECK(p.failed_step() == "[internal] load build context");
    (void)p.feed("#7 [3/4] RUN false");
    (void)p.feed("#7 ERROR: executor failed running [/bin/sh -c false]: exit code: 1");
    CHECK(p.failed_step() == "[3/4] RUN false");
    // A later internal error does not take it back.
    (void)p.feed("#8 [internal] load something else");
    (void)p.feed("#8 ERROR: boom");
    CHECK(p.failed_step() == "[3/4] RUN false");
    CHECK(p.failure_tail(5) ==
          std::vector<std::string>{
              "ERROR: executor failed running [/bin/sh -c false]: exit code: 1"});
}

TEST_CASE("build progress: buildx-style errors and carriage returns") {
    BuildProgress p;
    CHECK(p.feed("#7 [3/3] RUN apt-get install -y nope\r") ==
          std::optional<std::string>("[3/3] RUN apt-get install -y nope"));
    CHECK_FALSE(p.feed("#7 0.301 E: Unable to locate package nope\r"));
    CHECK_FALSE(
        p.feed("#7 ERROR: process \"/bin/bash -o pipefail -c apt-get install -y nope\" did not "
               "complete successfully: "
               "exit code: 100\r"));
    CHECK_FALSE(p.feed("\r"));
    CHECK_FALSE(
        p.feed("ERROR: failed to solve: process \"/bin/bash -o pipefail -c apt-get install -y "
               "nope\" did not complete "
               "successfully: exit code: 100\r"));
    CHECK(p.failed_step() == "[3/3] RUN apt-get install -y nope");
    CHECK(p.failure_tail(1) ==
          std::vector<std::string>{
              "E: Unable to locate package nope",
              "ERROR: process \"/bin/bash -o pipefail -c apt-get install -y nope\" did not "
              "complete successfully: exit code: 100"});
    CHECK(p.final_error() ==
          "ERROR: failed to solve: process \"/bin/bash -o pipefail -c apt-get install -y nope\" "
          "did not complete "
          "successfully: exit code: 100");
}

TEST_CASE("build progress: only error-looking lines outside vertices become the final error") {
    BuildProgress p;
    (void)p.feed("failed to solve with frontend dockerfile.v0: failed to build LLB: first");
    (void)p.feed("------");
    (void)p.feed(" > [3/7] RUN x:");
    (void)p.feed("Sending build context to Docker daemon  2.048kB");
    CHECK(p.final_error() ==
          "failed to solve with frontend dockerfile.v0: failed to build LLB: first");
    (void)p.feed("error: something else");
    CHECK(p.final_error() == "error: something else");  // the last one counts
}

TEST_CASE("build progress: output lines keep text that only looks like a timestamp") {
    BuildProgress p;
    (void)p.feed("#7 [3/4] RUN ./script");
    (void)p.feed("#7 0.100 first");
    (void)p.feed("#7 12.34 ");           // an empty output line
    (void)p.feed("#7 0.2x not a time");  // kept whole
    (void)p.feed("#7 plain text");       // no timestamp at all
    (void)p.feed("#7 ERROR: executor failed running [/bin/sh -c ./script]: exit code: 2");
    CHECK(p.failure_tail(10) ==
          std::vector<std::string>{"first", "", "0.2x not a time", "plain text",
                                   "ERROR: executor failed running [/bin/sh -c ./script]: "
                                   "exit code: 2"});
}

TEST_CASE("build progress: a long step output keeps only its last 200 lines") {
    BuildProgress p;
    (void)p.feed("#7 [3/4] RUN seq 1 1000");
    for (int i = 1; i <= 1000; ++i) (void)p.feed("#7 1.000 " + std::to_string(i));
    (void)p.feed("#7 ERROR: executor failed running [/bin/sh -c seq 1 1000]: exit code: 1");
    auto tail = p.failure_tail(1000);
    REQUIRE(tail.size() == 201);
    CHECK(tail.front() == "801");
    CHECK(tail[199] == "1000");
}

// ---------------------------------------------------------------------------------------
// Regression tests for bugs found by these tests and fixed (tag [regression]).
// Each fails today; see the report that came with these tests.
// ---------------------------------------------------------------------------------------

TEST_CASE("build progress: context-switch lines are not output of the failed step",
          "[regression]") {
    // BuildKit 0.8's plain printer writes "#7 ..." when it leaves a busy vertex and prints
    // "#7 <name>" and "#7 <digest>" again when it comes back (printVtx in progressui/printer.go).
    BuildProgress p;
    (void)p.feed("#7 [3/7] RUN apt-get update");
    (void)p.feed("#7 " + vertex_digest(7));
    (void)p.feed("#7 0.532 Get:1 http://debian-mirror.example/debian bookworm InRelease [151 kB]");
    (void)p.feed("#7 ...");
    (void)p.feed("");
    (void)p.feed("#8 [internal] load build context");
    (void)p.feed("#8 DONE 0.0s");
    (void)p.feed("");
    (void)p.feed("#7 [3/7] RUN apt-get update");
    (void)p.feed("#7 " + vertex_digest(7));
    (void)p.feed("#7 3.101 E: Some index files failed to download.");
    (void)p.feed("#7 ERROR: executor failed running [/bin/sh -c apt-get update]: exit code: 100");
    CHECK(p.failure_tail(15) ==
          std::vector<std::string>{
              "Get:1 http://debian-mirror.example/debian bookworm InRelease [151 kB]",
              "E: Some index files failed to download.",
              "ERROR: executor failed running [/bin/sh -c apt-get update]: exit code: 100"});
}

TEST_CASE("build progress: the error summary's repeated log lines are not counted twice",
          "[regression]") {
    // Newer BuildKit (docker 23+ / buildx) repeats the failed vertex's last log lines, with
    // their "#7 <seconds>" prefix, between "------" lines after the build.
    BuildProgress p;
    (void)p.feed("#7 [3/3] RUN apt-get install -y nope");
    (void)p.feed("#7 0.296 Reading package lists...");
    (void)p.feed("#7 0.307 E: Unable to locate package nope");
    (void)p.feed(
        "#7 ERROR: process \"/bin/sh -c apt-get install -y nope\" did not complete successfully: "
        "exit code: 100");
    (void)p.feed("------");
    (void)p.feed(" > [3/3] RUN apt-get install -y nope:");
    (void)p.feed("#7 0.296 Reading package lists...");
    (void)p.feed("#7 0.307 E: Unable to locate package nope");
    (void)p.feed("------");
    (void)p.feed(
        "ERROR: failed to solve: process \"/bin/sh -c apt-get install -y nope\" did not complete "
        "successfully: exit code: 100");
    CHECK(p.failure_tail(15) ==
          std::vector<std::string>{
              "Reading package lists...", "E: Unable to locate package nope",
              "ERROR: process \"/bin/sh -c apt-get install -y nope\" did not complete "
              "successfully: exit code: 100"});
}

TEST_CASE("build progress: an over-long vertex number does not throw", "[regression]") {
    BuildProgress p;
    CHECK_NOTHROW(p.feed("#99999999999 hello"));
    CHECK_NOTHROW(p.feed("#1 [1/99999999999] RUN x"));
}

TEST_CASE("build progress: multi-stage builds never report more cached steps than steps",
          "[regression]") {
    BuildProgress p;
    for (int i = 1; i <= 3; ++i) {
        (void)p.feed("#" + std::to_string(10 + i) + " [builder " + std::to_string(i) + "/3] RUN b" +
                     std::to_string(i));
        (void)p.feed("#" + std::to_string(10 + i) + " CACHED");
    }
    for (int i = 1; i <= 4; ++i) {
        (void)p.feed("#" + std::to_string(20 + i) + " [stage-1 " + std::to_string(i) + "/4] RUN s" +
                     std::to_string(i));
        (void)p.feed("#" + std::to_string(20 + i) + " CACHED");
    }
    CHECK(p.cached() == 7);
    CHECK(p.steps() >= p.cached());
}
