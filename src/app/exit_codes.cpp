#include "app/exit_codes.hpp"

namespace td::app {

int exit_code_for(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::Usage:
        case ErrorKind::Config:
        case ErrorKind::Io:
            return k_exit_config;
        case ErrorKind::Environment:
            return k_exit_environment;
        case ErrorKind::Timeout:
            return k_exit_timeout;
        case ErrorKind::CheckFailed:
            return k_exit_check_failed;
    }
    return k_exit_config;
}

}  // namespace td::app
