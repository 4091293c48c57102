#pragma once
// The one process runner: argv (no shell), an explicit environment, a mandatory timeout,
// stdout and stderr captured separately, and exit / signal / timeout / interruption told
// apart. The child runs in its own process group, which is killed (TERM, then KILL after
// a grace period) on timeout or interruption, so no grandchild outlives us.
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace td::engine {

struct ProcessSpec {
    std::vector<std::string> argv;         // argv[0] is looked up in PATH if it has no '/'
    std::vector<std::string> env;          // complete environment, "NAME=value"
    std::chrono::milliseconds timeout{0};  // required: > 0
    std::string cwd;                       // empty: inherit
    // Called with each complete line of output as it arrives (stdout and stderr); a line
    // longer than 1 MiB is handed over in 1 MiB pieces.
    std::function<void(const std::string& line, bool is_stderr)> on_line;
    // Each stream keeps at most its last `max_output` bytes (memory stays bounded whatever
    // a child prints); ProcessResult says when bytes were dropped.
    std::size_t max_output = std::size_t{16} << 20;
};

struct ProcessResult {
    enum class Outcome { Exited, Signaled, TimedOut, Interrupted };
    Outcome outcome = Outcome::Exited;
    int exit_code = -1;          // when Exited
    int signal = 0;              // when Signaled
    std::string out, err;        // the last ProcessSpec::max_output bytes of each stream
    bool out_truncated = false;  // earlier bytes were dropped
    bool err_truncated = false;
    double seconds = 0;
    double timeout_seconds = 0;
    bool ok() const { return outcome == Outcome::Exited && exit_code == 0; }
    std::string describe() const;  // "exit code 2", "killed by signal 9", "timed out after 30 s"
};

// Fails (Environment) only when the program cannot be started at all.
Result<ProcessResult> run_process(const ProcessSpec& spec);

// The current environment with `overrides` applied ("NAME=value" replaces NAME).
std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides);

// Finds `program` in PATH; empty if not found.
std::string find_program(const std::string& program);

}  // namespace td::engine
