#pragma once
// What torchdock says on the terminal besides its results: progress lines, details for
// -v, and colour. Results go to stdout; everything here goes to stderr.
//
//   -q/--quiet     no progress lines, no notes; errors and results only
//   -v/--verbose   also details (each probe, each request)
//   --color WHEN   auto (a terminal, and NO_COLOR unset or empty), always, never
//
// Progress lines are plain and timestamped ("[14:02:07] build debian-cpu-debian12: ..."),
// on a terminal and in CI logs alike, so a watchdog that waits for output sees the work.
#include <string>
#include <string_view>

namespace td::app {

enum class Verbosity { quiet = -1, normal = 0, verbose = 1 };
enum class Paint { error, warn, ok, dim, bold };

// Set once from the global flags, before any command runs. `color` is auto|always|never
// (checked by the flag parser). `no_color` is $NO_COLOR, `stderr_tty`/`stdout_tty` whether
// those streams are terminals.
void configure_console(Verbosity verbosity, std::string_view color, bool no_color, bool stdout_tty,
                       bool stderr_tty);

bool quiet();
bool verbose();

// One progress line on stderr, timestamped; nothing with -q. Safe from any thread.
void progress(std::string_view line);
// One detail line, only with -v.
void detail(std::string_view line);
// A note that is not an error ("torchdock: note: ..."); nothing with -q.
void note(std::string_view line);

// `text` in the colour of `style` when colour is on for that stream, else as it is.
std::string paint_stdout(Paint style, std::string_view text);
std::string paint_stderr(Paint style, std::string_view text);

// A report table with its verdict words (FAIL, FAILED, ERROR, WARN, WAIVED, PASS, built)
// coloured when colour is on for stdout; as it is otherwise. Escape codes take no column,
// so the table's alignment holds.
std::string paint_verdicts(const std::string& table);

// "12.3 s"
std::string format_seconds(double seconds);

// Now, formatted with strftime's `format`, in UTC or local time ("%H:%M:%S" local for
// progress lines, "%Y-%m-%d" UTC for the knowledge base's date).
std::string now_text(const char* format, bool utc = false);

}  // namespace td::app
