#include "report/build_summary.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/json/json_text.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"

namespace td {
const char* build_result_name(BuildRecord::Result r) {
    switch (r) {
        case BuildRecord::Result::Built:
            return "built";
        case BuildRecord::Result::Failed:
            return "FAILED";
        case BuildRecord::Result::Interrupted:
            return "interrupted";
        case BuildRecord::Result::Skipped:
            return "skipped";
    }
    return "?";
}
}  // namespace td

namespace td::report {

std::string human_size(long long bytes) {
    if (bytes <= 0) return "-";
    char buf[32];
    double b = static_cast<double>(bytes);
    if (b >= 1e9)
        std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
    else if (b >= 1e6)
        std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.0f kB", b / 1e3);
    return buf;
}

std::string build_table(const std::vector<BuildRecord>& records) {
    std::vector<std::vector<std::string>> rows;
    int built = 0, failed = 0;
    for (const auto& r : records) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.1f s", r.seconds);
        std::string id = r.image_id.size() > 19 ? r.image_id.substr(7, 12)
                                                : (r.image_id.empty() ? "-" : r.image_id);
        std::string cache =
            r.steps > 0 ? std::to_string(r.cached) + "/" + std::to_string(r.steps) : "-";
        rows.push_back({r.variant, r.pushed_to.empty() ? r.reference : r.pushed_to, id,
                        human_size(r.size_bytes), r.seconds > 0 ? seconds : "-", cache,
                        build_result_name(r.result)});
        built += r.result == BuildRecord::Result::Built;
        failed += r.result == BuildRecord::Result::Failed;
    }
    return format_table({"VARIANT", "IMAGE", "ID", "SIZE", "TIME", "CACHED", "RESULT"}, rows) +
           std::to_string(built) + " built, " + std::to_string(failed) + " failed\n";
}

std::string build_json(const std::vector<BuildRecord>& records) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : records)
        list.push_back({{"variant", r.variant},
                        {"image", r.reference},
                        {"result", build_result_name(r.result)},
                        {"image_id", r.image_id},
                        {"size_bytes", r.size_bytes},
                        {"seconds", r.seconds},
                        {"steps", r.steps},
                        {"cached_steps", r.cached},
                        {"pushed_to", r.pushed_to},
                        {"failed_step", r.failed_step},
                        {"failure_tail", r.failure_tail},
                        {"error", r.error},
                        {"hint", r.hint},
                        {"log", r.log_path}});
    return json_text(nlohmann::json{{"schema", 1}, {"builds", list}});
}

std::string build_failures(const std::vector<BuildRecord>& records) {
    std::string out;
    for (const auto& r : records) {
        if (r.result != BuildRecord::Result::Failed) continue;
        // Step text and log lines come from the build: shown escaped, never acted on.
        out += r.variant + ": build failed";
        if (!r.failed_step.empty()) out += " at step " + terminal_text(r.failed_step);
        out += "\n";
        for (const auto& line : r.failure_tail) out += "  | " + terminal_text(line) + "\n";
        if (!r.error.empty()) out += "  " + terminal_text(r.error) + "\n";
        if (!r.hint.empty()) out += "  hint: " + terminal_text(r.hint) + "\n";
        if (!r.log_path.empty()) out += "  full log: " + r.log_path + "\n";
    }
    return out;
}

}  // namespace td::report
