#include "app/output.hpp"

#include <iostream>

#include "app/exit_codes.hpp"

namespace td::app {

void print_error(const std::string& message) {
    std::cerr << "torchdock: error: " << message << "\n";
}

int fail(const Error& e) {
    print_error(e.message);
    return exit_code_for(e.kind);
}

}  // namespace td::app
