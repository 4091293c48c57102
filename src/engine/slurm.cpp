#include "engine/slurm.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/fleet/node_check.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace td::engine {
namespace {

std::string trimmed(const std::string& s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

Result<ProcessResult> run_slurm(std::vector<std::string> argv, std::chrono::seconds timeout) {
    if (find_program(argv[0]).empty())
        return Error{ErrorKind::Environment,
                     argv[0] +
                         " is not on the PATH: torchdock drives Slurm through its own "
                         "commands (install Slurm's client commands, e.g. Debian's "
                         "slurm-client)"};
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.env = environment_with({});
    spec.timeout = timeout;
    spec.max_output = std::size_t{64} << 20;
    return run_process(spec);
}

Result<std::string> slurm_output(std::vector<std::string> argv, std::chrono::seconds timeout) {
    std::string what = join(argv, " ");
    auto r = run_slurm(std::move(argv), timeout);
    if (!r) return r.error();
    if (!r->ok())
        return Error{ErrorKind::Environment,
                     what + ": " + r->describe() +
                         (r->err.empty() ? "" : ": " + terminal_text(trimmed(r->err), 400))};
    return r->out;
}

}  // namespace

bool slurm_node_usable(const std::string& state) {
    static const std::set<std::string> usable = {"idle",      "mix",  "mixed",     "alloc",
                                                 "allocated", "comp", "completing"};
    return usable.count(state) > 0;
}

Result<SlurmSelection> select_slurm_nodes(const std::string& listing,
                                          const std::vector<std::string>& wanted,
                                          const std::string& partition,
                                          const std::string& hostlist) {
    const std::set<std::string> want(wanted.begin(), wanted.end());
    SlurmSelection out;
    out.partition = partition;
    std::set<std::string> seen;
    std::vector<std::string> partitions;                 // in sinfo's order
    std::map<std::string, std::set<std::string>> holds;  // partition: the nodes asked for in it
    std::string default_partition;
    for (const auto& line : split(listing, '\n')) {
        auto parts = split(trimmed(line), ' ');
        parts.erase(std::remove(parts.begin(), parts.end(), std::string()), parts.end());
        if (parts.size() < 3) continue;
        std::string node = parts[0], part = parts[1];
        bool is_default = part.back() == '*';
        if (is_default) part.pop_back();
        if (!partition.empty() && part != partition) continue;
        if (is_default) default_partition = part;
        if (std::find(partitions.begin(), partitions.end(), part) == partitions.end())
            partitions.push_back(part);
        if (!want.empty() && !want.count(node)) continue;
        holds[part].insert(node);
        if (seen.insert(node).second) out.nodes.push_back(SlurmNode{node, parts.back()});
    }
    if (want.empty()) {
        if (out.nodes.empty())
            return Error{ErrorKind::Config, "partition " + quote_value(partition) +
                                                " has no nodes (sinfo lists none)"};
        return out;
    }
    for (const auto& n : wanted)
        if (!seen.count(n))
            return Error{
                ErrorKind::Config,
                "node " + quote_value(n) + " of --nodes " + quote_value(hostlist) +
                    (partition.empty() ? " is not a node Slurm knows (sinfo -N lists it not)"
                                       : " is not in partition " + quote_value(partition))};
    if (!partition.empty()) return out;
    // One srun step runs in one partition: the default one when it holds every node asked
    // for, else the first that does.
    auto whole = [&](const std::string& p) { return holds[p].size() == seen.size(); };
    if (!default_partition.empty() && whole(default_partition)) return out;
    auto it = std::find_if(partitions.begin(), partitions.end(), whole);
    if (it == partitions.end())
        return Error{ErrorKind::Config, "the nodes of --nodes " + quote_value(hostlist) +
                                            " are in no one partition together, and one srun "
                                            "step runs in one partition (name fewer nodes)"};
    out.partition = *it;
    return out;
}

Result<SlurmSelection> slurm_nodes(const std::string& hostlist, const std::string& partition,
                                   std::chrono::seconds timeout) {
    // Both empty would be every node of the cluster: never what an empty --nodes meant.
    if (hostlist.empty() && partition.empty())
        return Error{ErrorKind::Usage, "give --nodes HOSTLIST, --partition NAME or both"};
    std::vector<std::string> sinfo = {"sinfo", "--noheader", "--Node", "--format=%N %P %t"};
    if (!partition.empty()) sinfo.push_back("--partition=" + partition);
    auto listing = slurm_output(sinfo, timeout);
    if (!listing) return listing.error();
    std::vector<std::string> wanted;
    if (!hostlist.empty()) {
        // "--": a hostlist starting with '-' is a list, never an option of scontrol's.
        auto names = slurm_output({"scontrol", "show", "hostnames", "--", hostlist}, timeout);
        if (!names) return names.error();
        for (const auto& name : split(names.value(), '\n'))
            if (std::string n = trimmed(name); !n.empty()) wanted.push_back(n);
        if (wanted.empty())
            return Error{ErrorKind::Config, "--nodes " + quote_value(hostlist) + " names no node"};
    }
    return select_slurm_nodes(listing.value(), wanted, partition, hostlist);
}

Result<ProcessResult> srun_each_node(const std::vector<std::string>& nodes,
                                     const std::string& partition,
                                     const std::vector<std::string>& argv,
                                     std::chrono::seconds timeout, int per_node) {
    std::string count = std::to_string(nodes.size());
    std::string tasks = std::to_string(nodes.size() * static_cast<std::size_t>(per_node));
    std::vector<std::string> cmd = {
        "srun", "--job-name=torchdock-fleet", "--nodelist=" + join(nodes, ","), "--nodes=" + count,
        "--ntasks=" + tasks, "--ntasks-per-node=" + std::to_string(per_node),
        "--distribution=block", "--label", "--kill-on-bad-exit=0",
        // srun's "launching ... on host NODE, N tasks: LIST" lines: which node ran which task.
        "--verbose",
        // Nodes busy with other jobs: fail now, not queue forever.
        "--immediate=" +
            std::to_string(std::min<long long>(60, std::max<long long>(1, timeout.count() / 2)))};
    if (!partition.empty()) cmd.push_back("--partition=" + partition);
    cmd.push_back("--");
    cmd.insert(cmd.end(), argv.begin(), argv.end());
    return run_slurm(std::move(cmd), timeout);
}

Result<std::string> slurm_node_address(const std::string& node) {
    auto text = slurm_output({"scontrol", "show", "node", node}, std::chrono::seconds(30));
    if (!text) return text.error();
    std::string addr = node_address(text.value());
    return addr.empty() ? node : addr;
}

Result<std::string> first_node_of(const std::string& hostlist) {
    auto names =
        slurm_output({"scontrol", "show", "hostnames", "--", hostlist}, std::chrono::seconds(30));
    if (!names) return names.error();
    std::string first = trimmed(names.value().substr(0, names.value().find('\n')));
    if (first.empty())
        return Error{ErrorKind::Environment,
                     "the hostlist " + quote_value(hostlist) + " names no node"};
    return first;
}

Result<SlurmRank> this_slurm_rank() {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    return slurm_rank(env);
}

std::vector<std::string> collective_environment() {
    std::vector<std::string> out;
    for (char** e = environ; *e; ++e) {
        std::string kv = *e;
        for (const char* prefix : {"NCCL_", "GLOO_", "TORCH_NCCL_", "UCX_"})
            if (starts_with(kv, prefix) && kv.find('=') != std::string::npos) {
                out.push_back(kv);
                break;
            }
    }
    return out;
}

Status drain_node(const std::string& node, const std::string& reason,
                  std::chrono::milliseconds timeout) {
    if (auto st = check_node_name(node, "node"); !st) return st.error();
    // Half the time to ask, half to drain; at least a second each.
    auto half = std::chrono::seconds(std::max<long long>(1, timeout.count() / 2000));
    // NodeName= also takes nodesets and keywords: drain only a name Slurm knows as one node.
    auto shown = slurm_output({"scontrol", "--oneliner", "show", "node", node}, half);
    if (!shown) return shown.error();
    if (!single_node_record(shown.value(), node))
        return Error{ErrorKind::Config, "scontrol show node " + quote_value(node) +
                                            " does not give exactly one node named so (a "
                                            "nodeset or a keyword?): " +
                                            quote_value(trimmed(shown.value()), 200) +
                                            "; nothing was drained"};
    auto r = slurm_output(
        {"scontrol", "update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason}, half);
    if (!r) return r.error();
    return ok_status();
}

}  // namespace td::engine
