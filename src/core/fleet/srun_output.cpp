#include "core/fleet/srun_output.hpp"

#include <cctype>

#include "util/strings.hpp"

namespace td {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::string printable(const std::string& s) {
    std::string out;
    for (char c : s.substr(0, 300)) out += c >= 0x20 && c < 0x7f ? c : '?';
    return out;
}

}  // namespace

std::map<int, std::string> split_labelled_output(const std::string& out) {
    std::map<int, std::string> tasks;
    for (const auto& line : lines_of(out)) {
        std::size_t i = line.find_first_not_of(' ');
        if (i == std::string::npos) continue;
        std::size_t digits = i;
        while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits])))
            ++digits;
        if (digits == i || digits - i > 6 || line.compare(digits, 2, ": ") != 0) continue;
        std::string& text = tasks[std::stoi(line.substr(i, digits - i))];
        text += line.substr(digits + 2) + "\n";
    }
    return tasks;
}

std::map<std::string, std::string> srun_node_errors(const std::string& err) {
    std::map<std::string, std::string> out;
    const std::string prefix = "srun: error: ";
    for (const auto& line : lines_of(err)) {
        if (!starts_with(line, prefix)) continue;
        std::string rest = line.substr(prefix.size());
        // "Task launch for StepId=4.0 failed on node node3: Communication connection failure"
        if (auto on = rest.find(" failed on node "); on != std::string::npos) {
            std::string node = rest.substr(on + 16, rest.find(':', on + 16) - on - 16);
            if (!node.empty() && node.find(' ') == std::string::npos) out[node] = printable(line);
            continue;
        }
        auto colon = rest.find(": task ");
        if (colon == std::string::npos || colon == 0 ||
            rest.find_first_of(" \t") < colon)  // a node name has no blank
            continue;
        out[rest.substr(0, colon)] = printable(line);
    }
    return out;
}

std::map<int, std::string> srun_task_nodes(const std::string& err) {
    std::map<int, std::string> out;
    std::map<int, int> seen;
    const std::string prefix = "srun: launching ", host = " on host ", tasks = " tasks: ";
    for (const auto& line : lines_of(err)) {
        if (!starts_with(line, prefix)) continue;
        auto at = line.find(host);
        if (at == std::string::npos) continue;
        auto comma = line.find(", ", at + host.size());
        auto list_at = line.find(tasks, at);
        if (comma == std::string::npos || list_at == std::string::npos) continue;
        std::string node = line.substr(at + host.size(), comma - at - host.size());
        if (node.empty() || node.find_first_of(" \t") != std::string::npos) continue;
        // "0", "0-3", "0,2-3": Slurm's bitmap format of the task IDs.
        for (const auto& part : split(line.substr(list_at + tasks.size()), ',')) {
            auto dash = part.find('-');
            std::string a = part.substr(0, dash),
                        b = dash == std::string::npos ? a : part.substr(dash + 1);
            auto digits = [](const std::string& x) {
                return !x.empty() && x.size() <= 6 &&
                       x.find_first_not_of("0123456789") == std::string::npos;
            };
            if (!digits(a) || !digits(b)) continue;
            int lo = std::stoi(a), hi = std::stoi(b);
            if (hi < lo || hi - lo > 100000) continue;
            for (int t = lo; t <= hi; ++t) {
                ++seen[t];
                out[t] = node;
            }
        }
    }
    for (const auto& [task, count] : seen)
        if (count > 1) out.erase(task);
    return out;
}

std::vector<std::string> srun_launch_errors(const std::string& err) {
    std::vector<std::string> out;
    for (const auto& line : lines_of(err))
        if ((starts_with(line, "srun: error: ") || starts_with(line, "srun: Required") ||
             starts_with(line, "srun: Job ")) &&
            line.find(": task ") == std::string::npos)
            out.push_back(printable(line));
    return out;
}

namespace {

// The fields the fleet reads from a report without asking their type again; a report with
// another type there (a broken or hostile node) is that node's "output" failure.
bool well_formed_report(const nlohmann::json& doc) {
    auto text = [&](const char* key) { return doc.contains(key) && doc[key].is_string(); };
    if (!text("node") || !text("verdict")) return false;
    if (!doc.contains("image")) return true;
    const auto& image = doc["image"];
    return image.is_object() && (!image.contains("missing") || image["missing"].is_boolean());
}

}  // namespace

FleetNode classify_task(const TaskOutcome& t) {
    FleetNode n{t.node, nullptr, "", "", "", "", {}, {}};
    if (!t.output.empty()) {
        auto doc = nlohmann::json::parse(t.output, nullptr, false);
        if (doc.is_object() && doc.contains("kind") && doc["kind"] == "node-check" &&
            !well_formed_report(doc)) {
            if (n.node.empty() && doc.contains("node") && doc["node"].is_string())
                n.node = printable(doc["node"].get<std::string>());
            n.failure_kind = "output";
            n.failure = "its report is not node-check's (node, verdict or image of another type)";
            return n;
        }
        if (doc.is_object() && doc.contains("kind") && doc["kind"] == "node-check") {
            std::string named = doc["node"].get<std::string>();
            if (n.node.empty())
                n.node = named;
            else if (named != n.node)
                n.claimed_node = printable(named);
            n.report = std::move(doc);
            const auto& image = n.report["image"];
            if (image.is_object() && image.value("missing", false)) {
                n.failure_kind = "image";
                n.failure =
                    "the image is not on this node's engine (the pull failed, or it was "
                    "never pulled)";
            }
            return n;
        }
    }
    if (t.timed_out) {
        n.failure_kind = "timeout";
        n.failure = "no report within " + std::to_string(t.timeout_s) +
                    " s: node-check (or its launch) hung on this node";
    } else if (!t.launch_error.empty()) {
        n.failure_kind = "launcher";
        n.failure = t.launch_error;
    } else if (!t.output.empty()) {
        n.failure_kind = "output";
        n.failure = "node-check printed no report" +
                    (t.node_error.empty() ? std::string() : " (" + t.node_error + ")");
    } else {
        n.failure_kind = "launcher";
        n.failure = t.node_error.empty() ? "srun ran no task on this node" : t.node_error;
    }
    return n;
}

}  // namespace td
