#pragma once
// The one mapping from outcomes to exit codes (see README "Exit codes").
#include "util/result.hpp"

namespace td::app {

enum ExitCode : int {
    k_exit_ok = 0,            // everything passed
    k_exit_check_failed = 1,  // a check failed, or nothing ran
    k_exit_config = 2,        // usage or configuration error
    k_exit_environment = 3,   // a needed part is unavailable
    k_exit_timeout = 4,
    k_exit_interrupted = 130,  // Ctrl-C / SIGTERM, as shells report it
};

int exit_code_for(ErrorKind kind);

}  // namespace td::app
