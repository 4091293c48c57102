#include "app/output.hpp"

#include <filesystem>
#include <iostream>

#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "engine/files.hpp"

namespace td::app {

void print_error(const std::string& message) {
    std::cerr << paint_stderr(Paint::error, "torchdock: error:") << " " << message << "\n";
}

int fail(const Error& e) {
    print_error(e.message);
    return exit_code_for(e.kind);
}

bool to_stdout(const std::optional<std::string>& dest) { return dest && *dest == "-"; }

bool any_to_stdout(const std::vector<ReportFlag>& flags) {
    for (const auto& [name, dest] : flags)
        if (to_stdout(*dest)) return true;
    return false;
}

Status check_report_flags(const std::vector<ReportFlag>& flags) {
    std::string on_stdout;
    for (const auto& [name, dest] : flags) {
        if (!*dest) continue;
        if (to_stdout(*dest)) {
            if (!on_stdout.empty())
                return Error{ErrorKind::Usage, on_stdout + " and " + name +
                                                   " both print to stdout; give one of them a "
                                                   "file: " +
                                                   name + "=FILE"};
            on_stdout = name;
            continue;
        }
        if (auto st = engine::check_output_file(name, **dest); !st) return st;
    }
    return ok_status();
}

Status emit_report(const std::optional<std::string>& dest, const std::string& text) {
    if (!dest) return ok_status();
    if (to_stdout(dest)) {
        std::cout << text << std::flush;
        return ok_status();
    }
    std::filesystem::path p = *dest;
    return engine::write_files(p.parent_path().empty() ? "." : p.parent_path(),
                               {{p.filename().string(), text}});
}

}  // namespace td::app
