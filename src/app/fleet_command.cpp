// `torchdock fleet IMAGE`: node-check on every node of a Slurm partition or node list, one srun
// task per node (Slurm's own launcher, no fan-out of ours), the reports gathered from srun's
// labelled output and compared (core/fleet).
#include <iostream>
#include <map>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/image_validation.hpp"
#include "app/output.hpp"
#include "core/fleet/fleet.hpp"
#include "core/fleet/srun_output.hpp"
#include "core/validate/waivers.hpp"
#include "engine/install_layout.hpp"
#include "engine/interrupt.hpp"
#include "engine/slurm.hpp"
#include "report/fleet_report.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace {

// node-check as each task runs it: this binary (the same path on every node: a shared
// filesystem or the same package), its report on stdout.
std::vector<std::string> node_check_argv(const CommonOptions& common, const FleetOptions& opts) {
    std::string self = engine::own_binary().string();
    std::vector<std::string> argv = {
        self.empty() ? std::string("torchdock") : self, "-q", "node-check", opts.image, "--json=-",
        "--deadline=" + std::to_string(opts.deadline_s)};
    for (const auto& w : opts.waive) argv.push_back("--waive=" + w);
    if (common.data_dir) argv.push_back("--data=" + *common.data_dir);
    return argv;
}

}  // namespace

int run_fleet(const CommonOptions& common, const FleetOptions& opts) {
    engine::install_interrupt_handlers();
    if (auto st = check_image_reference(opts.image); !st) return fail(st.error());
    std::vector<ReportFlag> flags = {
        {"--json", &opts.json}, {"--markdown", &opts.markdown}, {"--junit", &opts.junit}};
    if (auto st = check_report_flags(flags); !st) return fail(st.error());
    for (const auto& text : opts.waive) {
        std::string error;
        (void)parse_waiver(text, "--waive", error);
        if (!error.empty()) return fail(Error{ErrorKind::Usage, "--waive: " + error});
    }
    auto listed = engine::slurm_nodes(opts.nodes.value_or(""), opts.partition.value_or(""),
                                      std::chrono::seconds(30));
    if (!listed) return fail(listed.error());

    std::vector<std::string> usable;
    std::map<std::string, FleetNode> results;
    for (const auto& n : listed->nodes) {
        if (engine::slurm_node_usable(n.state))
            usable.push_back(n.name);
        else
            results[n.name] = {
                n.name,     nullptr,
                "launcher", "Slurm has this node " + n.state + ": no task can start there",
                "",         "",
                {},         {}};
    }
    bool timed_out = false;
    std::string launch_error;
    // One srun step over the usable nodes. A node srun could not launch on (its slurmd gone)
    // aborts the whole step, so the nodes that had not reported yet are asked once more
    // without it: their own answer, not the dead node's.
    std::vector<std::string> pending = usable;
    for (int attempt = 0; attempt < 2 && !pending.empty(); ++attempt) {
        progress("fleet: node-check on " + std::to_string(pending.size()) + " nodes through srun" +
                 (attempt ? " (again, without the nodes srun could not launch on)" : ""));
        auto run = engine::srun_each_node(pending, listed->partition, node_check_argv(common, opts),
                                          std::chrono::seconds(opts.timeout_s));
        if (!run) return fail(run.error());
        if (run->outcome == engine::ProcessResult::Outcome::Interrupted) {
            print_error("interrupted (srun was stopped, which cancels its tasks)");
            return k_exit_interrupted;
        }
        timed_out = run->outcome == engine::ProcessResult::Outcome::TimedOut;
        auto node_errors = srun_node_errors(run->err);
        auto launch_errors = srun_launch_errors(run->err);
        // A task's output is the node's srun ran it on (srun's verbose launch lines; else
        // block distribution: task i on the i-th node), never the node its report names.
        auto task_nodes = srun_task_nodes(run->err);
        for (const auto& [task, text] : split_labelled_output(run->out)) {
            std::string node;
            if (auto it = task_nodes.find(task); it != task_nodes.end())
                node = it->second;
            else if (task >= 0 && static_cast<std::size_t>(task) < pending.size())
                node = pending[static_cast<std::size_t>(task)];
            if (node.empty()) continue;  // a label srun gave no task
            results[node] = classify_task({node, text, node_errors[node], false, 0, ""});
        }
        bool none_came_back = results.size() == listed->nodes.size() - usable.size();
        launch_error = none_came_back && !launch_errors.empty() ? launch_errors.front() : "";
        // A node srun could not launch on is final; a node whose task was killed because the
        // step was aborted for it ("node1: task 0: Killed") is asked again without it.
        std::vector<std::string> unanswered;
        bool a_node_failed_to_launch = false;
        for (const auto& name : pending) {
            if (results.count(name)) continue;
            if (node_errors.count(name) &&
                node_errors[name].find(" failed on node ") != std::string::npos) {
                a_node_failed_to_launch = true;
                results[name] = classify_task({name, "", node_errors[name], timed_out,
                                               static_cast<int>(opts.timeout_s), launch_error});
            } else {
                unanswered.push_back(name);
            }
        }
        bool ask_again = attempt == 0 && a_node_failed_to_launch && !timed_out;
        if (!ask_again)
            for (const auto& name : unanswered)
                results[name] = classify_task({name, "", node_errors[name], timed_out,
                                               static_cast<int>(opts.timeout_s), launch_error});
        pending = ask_again ? unanswered : std::vector<std::string>{};
    }
    std::vector<FleetNode> ordered;
    for (const auto& n : listed->nodes) ordered.push_back(results[n.name]);
    for (auto& [name, n] : results)  // a report from a node not asked for (a renamed node)
        if (std::none_of(listed->nodes.begin(), listed->nodes.end(),
                         [&](const engine::SlurmNode& s) { return s.name == name; }))
            ordered.push_back(n);
    FleetReport report = judge_fleet(opts.image, std::move(ordered));

    std::ostream& human = any_to_stdout(flags) ? std::cerr : std::cout;
    human << report::fleet_table(report);
    for (auto st : {emit_report(opts.json, report::fleet_json(report)),
                    emit_report(opts.markdown, report::fleet_markdown(report)),
                    emit_report(opts.junit, report::fleet_junit(report))})
        if (!st) return fail(st.error());
    if (report.failed == report.nodes.size() && !launch_error.empty()) {
        print_error("srun started no node-check: " + launch_error);
        return k_exit_environment;
    }
    bool all_healthy = report.healthy == report.nodes.size();
    return report.uniform() && all_healthy ? k_exit_ok : k_exit_check_failed;
}

}  // namespace td::app
