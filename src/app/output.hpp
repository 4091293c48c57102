#pragma once
// Printing for every command: one "torchdock: error: ..." line per error, and the exit
// code that goes with it.
#include <string>

#include "util/result.hpp"

namespace td::app {

void print_error(const std::string& message);
// Prints the error and returns its exit code.
int fail(const Error& e);

}  // namespace td::app
