// `torchdock allreduce IMAGE`: a multi-node all-reduce inside the image, one rank per Slurm
// task (srun starts `torchdock allreduce-rank` on every node); `allreduce-rank` is one such
// rank: its place from Slurm's environment, the probe in a container of the image on the host
// network, its report on stdout.
#include <chrono>
#include <iostream>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/image_hosts.hpp"
#include "app/image_validation.hpp"
#include "app/output.hpp"
#include "app/probe_containers.hpp"
#include "core/fleet/allreduce.hpp"
#include "core/fleet/srun_output.hpp"
#include "core/json/json_text.hpp"
#include "engine/container_run.hpp"
#include "engine/environment_facts.hpp"
#include "engine/files.hpp"
#include "engine/install_layout.hpp"
#include "engine/interrupt.hpp"
#include "engine/probe_exec.hpp"
#include "engine/project_loader.hpp"
#include "engine/runtime_env.hpp"
#include "engine/slurm.hpp"
#include "report/allreduce_report.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace {

using json = nlohmann::json;
// allreduce_probe.py's largest sum, 1023·W + W(W-1)/2, stays below 2^24 (float32's exact
// integers) up to W = 4859.
constexpr int k_max_world = 4096;

Status check_image_and_sizes(const AllreduceOptions& opts) {
    if (auto st = check_image_reference(opts.image); !st) return st;
    for (const auto& s : split(opts.sizes, ','))
        if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos ||
            std::stoll(s) < 4)
            return Error{ErrorKind::Usage, "--sizes " + quote_value(opts.sizes) +
                                               ": each size is a number of bytes, at least 4"};
    return ok_status();
}

// The flags every rank's probe gets from the command line (torchdock's own values only).
std::vector<std::string> probe_flags(const AllreduceOptions& opts) {
    return {"--backend=" + opts.backend, "--sizes=" + opts.sizes,
            "--iters=" + std::to_string(opts.iters), "--timeout=" + std::to_string(opts.timeout_s)};
}

json rank_report(const SlurmRank& me, const std::string& status, const std::string& reason,
                 const json& data, const std::vector<std::string>& infiniband, double seconds) {
    return {{"schema", 1},
            {"kind", "allreduce-rank"},
            {"rank", me.rank},
            {"world", me.world},
            {"node", me.node},
            {"status", status},
            {"reason", reason},
            {"data", data},
            {"infiniband", infiniband},
            {"seconds", seconds}};
}

}  // namespace

int run_allreduce_rank(const CommonOptions& common, const AllreduceOptions& opts) {
    engine::install_interrupt_handlers();
    const auto start = std::chrono::steady_clock::now();
    if (auto st = check_image_and_sizes(opts); !st) return fail(st.error());
    auto me = engine::this_slurm_rank();
    if (!me) return fail(me.error());
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    std::vector<std::string> infiniband = engine::host_facts().infiniband;
    auto answer = [&](const std::string& status, const std::string& reason, const json& data,
                      int code) {
        std::cout << json_text(rank_report(me.value(), status, reason, data, infiniband, elapsed()))
                  << "\n";
        return code;
    };
    auto master = engine::first_node_of(me->nodelist);
    if (!master) return answer("error", master.error().message, nullptr, k_exit_environment);
    auto address = engine::slurm_node_address(master.value());
    if (!address) return answer("error", address.error().message, nullptr, k_exit_environment);

    auto data_dir = engine::find_data_dir(common.data_dir);
    auto kb = engine::load_knowledge_base(data_dir);
    if (!kb) return fail(kb.error());
    auto probes_at = engine::locate_probes_dir(opts.probes_dir);
    if (auto st = engine::check_probes_dir(probes_at); !st) return fail(st.error());
    auto image = open_image(opts.image);
    if (!image)
        return answer("error",
                      image.error().kind == ErrorKind::Config && is_engine_image(opts.image)
                          ? "image " + opts.image + " is not on this node's engine (pull it first)"
                          : (is_engine_image(opts.image) ? "the container engine: " : "") +
                                image.error().message,
                      nullptr, k_exit_environment);
    std::string no_gpu_reason = "the sandbox tier binds no GPU yet (CDI devices are not read)";
    bool gpus = image->api && gpu_tier_available(image->api->info(), image->api->is_podman(),
                                                 "auto", -1, no_gpu_reason);

    auto spec = engine::probe_spec("allreduce", "allreduce_probe.py", probe_flags(opts), true);
    spec.host_network = true;
    spec.env = engine::collective_environment();
    for (const auto& f :
         {"--rank=" + std::to_string(me->rank), "--world-size=" + std::to_string(me->world),
          "--local-rank=" + std::to_string(me->local_rank),
          "--master=" + address.value() + ":" + std::to_string(me->port), "--node=" + me->node})
        spec.args.push_back(f);
    std::string label = engine::new_run_label();
    const std::string& id = image->id;
    // The probe's own timeouts end a rendezvous or collective that waits for a lost rank; the
    // container's ends a rank that hangs itself (stopped, or stuck in the driver).
    auto reading = engine::probe_image(
        *image->host, id, image->info, {spec}, probes_at.path, opts.python, gpus ? -1 : 0,
        static_cast<int>(opts.timeout_s) * 2 + 30, kb.value(), label);
    if (engine::interrupted()) return image->stop_interrupted(label);
    const ProbeRun& run = reading.probes["allreduce"];
    if (run.state == ProbeRun::State::TimedOut)
        return answer("timeout", "the rank's container " + run.reason, nullptr,
                      k_exit_check_failed);
    if (!run.usable()) return answer("error", run.problem(), nullptr, k_exit_environment);
    int code = run.status == "pass"   ? k_exit_ok
               : run.status == "fail" ? k_exit_check_failed
                                      : k_exit_environment;
    return answer(run.status, run.reason, run.data, code);
}

int run_allreduce(const CommonOptions& common, const AllreduceOptions& opts) {
    engine::install_interrupt_handlers();
    if (auto st = check_image_and_sizes(opts); !st) return fail(st.error());
    std::vector<ReportFlag> flags = {{"--json", &opts.json},
                                     {"--junit", &opts.junit},
                                     {"--nccl-tests-json", &opts.nccl_tests_json}};
    if (auto st = check_report_flags(flags); !st) return fail(st.error());
    json baseline;
    if (opts.baseline) {
        auto text = engine::read_text_file(*opts.baseline);
        if (!text) return fail({ErrorKind::Config, "--baseline: " + text.error().message});
        baseline = json::parse(text.value(), nullptr, false);
        if (!baseline.is_object() || !baseline.contains("kind") || baseline["kind"] != "allreduce")
            return fail({ErrorKind::Config,
                         "--baseline " + *opts.baseline + " is not an allreduce --json report"});
    }
    auto listed = engine::slurm_nodes(opts.nodes.value_or(""), opts.partition.value_or(""),
                                      std::chrono::seconds(30));
    if (!listed) return fail(listed.error());
    std::vector<std::string> nodes;
    for (const auto& n : listed->nodes) {
        if (!engine::slurm_node_usable(n.state))
            return fail({ErrorKind::Environment, "node " + n.name + " is " + n.state +
                                                     " in Slurm: an all-reduce needs every rank "
                                                     "(leave it out of --nodes)"});
        nodes.push_back(n.name);
    }
    int world = static_cast<int>(nodes.size()) * opts.tasks_per_node;
    if (world > k_max_world)
        return fail({ErrorKind::Usage,
                     std::to_string(world) + " ranks: the probe's float32 sums are exact up to " +
                         std::to_string(k_max_world) + " ranks; name fewer nodes or tasks"});
    std::string self = engine::own_binary().string();
    std::vector<std::string> argv = {self.empty() ? std::string("torchdock") : self, "-q",
                                     "allreduce-rank", opts.image,
                                     "--timeout=" + std::to_string(opts.timeout_s)};
    for (const auto& f : probe_flags(opts))
        if (!starts_with(f, "--timeout=")) argv.push_back(f);
    if (opts.python) argv.push_back("--python=" + *opts.python);
    if (common.data_dir) argv.push_back("--data=" + *common.data_dir);
    progress("allreduce: " + std::to_string(world) + " ranks on " + std::to_string(nodes.size()) +
             " nodes through srun");
    const auto start = std::chrono::steady_clock::now();
    const long long limit = opts.timeout_s * 3 + 90;
    auto run = engine::srun_each_node(nodes, listed->partition, argv, std::chrono::seconds(limit),
                                      opts.tasks_per_node);
    if (!run) return fail(run.error());
    if (run->outcome == engine::ProcessResult::Outcome::Interrupted) {
        print_error("interrupted (srun was stopped, which cancels its tasks)");
        return k_exit_interrupted;
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bool timed_out = run->outcome == engine::ProcessResult::Outcome::TimedOut;
    auto node_errors = srun_node_errors(run->err);
    std::vector<RankOutcome> ranks;
    for (const auto& [task, text] : split_labelled_output(run->out)) {
        json doc = json::parse(text, nullptr, false);
        if (!doc.is_object() || !doc.contains("kind") || doc["kind"] != "allreduce-rank") continue;
        auto text_of = [&](const char* key, const char* fallback) {
            return doc.contains(key) && doc[key].is_string() ? doc[key].get<std::string>()
                                                             : std::string(fallback);
        };
        RankOutcome o;
        o.rank = task;  // srun's label is the task's SLURM_PROCID, whatever the report claims
        o.node = text_of("node", "");
        o.status = text_of("status", "error");
        o.reason = text_of("reason", "its report has no reason");
        o.data = doc.contains("data") && doc["data"].is_object() ? doc["data"] : json();
        if (doc.contains("infiniband") && doc["infiniband"].is_array())
            for (const auto& d : doc["infiniband"])
                if (d.is_string()) o.infiniband.push_back(d);
        ranks.push_back(std::move(o));
    }
    // Ranks without a report: their node by block distribution, srun's words or the timeout.
    for (int r = 0; r < world; ++r) {
        if (std::any_of(ranks.begin(), ranks.end(),
                        [&](const RankOutcome& o) { return o.rank == r; }))
            continue;
        std::string node = nodes[static_cast<std::size_t>(r / opts.tasks_per_node)];
        std::string why = timed_out ? "no answer within " + std::to_string(limit) + " s"
                          : node_errors.count(node) ? node_errors[node]
                                                    : "no report came back";
        ranks.push_back({r, node, timed_out ? "timeout" : "missing", why, nullptr, {}});
    }
    AllreduceResult result = judge_allreduce(std::move(ranks), world, baseline, opts.tolerance);

    std::ostream& human = any_to_stdout(flags) ? std::cerr : std::cout;
    human << report::allreduce_table(result);
    for (auto st : {emit_report(opts.json, report::allreduce_json(result, opts.image, seconds)),
                    emit_report(opts.junit, report::allreduce_junit(result, opts.image)),
                    emit_report(opts.nccl_tests_json, json_text(nccl_tests_json(result, argv)))})
        if (!st) return fail(st.error());
    if (std::none_of(result.ranks.begin(), result.ranks.end(),
                     [](const RankOutcome& o) { return o.data.is_object(); }) &&
        !srun_launch_errors(run->err).empty()) {
        print_error("srun started no rank: " + srun_launch_errors(run->err).front());
        return k_exit_environment;
    }
    return result.verdict == "pass" ? k_exit_ok : k_exit_check_failed;
}

}  // namespace td::app
