// probe-batch's command line and frames (core/validate/probe_batch, probes/batch/README.md):
// each probe's output comes back byte for byte, and output that stops being a frame is said
// to, keeping what came before.
#include "core/validate/probe_batch.hpp"

#include <catch2/catch_test_macros.hpp>
#include <string>

using namespace td;

namespace {

std::string frame(const std::string& name, const std::string& out, const std::string& err,
                  const std::string& flags = "exit=0 signal=0 timed_out=0 overflow=0") {
    return "torchdock-batch " + name + " " + flags +
           " seconds=0.250 out=" + std::to_string(out.size()) +
           " err=" + std::to_string(err.size()) + "\n" + out + err + "\n";
}

}  // namespace

TEST_CASE("probe-batch's arguments count each probe's argv") {
    auto args =
        batch_arguments(120, {{"libs", {"/opt/torchdock-probes/probe-libs"}},
                              {"nccl", {"/opt/torchdock-probes/probe-nccl", "--sizes=1K"}}});
    CHECK(args == std::vector<std::string>{"--timeout=120", "--probe=libs:1",
                                           "/opt/torchdock-probes/probe-libs", "--probe=nccl:2",
                                           "/opt/torchdock-probes/probe-nccl", "--sizes=1K"});
}

TEST_CASE("frames read back byte for byte, whatever the output holds") {
    // stdout with lines that look like headers, stderr without a final newline
    std::string out1 = "torchdock-batch fake exit=0\n{\"probe\":\"cuda\"}\n";
    std::string err1 = "warning\nno newline";
    std::string text = frame("cuda", out1, err1) +
                       frame("nccl", "", "killed", "exit=-1 signal=9 timed_out=1 overflow=0") +
                       frame("libs", "", "", "exit=0 signal=0 timed_out=0 overflow=1") +
                       "torchdock-batch-end 3\n";
    auto b = parse_batch_output(text);
    CHECK(b.complete);
    CHECK(b.problem.empty());
    REQUIRE(b.frames.size() == 3);
    CHECK(b.frames[0].name == "cuda");
    CHECK(b.frames[0].out == out1);
    CHECK(b.frames[0].err == err1);
    CHECK(b.frames[0].exit_code == 0);
    CHECK(b.frames[0].seconds == 0.25);
    CHECK(b.frames[1].timed_out);
    CHECK(b.frames[1].signal == 9);
    CHECK(b.frames[1].exit_code == -1);
    CHECK(b.frames[2].overflow);
}

TEST_CASE("output that stops being frames says where, keeping the frames before") {
    std::string one = frame("cuda", "{}\n", "");
    std::string two = frame("nccl", "0123456789", "");
    auto cut = parse_batch_output(one + two.substr(0, two.find('\n') + 5));
    CHECK_FALSE(cut.complete);
    CHECK(cut.frames.size() == 1);
    CHECK(cut.problem.find("nccl is cut short") != std::string::npos);
    auto in_header = parse_batch_output(one + two.substr(0, 30));
    CHECK(in_header.frames.size() == 1);
    CHECK(in_header.problem.find("inside a frame's header") != std::string::npos);

    auto no_end = parse_batch_output(one);
    CHECK_FALSE(no_end.complete);
    CHECK(no_end.problem.find("without the end line after 1 frames") != std::string::npos);

    auto garbage = parse_batch_output(one + "Segmentation fault\n");
    CHECK(garbage.frames.size() == 1);
    CHECK(garbage.problem.find("not a frame header") != std::string::npos);

    auto miscount = parse_batch_output(one + "torchdock-batch-end 2\n");
    CHECK_FALSE(miscount.complete);
    CHECK(miscount.problem.find("counts 2 frames, 1 were read") != std::string::npos);

    // a header whose fields are out of order or malformed is not one
    for (const std::string bad :
         {"torchdock-batch cuda signal=0 exit=0 timed_out=0 overflow=0 seconds=1 out=0 err=0\n\n",
          "torchdock-batch cuda exit=x signal=0 timed_out=0 overflow=0 seconds=1 out=0 err=0\n\n",
          "torchdock-batch cuda exit=0 signal=0 timed_out=2 overflow=0 seconds=1 out=0 err=0\n\n",
          "torchdock-batch cuda exit=0 signal=0 timed_out=0 overflow=0 seconds=1 out=-1 err=0\n\n",
          "torchdock-batch  exit=0 signal=0 timed_out=0 overflow=0 seconds=1 out=0 err=0\n\n"}) {
        auto b = parse_batch_output(bad);
        CHECK(b.frames.empty());
        CHECK_FALSE(b.problem.empty());
    }
    // a length past the end of the text
    auto past = parse_batch_output(
        "torchdock-batch cuda exit=0 signal=0 timed_out=0 overflow=0 seconds=1 out=99 err=0\n{}\n");
    CHECK(past.frames.empty());
    CHECK(past.problem.find("cut short") != std::string::npos);
}
