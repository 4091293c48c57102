#include "core/fleet/node_check.hpp"

#include <cctype>

#include "core/json/json_text.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

using json = nlohmann::json;

// One printable ASCII line: anything else (an image's text included) becomes '?'.
std::string one_line(const std::string& s, std::size_t max) {
    std::string out;
    for (char c : s) {
        if (out.size() >= max) break;
        out += c >= 0x20 && c < 0x7f ? c : (c == '\n' || c == '\t' ? ' ' : '?');
    }
    if (s.size() > max) out += "...";
    return out;
}

std::string check_line(const CheckResult& c) {
    std::string line = c.id + " " + c.name + ": " + c.message;
    if (!c.observed.empty() || !c.expected.empty())
        line += " (observed " + (c.observed.empty() ? std::string("-") : c.observed) +
                ", expected " + (c.expected.empty() ? std::string("-") : c.expected) + ")";
    return line;
}

}  // namespace

std::vector<std::string> waivers_applied(const std::vector<CheckResult>& checks) {
    std::vector<std::string> out;
    for (const auto& c : checks)
        if (c.status == "waived")
            out.push_back(c.id + " by " +
                          (c.waiver_source.empty() ? std::string("a waiver") : c.waiver_source));
    return out;
}

NodeVerdict judge_node(const NodeCheckFacts& f) {
    NodeVerdict v;
    v.waived = waivers_applied(f.checks);
    auto drain = [&](std::string reason) {
        v.state = "drain";
        v.reasons.push_back(std::move(reason));
    };
    // Out of time: a check that could not be judged is not evidence against the node.
    const bool out_of_time = f.deadline_passed || !f.out_of_time.empty();
    std::vector<std::string> not_judged;
    if (!f.engine_error.empty()) drain("the container engine does not answer: " + f.engine_error);
    if (f.fingerprint.is_object() && f.fingerprint.contains("findings") &&
        f.fingerprint["findings"].is_array())
        for (const auto& finding : f.fingerprint["findings"]) {
            std::string line = string_at(finding, "id") + " " + string_at(finding, "title") + ": " +
                               string_at(finding, "detail");
            if (string_at(finding, "severity") == "error")
                drain(line);
            else if (string_at(finding, "severity") == "warning")
                v.notes.push_back(line);
        }
    if (f.preflight && f.preflight->answer == "no") {
        std::vector<std::string> why;
        if (!f.preflight->driver_ok) why.push_back(f.preflight->driver_verdict);
        for (const auto& t : f.preflight->targets)
            if (!t.ok) why.push_back(t.gpu + ": " + join(t.reasons, "; "));
        drain("preflight: the image will not run on this node's driver and GPUs: " +
              join(why, "; "));
    }
    for (const auto& c : f.checks) {
        if (c.status == "fail" || (c.status == "error" && !out_of_time))
            drain(check_line(c));
        else if (c.status == "error")
            not_judged.push_back(check_line(c));
        else if (c.status == "warn")
            v.notes.push_back(check_line(c));
    }
    if (out_of_time) {
        std::string why = "the checks did not finish within " + std::to_string(f.deadline_s) +
                          " s" + (f.out_of_time.empty() ? "" : ": " + f.out_of_time);
        if (v.state == "healthy") {
            v.state = "unknown";
            v.reasons.push_back(std::move(why));
            for (auto& line : not_judged) v.reasons.push_back(std::move(line));
        } else {
            v.notes.push_back(std::move(why));
        }
        return v;
    }
    if (v.state == "healthy" && (f.image_missing || !f.image_error.empty())) {
        v.state = "unknown";
        v.reasons.push_back(f.image_missing
                                ? "image " + f.image.reference +
                                      " is not on this node's engine (pull it first)"
                                : "the image could not be checked here: " + f.image_error);
    }
    // An image this node reads only by its files, or under emulation, does not run here as
    // jobs would run it: its checks say nothing of this node (the platform comes from the
    // image's files, never its config's claim).
    if (v.state == "healthy" && !f.image.tier.empty() && f.image.tier != "full") {
        v.state = "unknown";
        v.reasons.push_back("image " + f.image.reference + " is read in the " + f.image.tier +
                            " tier here: its code does not run natively on this node");
    }
    return v;
}

Status check_node_name(const std::string& name, const std::string& source) {
    auto refuse = [&](const std::string& why) -> Status {
        return Error{ErrorKind::Usage,
                     source + " " + quote_value(name) + " is not one node's name: " + why +
                         " (a node name is letters, digits and ._- only, not starting with - "
                         "or .; set --node NAME)"};
    };
    if (name.empty()) return refuse("it is empty");
    if (name.size() > 255) return refuse("it is longer than 255 characters");
    if (name.find_first_of("[],") != std::string::npos)
        return refuse("it is a Slurm host list, which names several nodes");
    if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789._-") != std::string::npos)
        return refuse("it holds other characters");
    if (name.front() == '-' || name.front() == '.')
        return refuse("it starts with " + std::string(1, name.front()));
    std::string lower;
    for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "all")
        return refuse("scontrol takes the keyword ALL (in any case) as every node of the cluster");
    return ok_status();
}

bool single_node_record(const std::string& answer, const std::string& name) {
    std::size_t records = 0;
    bool named = false;
    std::size_t start = 0;
    while (start < answer.size()) {
        auto end = answer.find('\n', start);
        if (end == std::string::npos) end = answer.size();
        std::string line = answer.substr(start, end - start);
        start = end + 1;
        if (!starts_with(line, "NodeName=")) continue;
        ++records;
        std::string first = line.substr(9, line.find_first_of(" \t\r", 9) - 9);
        named = first == name;
    }
    return records == 1 && named;
}

std::string nhc_line(const std::string& node, const NodeVerdict& v) {
    std::string waived =
        v.waived.empty() ? std::string() : " (waived: " + one_line(join(v.waived, ", "), 400) + ")";
    if (v.state == "healthy") return "OK: torchdock: " + one_line(node, 64) + ": healthy" + waived;
    std::string more =
        v.reasons.size() > 1 ? " (+" + std::to_string(v.reasons.size() - 1) + " more)" : "";
    return std::string(v.state == "drain" ? "ERROR" : "UNKNOWN") +
           ": torchdock: " + one_line(node, 64) + ": " +
           one_line(v.reasons.empty() ? std::string("-") : v.reasons.front(), 400) + more + waived;
}

std::string drain_reason(const NodeVerdict& v) {
    return one_line("torchdock: " + (v.reasons.empty() ? v.state : v.reasons.front()), 197);
}

json node_check_report(const NodeCheckFacts& f, const NodeVerdict& v) {
    json checks = json::array(), waivers = json::array();
    for (const auto& c : f.checks) {
        checks.push_back({{"id", c.id},
                          {"name", c.name},
                          {"status", c.status},
                          {"observed", c.observed},
                          {"expected", c.expected},
                          {"message", c.message}});
        if (c.status != "waived") continue;
        checks.back()["outcome"] = c.outcome;
        checks.back()["waiver_source"] = c.waiver_source;
        checks.back()["waiver_reason"] = c.waiver_reason;
        waivers.push_back({{"id", c.id},
                           {"outcome", c.outcome},
                           {"source", c.waiver_source},
                           {"reason", c.waiver_reason}});
    }
    json preflight = json::object();
    if (f.preflight) {
        json targets = json::array();
        for (const auto& t : f.preflight->targets)
            targets.push_back({{"gpu", t.gpu}, {"cc", t.cc}, {"ok", t.ok}, {"reasons", t.reasons}});
        preflight = {{"answer", f.preflight->answer},
                     {"driver_ok", f.preflight->driver_ok},
                     {"driver_verdict", f.preflight->driver_verdict},
                     {"targets", targets},
                     {"notes", f.preflight->notes}};
    } else {
        preflight = {{"answer", "skipped"}, {"reason", f.preflight_skipped}};
    }
    const ImageOnNode& im = f.image;
    return {{"schema", 1},
            {"kind", "node-check"},
            {"node", f.node},
            {"verdict", v.state},
            {"reasons", v.reasons},
            {"notes", v.notes},
            {"waivers", waivers},
            {"nhc", nhc_line(f.node, v)},
            {"seconds", f.seconds},
            {"deadline_s", f.deadline_s},
            {"image",
             {{"reference", im.reference},
              {"id", im.id.empty() ? json() : json(im.id)},
              {"repo_digests", im.repo_digests},
              {"engine", im.engine},
              {"shm_bytes", im.shm_bytes ? json(*im.shm_bytes) : json()},
              {"tier", im.tier},
              {"missing", f.image_missing}}},
            {"fingerprint", f.fingerprint},
            {"checks", checks},
            {"preflight", preflight}};
}

}  // namespace td
