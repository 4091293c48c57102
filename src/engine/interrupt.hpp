#pragma once
// Ctrl-C and SIGTERM: the first one sets a flag that every running process and loop in
// engine/ checks, so work stops promptly and cleans up; the exit code is then 130.

namespace td::engine {

void install_interrupt_handlers();
bool interrupted();
// For tests: pretend a signal arrived.
void request_interrupt();

}  // namespace td::engine
