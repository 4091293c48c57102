#pragma once
// The probes that are not python's, run together in one container by probes/batch
// (probe-batch): the runner's command line and its framed output, read back into what each
// probe printed and how it ended (probes/batch/README.md is the contract). Pure.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace td {

// How one probe of a batch ended, as probe-batch framed it.
struct BatchFrame {
    std::string name;
    int exit_code = -1;  // -1: a signal ended it
    int signal = 0;
    bool timed_out = false;
    bool overflow = false;  // its stdout did not fit the batch's output: run it alone
    double seconds = 0;
    std::string out, err;
};

struct BatchOutput {
    std::vector<BatchFrame> frames;
    bool complete = false;  // the end line came, counting every frame
    std::string problem;    // why the output stops being readable, where it does
};

// probe-batch's arguments after its own path: `--timeout=S` and, per probe, `--probe=NAME:N`
// followed by its argv (the program's absolute path first).
std::vector<std::string> batch_arguments(
    int timeout_s, const std::vector<std::pair<std::string, std::vector<std::string>>>& probes);

// Reads the frames in order; a frame cut short or a header that is not one ends the reading
// (with `problem` saying where), keeping the frames before it.
BatchOutput parse_batch_output(std::string_view text);

}  // namespace td
