#include "core/fleet/allreduce.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "util/strings.hpp"

namespace td {
namespace {

using json = nlohmann::json;

// A rank's or a baseline's number, or `fallback` when the key is absent or not a number (a
// report is what a node printed: nothing in it is trusted to have its type).
template <class T>
T number(const json& j, const char* key, T fallback) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<T>() : fallback;
}

// A JSON integer >= 0 (a float, even 0.0, a string or a negative number is not).
bool non_negative_integer(const json& j) {
    return j.is_number_unsigned() || (j.is_number_integer() && j.get<long long>() >= 0);
}

// The largest message a rank may claim (1 TiB): far over any all-reduce size, so bytes and
// element counts stay far from overflow.
constexpr unsigned long long k_max_size_bytes = 1ULL << 40;

bool all_digits(const std::string& s) {
    return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
    });
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string bytes_text(long long b) {
    if (b >= (1LL << 20) && b % (1LL << 20) == 0) return std::to_string(b >> 20) + " MiB";
    if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
    return std::to_string(b) + " bytes";
}

std::string who(const RankOutcome& r) {
    return "rank " + std::to_string(r.rank) + (r.node.empty() ? "" : " on " + r.node);
}

}  // namespace

Result<SlurmRank> slurm_rank(const std::map<std::string, std::string>& env) {
    auto get = [&](const char* name) {
        auto it = env.find(name);
        return it == env.end() ? std::string() : it->second;
    };
    auto number = [&](const char* name, const std::string& fallback) -> Result<int> {
        std::string v = get(name);
        if (v.empty()) v = fallback;
        if (v.empty())
            return Error{ErrorKind::Environment,
                         std::string(name) +
                             " is not set: allreduce-rank runs as a task of an srun step "
                             "(torchdock allreduce starts it)"};
        if (!all_digits(v))
            return Error{ErrorKind::Environment,
                         std::string(name) + "=" + quote_value(v) + " is not a number"};
        return std::stoi(v);
    };
    SlurmRank r;
    auto rank = number("SLURM_PROCID", "");
    if (!rank) return rank.error();
    std::string ntasks = get("SLURM_STEP_NUM_TASKS");
    auto world = number("SLURM_NTASKS", ntasks);
    if (!world) return world.error();
    auto local = number("SLURM_LOCALID", "0");
    if (!local) return local.error();
    r.rank = rank.value();
    r.world = world.value();
    r.local_rank = local.value();
    if (r.world < 1 || r.rank >= r.world)
        return Error{ErrorKind::Environment, "SLURM_PROCID " + std::to_string(r.rank) +
                                                 " is not below SLURM_NTASKS " +
                                                 std::to_string(r.world)};
    r.node = get("SLURMD_NODENAME");
    r.nodelist =
        get("SLURM_STEP_NODELIST").empty() ? get("SLURM_JOB_NODELIST") : get("SLURM_STEP_NODELIST");
    r.job_id = get("SLURM_JOB_ID");
    r.step_id = get("SLURM_STEP_ID").empty() ? "0" : get("SLURM_STEP_ID");
    if (r.node.empty() || r.nodelist.empty() || !all_digits(r.job_id) || !all_digits(r.step_id))
        return Error{ErrorKind::Environment,
                     "SLURMD_NODENAME, SLURM_STEP_NODELIST (or SLURM_JOB_NODELIST), SLURM_JOB_ID "
                     "and SLURM_STEP_ID must be set as srun sets them"};
    // The same on every rank of the step, and another for the next step or job.
    long long seed = std::stoll(r.job_id) * 31 + std::stoll(r.step_id);
    r.port = 20000 + static_cast<int>(seed % 10000);
    return r;
}

std::string node_address(const std::string& text) {
    auto at = text.find("NodeAddr=");
    if (at == std::string::npos) return {};
    auto end = text.find_first_of(" \t\r\n", at);
    return text.substr(at + 9, end == std::string::npos ? std::string::npos : end - at - 9);
}

// A NET plugin's name as NCCL prints it ("IB", "IBext_v8", "Socket", "AWS Libfabric") as the
// transport it is: IB and its external builds are InfiniBand (or RoCE) verbs.
std::string net_transport(const std::string& plugin, bool gdr) {
    if (starts_with(plugin, "IB")) return gdr ? "NET/IB/GDRDMA" : "NET/IB";
    return "NET/" + plugin;
}

std::vector<std::string> nccl_transports(const std::vector<std::string>& lines) {
    std::set<std::string> found;
    for (const auto& line : lines) {
        auto info = line.find("NCCL INFO ");
        if (info == std::string::npos) continue;
        std::string msg = line.substr(info + 10);
        // A connection: "Channel 01/0 : 16[0] -> 0[0] [receive] via NET/IBext_v8/7/GDRDMA",
        // "... via P2P/IPC/read", "... via SHM/direct/direct" (ring-order lines have no via).
        if (auto via = msg.find(" via "); via != std::string::npos) {
            std::string t = msg.substr(via + 5);
            if (starts_with(t, "NET/")) {
                std::string plugin = t.substr(4, t.find('/', 4) - 4);
                found.insert(net_transport(plugin, t.find("/GDRDMA") != std::string::npos));
            } else {
                for (const char* kind : {"P2P", "SHM", "NVLS", "COLLNET", "CollNet"})
                    if (starts_with(t, kind))
                        found.insert(std::string(kind) == "COLLNET" ? "CollNet" : kind);
            }
        }
        // "Using network Socket", "Using network IBext": the plugin the communicator took
        // (a "NET/IB : Using [RO]; OOB eth0" line is no evidence: NCCL 2.24+ prints it with no
        // IB device before falling back).
        if (starts_with(msg, "Using network ")) {
            std::string plugin = msg.substr(14, msg.find_first_of(" \r\n", 14) - 14);
            if (!plugin.empty()) found.insert(net_transport(plugin, false));
        }
        // NVLink SHARP in use (NVLS has no "via" line; "multicast support is available" only
        // says the hardware could).
        if (starts_with(msg, "NVLS comm ") || starts_with(msg, "Connected NVLS"))
            found.insert("NVLS");
    }
    if (found.count("NET/IB/GDRDMA")) found.erase("NET/IB");
    return {found.begin(), found.end()};
}

AllreduceResult judge_allreduce(std::vector<RankOutcome> ranks, int world, const json& baseline,
                                double tolerance) {
    AllreduceResult r;
    r.world = world;
    std::map<int, RankOutcome> by_rank;
    for (auto& o : ranks)
        if (o.rank >= 0 && o.rank < world) by_rank[o.rank] = std::move(o);
    for (int i = 0; i < world; ++i)
        if (!by_rank.count(i)) by_rank[i] = {i, "", "missing", "no report came back", nullptr, {}};
    for (auto& [i, o] : by_rank) r.ranks.push_back(std::move(o));

    // Every rank must finish with its own `pass`; a rank's `fail` is a failure whatever its
    // counts say. Ranks that finished (pass or fail) still give their sizes for the table.
    bool all_finished = true;
    std::vector<std::string> lines;
    bool any_ib = false;
    // A rank that hung first: the others' timeouts and refused connections follow from it.
    for (const auto& o : r.ranks)
        if (o.status == "timeout") r.findings.push_back(who(o) + " hung: " + o.reason);
    for (const auto& o : r.ranks) {
        if (r.backend.empty() && o.data.is_object() && o.data.contains("backend") &&
            o.data["backend"].is_string())
            r.backend = o.data["backend"];
        if (o.status == "fail")
            r.findings.push_back(who(o) + " reported fail: " + o.reason);
        else if (o.status != "pass" && o.status != "timeout")
            r.findings.push_back(who(o) + ": " + o.reason +
                                 (o.status == "missing" || o.status == "error"
                                      ? std::string()
                                      : " (status " + quote_value(o.status, 40) + ")"));
        if (o.data.is_object() && o.data.contains("world_size") &&
            (!o.data["world_size"].is_number_integer() ||
             o.data["world_size"].get<long long>() != world))
            r.findings.push_back(who(o) + " ran in a world of " +
                                 terminal_text(o.data["world_size"].dump(), 40) + " ranks, not " +
                                 std::to_string(world));
        all_finished = all_finished && (o.status == "pass" || o.status == "fail");
        if (o.data.is_object() && o.data.contains("nccl_log") && o.data["nccl_log"].is_array())
            for (const auto& l : o.data["nccl_log"])
                if (l.is_string()) lines.push_back(l.get<std::string>());
        any_ib = any_ib || !o.infiniband.empty();
    }
    r.transports = nccl_transports(lines);
    if (!all_finished) {
        r.bandwidth_judged = "not judged: not every rank finished";
        return r;
    }
    // Sizes: the slowest rank's time, the wrong elements of every rank. A rank's numbers are
    // what its node printed: a count that is not a non-negative integer no larger than the
    // size's elements, a size given twice or a size another rank reports and this one does
    // not is a finding, never summed.
    std::map<long long, AllreduceSize> sizes;
    std::map<int, std::set<long long>> reported;  // rank -> its sizes
    for (const auto& o : r.ranks) {
        std::set<long long>& mine = reported[o.rank];
        if (!o.data.is_object() || !o.data.contains("sizes") || !o.data["sizes"].is_array())
            continue;
        for (const auto& s : o.data["sizes"]) {
            const json bytes_value = s.is_object() && s.contains("bytes") ? s["bytes"] : json();
            if (!non_negative_integer(bytes_value) ||
                bytes_value.get<unsigned long long>() > k_max_size_bytes) {
                r.findings.push_back(who(o) + " reported a size of " +
                                     quote_value(bytes_value.dump(), 40) +
                                     " bytes, not a non-negative integer");
                continue;
            }
            const long long bytes = bytes_value.get<long long>();
            if (!mine.insert(bytes).second) {
                r.findings.push_back(who(o) + " reported " + bytes_text(bytes) + " twice");
                continue;
            }
            AllreduceSize& z = sizes[bytes];
            z.bytes = bytes;
            z.count = number(s, "count", 0LL);
            z.time_us = std::max(z.time_us, number(s, "time_us", 0.0));
            const json wrong = s.contains("wrong") ? s["wrong"] : json();
            // At most one element per byte, whatever `count` claims.
            const unsigned long long elements =
                static_cast<unsigned long long>(z.count > 0 ? std::min(z.count, bytes) : bytes);
            if (!non_negative_integer(wrong) || wrong.get<unsigned long long>() > elements) {
                r.findings.push_back(who(o) + " reported " + quote_value(wrong.dump(), 40) +
                                     " wrong elements at " + bytes_text(bytes) +
                                     ": not a count from 0 to " + std::to_string(elements));
                continue;
            }
            // Bounded by the size's elements, so a sum over any world fits.
            z.wrong += static_cast<long long>(wrong.get<unsigned long long>());
        }
    }
    for (const auto& o : r.ranks) {
        if (reported[o.rank].empty()) {
            r.findings.push_back(who(o) + " reported no message size");
            continue;
        }
        for (const auto& [bytes, z] : sizes)
            if (reported[o.rank].count(bytes) == 0)
                r.findings.push_back(who(o) + " reported no result at " + bytes_text(bytes) +
                                     ", which other ranks reduced");
    }
    for (auto& [bytes, z] : sizes) {
        if (z.time_us > 0) z.algbw_gbps = static_cast<double>(bytes) / 1e9 / (z.time_us * 1e-6);
        z.busbw_gbps = world > 1 ? z.algbw_gbps * 2.0 * (world - 1) / world : z.algbw_gbps;
        if (z.wrong > 0)
            r.findings.push_back("wrong sums: " + std::to_string(z.wrong) + " elements at " +
                                 bytes_text(bytes));
        r.sizes.push_back(z);
    }
    if (r.sizes.empty()) r.findings.push_back("no rank reported a message size");
    if (std::count(r.transports.begin(), r.transports.end(), "NET/Socket") && any_ib) {
        std::vector<std::string> nodes;
        for (const auto& o : r.ranks)
            if (!o.infiniband.empty() &&
                std::find(nodes.begin(), nodes.end(), o.node) == nodes.end())
                nodes.push_back(o.node);
        r.findings.push_back("NCCL fell back to sockets although " + join(nodes, ", ") +
                             " has InfiniBand devices (/dev/infiniband): check NCCL_IB_HCA, "
                             "NCCL_NET and the devices given to the container");
    }
    // Bandwidth: judged only against a baseline measured on healthy nodes.
    if (baseline.is_object() && baseline.contains("sizes") && baseline["sizes"].is_array()) {
        std::size_t judged = 0;
        for (auto& z : r.sizes)
            for (const auto& b : baseline["sizes"])
                if (number(b, "bytes", -1LL) == z.bytes && number(b, "busbw_gbps", -1.0) >= 0) {
                    z.baseline_busbw = b["busbw_gbps"].get<double>();
                    z.slow = z.busbw_gbps < *z.baseline_busbw * (1.0 - tolerance);
                    ++judged;
                    if (z.slow)
                        r.findings.push_back("bus bandwidth " + fixed(z.busbw_gbps, 3) +
                                             " GB/s at " + bytes_text(z.bytes) +
                                             " is under the baseline's " +
                                             fixed(*z.baseline_busbw, 3) + " GB/s by more than " +
                                             fixed(tolerance * 100, 0) + " %");
                }
        r.bandwidth_judged = "against the baseline (" + std::to_string(judged) + " of " +
                             std::to_string(r.sizes.size()) + " sizes)";
    } else {
        r.bandwidth_judged =
            "not judged: no baseline (--baseline FILE: an allreduce --json from healthy nodes)";
    }
    r.verdict = r.findings.empty() ? "pass" : "fail";
    return r;
}

json nccl_tests_json(const AllreduceResult& r, const std::vector<std::string>& args) {
    json devices = json::array(), results = json::array(), errors = json::array();
    for (const auto& o : r.ranks) {
        devices.push_back({{"rank", o.rank},
                           {"group", 0},
                           {"hostname", o.node},
                           {"device", number(o.data, "local_rank", 0)},
                           {"device_info", o.data.is_object() && o.data.contains("device")
                                               ? o.data["device"]
                                               : json(r.backend == "gloo" ? "CPU (gloo)" : "")}});
    }
    double total = 0;
    for (const auto& z : r.sizes) {
        total += z.busbw_gbps;
        results.push_back({{"size", z.bytes},
                           {"count", z.count},
                           {"type", "float"},
                           {"redop", "sum"},
                           {"root", "    -1"},
                           {"in_place",
                            {{"time", z.time_us},
                             {"alg_bw", z.algbw_gbps},
                             {"bus_bw", z.busbw_gbps},
                             {"nwrong", static_cast<double>(z.wrong)}}}});
    }
    for (const auto& f : r.findings) errors.push_back(f);
    double average = r.sizes.empty() ? 0 : total / static_cast<double>(r.sizes.size());
    return {{"version", 3},
            {"args", args},
            {"env", json::array()},
            {"config", {{"nthreads", 1}, {"ngpus", 1}, {"nranks", r.world}, {"devices", devices}}},
            {"results", results},
            {"average_bus_bandwidth",
             {{"bandwidth", average}, {"okay", r.verdict == "pass" ? "true" : "false"}}},
            {"errors", errors}};
}

}  // namespace td
