#include "core/fleet/fleet.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/diagnose/fingerprint_diff.hpp"
#include "core/diagnose/fingerprint_flatten.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

using json = nlohmann::json;

std::string human_bytes(long long n) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    char buf[48];
    if (u == 0 || v == static_cast<double>(static_cast<long long>(v)))
        std::snprintf(buf, sizeof buf, "%lld %s", static_cast<long long>(v), units[u]);
    else
        std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

// One node's leaves and list elements by path; an element compares by presence only (what
// differs inside it are its own leaves).
struct NodeLeaves {
    std::string node;
    std::map<std::string, std::string> value;    // path -> compared value
    std::map<std::string, std::string> version;  // path -> FlatLeaf::version
    std::map<std::string, std::string> shown;    // path -> what is shown (an element's summary)
};

NodeLeaves leaves_of(const std::string& node, const json& report) {
    NodeLeaves n{node, {}, {}, {}};
    FlatFingerprint flat = flatten_fingerprint(fleet_fingerprint(report));
    for (const auto& [path, leaf] : flat.leaves) {
        n.value[path] = leaf.value;
        n.version[path] = leaf.version;
        n.shown[path] = leaf.value;
    }
    for (const auto& [path, summary] : flat.elements) {
        n.value[path] = "present";
        n.shown[path] = summary;
    }
    return n;
}

std::string value_at(const NodeLeaves& n, const std::string& path) {
    auto it = n.value.find(path);
    return it == n.value.end() ? k_absent : it->second;
}

// Whether `path` lies inside list element `element` ("findings[DR1].severity" in
// "findings[DR1]").
bool inside(const std::string& path, const std::string& element) {
    return path.size() > element.size() && starts_with(path, element) &&
           (path[element.size()] == '.' || path[element.size()] == '[');
}

bool is_element(const std::string& path) { return !path.empty() && path.back() == ']'; }

}  // namespace

json fleet_fingerprint(const json& report) {
    json fp =
        report.is_object() && report.contains("fingerprint") && report["fingerprint"].is_object()
            ? report["fingerprint"]
            : json::object();
    const json image = report.is_object() && report.contains("image") && report["image"].is_object()
                           ? report["image"]
                           : json::object();
    fp["image"] = {{"id", image.value("id", json())},
                   {"engine", image.value("engine", json())},
                   {"shm_bytes", image.value("shm_bytes", json())}};
    json checks = json::array();
    if (report.is_object() && report.contains("checks") && report["checks"].is_array())
        for (const auto& c : report["checks"])
            if (c.is_object() && c.contains("id") && c["id"].is_string())
                checks.push_back({{"id", c["id"]}, {"status", c.value("status", json())}});
    fp["checks"] = checks;
    return fp;
}

std::string fleet_value(const std::string& path, const std::string& value) {
    if (value == k_absent) return starts_with(path, "env.") ? "(unset)" : "(none)";
    if (ends_with(path, "_bytes") && !value.empty() &&
        value.find_first_not_of("0123456789") == std::string::npos && value.size() < 19)
        return human_bytes(std::stoll(value));
    if (path == "image.id" && starts_with(value, "sha256:")) return value.substr(0, 19);
    return value;
}

std::string fleet_label(const std::string& path) {
    static const std::map<std::string, std::string> names = {
        {"image.shm_bytes", "/dev/shm in containers"},
        {"shm_bytes", "/dev/shm on the host"},
        {"memlock_bytes", "locked memory (ulimit -l)"},
        {"image.id", "image ID"},
        {"image.engine", "container engine"},
        {"infiniband", "/dev/infiniband"},
        {"driver.version", "NVIDIA driver"},
        {"gpus.count", "GPU count"},
    };
    if (auto it = names.find(path); it != names.end()) return it->second;
    if (starts_with(path, "env.")) return path.substr(4);
    if (starts_with(path, "checks[") && ends_with(path, "].status"))
        return "check " + path.substr(7, path.size() - 7 - 8);
    if (starts_with(path, "findings[") && is_element(path))
        return "finding " + path.substr(9, path.size() - 10);
    return path;
}

void judge_node_report(FleetNode& n) {
    n.verdict.clear();
    n.reasons.clear();
    n.waivers.clear();
    if (!n.report.is_object()) return;
    const json& doc = n.report;
    auto text = [](const json& j, const char* key) {
        return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                                                      : std::string();
    };
    std::vector<std::string> drain, unknown;
    if (!n.claimed_node.empty())
        drain.push_back("its report names node " + n.claimed_node + ", but srun ran this task on " +
                        n.node +
                        " (SLURMD_NODENAME or the host name is wrong there: node-check "
                        "--drain would drain another node)");
    const json& image = doc.contains("image") ? doc["image"] : json();
    if (image.is_object() && image.contains("missing") && image["missing"] == true)
        unknown.push_back("the image is not on this node's engine");
    bool has_checks = false;
    if (doc.contains("checks") && doc["checks"].is_array())
        for (const auto& c : doc["checks"]) {
            std::string id = text(c, "id"), status = text(c, "status");
            has_checks = true;
            if (status == "fail" || status == "error")
                drain.push_back(id + " " + text(c, "name") + ": " + status + ": " +
                                text(c, "message"));
            else if (status == "waived")
                n.waivers.push_back(id + " by " + text(c, "waiver_source") + ": " +
                                    text(c, "waiver_reason"));
            else if (status != "pass" && status != "warn" && status != "skip")
                unknown.push_back("check " + (id.empty() ? std::string("?") : id) +
                                  " has no status torchdock gives");
        }
    const json& fp = doc.contains("fingerprint") ? doc["fingerprint"] : json();
    if (fp.is_object() && fp.contains("findings") && fp["findings"].is_array())
        for (const auto& f : fp["findings"])
            if (text(f, "severity") == "error")
                drain.push_back(text(f, "id") + " " + text(f, "title") + ": " + text(f, "detail"));
    const json& pre = doc.contains("preflight") ? doc["preflight"] : json();
    if (text(pre, "answer") == "no")
        drain.push_back("preflight: the image will not run on this node's driver and GPUs");
    if (!has_checks && unknown.empty()) unknown.push_back("its report holds no checks");

    auto rank = [](const std::string& v) { return v == "drain" ? 2 : v == "healthy" ? 0 : 1; };
    std::string evidence = !drain.empty() ? "drain" : !unknown.empty() ? "unknown" : "healthy";
    std::string claimed = text(doc, "verdict");
    if (claimed != "healthy" && claimed != "drain") claimed = "unknown";
    n.verdict = rank(claimed) > rank(evidence) ? claimed : evidence;
    for (auto& r : drain) n.reasons.push_back(std::move(r));
    for (auto& r : unknown) n.reasons.push_back(std::move(r));
    // The node's own word counts only against itself: its first reason when it says worse.
    if (rank(claimed) > rank(evidence)) {
        std::string said = doc.contains("reasons") && doc["reasons"].is_array() &&
                                   !doc["reasons"].empty() && doc["reasons"][0].is_string()
                               ? doc["reasons"][0].get<std::string>()
                               : "its report says " + claimed;
        n.reasons.insert(n.reasons.begin(), said);
    }
}

FleetReport judge_fleet(std::string image, std::vector<FleetNode> nodes) {
    FleetReport r;
    r.image = std::move(image);
    std::vector<NodeLeaves> reported;
    for (auto& n : nodes) {
        judge_node_report(n);
        if (!n.report.is_object()) {
            ++r.failed;
            continue;
        }
        if (n.verdict == "healthy")
            ++r.healthy;
        else if (n.verdict == "drain")
            ++r.drained;
        else
            ++r.unknown;
        reported.push_back(leaves_of(n.node, n.report));
    }
    r.nodes = std::move(nodes);

    std::set<std::string> paths;
    for (const auto& n : reported)
        for (const auto& [p, _] : n.value) paths.insert(p);
    // path -> value -> nodes holding it (in the order given)
    std::map<std::string, std::map<std::string, std::vector<std::string>>> holders;
    for (const auto& p : paths)
        for (const auto& n : reported) holders[p][value_at(n, p)].push_back(n.node);

    // The majority value of each path, "" where the top count is shared (a split).
    std::map<std::string, std::string> majority;
    std::set<std::string> mattering;  // multi-valued paths diff does not rank cosmetic
    for (const auto& [p, values] : holders) {
        if (values.size() < 2) continue;
        std::size_t top = 0, at_top = 0;
        for (const auto& [v, who] : values) top = std::max(top, who.size());
        for (const auto& [v, who] : values)
            if (who.size() == top) {
                ++at_top;
                majority[p] = v;
            }
        if (at_top > 1) majority[p].clear();
        const auto& first = values.begin()->first;
        const auto& second = std::next(values.begin())->first;
        if (rank_difference(p, first, second).category != "cosmetic") mattering.insert(p);
    }

    // An element that differs is one difference: the leaves inside it are not compared.
    auto covered = [&](const NodeLeaves& n, const std::string& p) {
        for (const auto& e : mattering)
            if (is_element(e) && inside(p, e) &&
                (majority[e].empty() || value_at(n, e) != majority[e]))
                return true;
        return false;
    };
    for (const auto& p : mattering) {
        if (majority[p].empty()) {
            bool nested = false;
            for (const auto& e : mattering)
                if (is_element(e) && inside(p, e)) nested = true;
            if (nested) continue;
            FleetSplit s{p, fleet_label(p), "", 0, {}};
            auto first = holders[p].begin();
            auto d = rank_difference(p, first->first, std::next(first)->first);
            s.category = d.category;
            s.weight = d.weight;
            for (const auto& [v, who] : holders[p]) s.values.push_back({fleet_value(p, v), who});
            r.splits.push_back(std::move(s));
            continue;
        }
        const std::string& m = majority[p];
        for (const auto& n : reported) {
            std::string v = value_at(n, p);
            if (v == m || covered(n, p)) continue;
            auto version = [&](const NodeLeaves& x) {
                auto it = x.version.find(p);
                return it == x.version.end() ? std::string() : it->second;
            };
            // An element is ranked on its summary (a finding by its severity), as diff does;
            // the majority's side by any node holding the majority value.
            auto summary = [&](const NodeLeaves& x) {
                auto it = x.shown.find(p);
                return it == x.shown.end() ? k_absent : it->second;
            };
            const NodeLeaves* holder = nullptr;
            for (const auto& o : reported)
                if (value_at(o, p) == m) {
                    holder = &o;
                    break;
                }
            auto d = is_element(p) ? rank_difference(p, summary(*holder), summary(n))
                                   : rank_difference(p, m, v, version(*holder), version(n));
            std::string v_shown =
                is_element(p) && v != k_absent ? "present (" + summary(n) + ")" : fleet_value(p, v);
            r.outliers.push_back({n.node, p, fleet_label(p), v_shown,
                                  is_element(p) && m == k_absent ? "(none)" : fleet_value(p, m),
                                  holders[p][m].size(), d.category, d.weight, d.why});
        }
    }
    std::sort(r.outliers.begin(), r.outliers.end(),
              [](const FleetOutlier& a, const FleetOutlier& b) {
                  if (a.weight != b.weight) return a.weight > b.weight;
                  if (a.node != b.node) return a.node < b.node;
                  return a.path < b.path;
              });
    std::sort(r.splits.begin(), r.splits.end(), [](const FleetSplit& a, const FleetSplit& b) {
        return a.weight != b.weight ? a.weight > b.weight : a.path < b.path;
    });

    // Groups: nodes alike in every path that matters.
    std::map<std::string, std::vector<std::string>> by_signature;
    std::vector<std::string> order;
    for (const auto& n : reported) {
        std::string sig;
        for (const auto& p : mattering) sig += p + "=" + value_at(n, p) + "\n";
        if (!by_signature.count(sig)) order.push_back(sig);
        by_signature[sig].push_back(n.node);
    }
    for (const auto& sig : order) r.groups.push_back({by_signature[sig]});
    std::stable_sort(
        r.groups.begin(), r.groups.end(),
        [](const FleetGroup& a, const FleetGroup& b) { return a.nodes.size() > b.nodes.size(); });
    return r;
}

std::string outlier_line(const FleetOutlier& o) {
    return o.node + ": " + o.label + " " + o.value + " vs " + o.majority + " on " +
           std::to_string(o.majority_nodes) + (o.majority_nodes == 1 ? " node" : " nodes");
}

std::string split_line(const FleetSplit& s) {
    std::vector<std::string> parts;
    for (const auto& [v, who] : s.values) parts.push_back(v + " on " + join(who, ", "));
    return s.label + ": " + join(parts, "; ");
}

}  // namespace td
