// `torchdock node-check IMAGE`: the quick tier of this node with the image jobs run, within a
// deadline Slurm's HealthCheckProgram fits (60 s): the host fingerprint, validate's probes of
// the image through this node's engine (the GPU tier where the engine gives GPUs), preflight
// against this node's driver and GPUs, and one verdict with an NHC-style line.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/image_hosts.hpp"
#include "app/image_validation.hpp"
#include "app/output.hpp"
#include "app/probe_containers.hpp"
#include "core/diagnose/doctor.hpp"
#include "core/diagnose/host_gpus.hpp"
#include "core/fleet/node_check.hpp"
#include "core/json/json_text.hpp"
#include "core/validate/expectations.hpp"
#include "core/validate/waivers.hpp"
#include "engine/container_run.hpp"
#include "engine/data_files.hpp"
#include "engine/environment_facts.hpp"
#include "engine/install_layout.hpp"
#include "engine/interrupt.hpp"
#include "engine/project_loader.hpp"
#include "engine/slurm.hpp"
#include "util/deadline.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace {

using Clock = std::chrono::steady_clock;

// This node's name and where it came from (for the message that refuses it).
std::pair<std::string, std::string> node_name(const NodeCheckOptions& opts) {
    if (opts.node) return {*opts.node, "--node"};
    if (const char* slurm = std::getenv("SLURMD_NODENAME"); slurm && *slurm)
        return {slurm, "SLURMD_NODENAME"};
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return {host, "the host name"};
}

// Preflight against this node's driver and GPUs (from the host's probe-cuda), judged on the
// code validate's probes found in the image.
void preflight_here(const std::map<std::string, ProbeRun>& host_probes,
                    const engine::ImageInfo& info, const report::ImageValidation& v,
                    const KnowledgeBase& kb, const ForwardCompat& fc, NodeCheckFacts& facts) {
    auto cuda = host_probes.find("cuda");
    HostGpus host;
    if (cuda != host_probes.end() && cuda->second.usable()) host = host_gpus(cuda->second.data);
    if (host.driver.empty() || host.gpus.empty()) {
        facts.preflight_skipped =
            host.driver.empty() ? "no NVIDIA driver on this node" : "no GPU on this node";
        return;
    }
    ImageProbes probed;
    auto kernels = v.probes.find("kernels");
    if (kernels != v.probes.end() && kernels->second.usable() &&
        kernels->second.data.contains("objects"))
        probed.audit = kernels->second.data;
    else
        probed.not_audited = "probe-kernels gave no audit";
    if (auto torch = v.probes.find("torch"); torch != v.probes.end() && torch->second.usable())
        probed.torch = torch->second.data;
    Expectations expect = gather_expectations(v.image, info.labels, info.env, kb, {});
    facts.preflight =
        preflight(expect, host.driver, host.gpus, kb, fc, container_requirements(info.env), probed);
}

}  // namespace

int run_node_check(const CommonOptions& common, const NodeCheckOptions& opts) {
    engine::install_interrupt_handlers();
    const auto start = Clock::now();
    // One monotonic deadline bounds every engine call (ping, the leftover sweep, inspect, the
    // probe containers); its reserve is kept for the verdict, the report and --drain.
    const auto total = std::chrono::milliseconds(opts.deadline_s * 1000);
    const Deadline deadline = Deadline::after(total, deadline_reserve(total), start);
    auto left_s = [&] {
        return std::max<int>(1, static_cast<int>(deadline.left().count() / 1000));
    };
    if (auto st = check_image_reference(opts.image); !st) return fail(st.error());
    if (auto st = check_report_flags({{"--json", &opts.json}}); !st) return fail(st.error());
    std::vector<Waiver> waivers;
    for (const auto& text : opts.waive) {
        std::string error;
        Waiver w = parse_waiver(text, "--waive", error);
        if (!error.empty()) return fail(Error{ErrorKind::Usage, "--waive: " + error});
        waivers.push_back(std::move(w));
    }
    NodeCheckFacts facts;
    auto [name, source] = node_name(opts);
    facts.node = name;
    // One node: a host list ("gpu[1-500]") or ALL would make --drain drain all of them.
    if (auto st = check_node_name(facts.node, source); !st) return fail(st.error());
    auto data =
        engine::load_data_files(common.data_dir, {.signatures = true, .forward_compat = true});
    if (!data) return fail(data.error());
    const KnowledgeBase& kb = data->kb;
    auto probes_at = engine::locate_probes_dir(opts.probes_dir);
    if (auto st = engine::check_probes_dir(probes_at); !st) return fail(st.error());

    facts.image.reference = opts.image;
    facts.deadline_s = static_cast<int>(opts.deadline_s);
    progress("node-check " + facts.node + ": reading the host");
    // The host's probes get at most a third of the time; the image's the rest.
    auto host = engine::read_host(kb, probes_at.path, std::nullopt, std::max(1, left_s() / 3));
    facts.fingerprint = build_fingerprint(host.facts, host.probes);
    facts.fingerprint["findings"] =
        findings_json(doctor_findings(facts.fingerprint, kb, &*data->signatures));
    // A host probe cut by the deadline's share is out of time, not a finding against the node:
    // its findings (DR121 "torch could not be probed: ... timed out") are left out.
    std::vector<std::string> timed_out;
    for (const auto& [probe, run] : host.probes)
        if (run.state == ProbeRun::State::TimedOut) timed_out.push_back(run.problem());
    if (!timed_out.empty()) {
        auto& findings = facts.fingerprint["findings"];
        nlohmann::json kept = nlohmann::json::array();
        for (const auto& f : findings) {
            std::string detail = f.is_object() ? f.value("detail", "") : "";
            bool cut = std::any_of(timed_out.begin(), timed_out.end(), [&](const auto& p) {
                return !p.empty() && !detail.empty() &&
                       (detail.find(p) != std::string::npos || p.find(detail) != std::string::npos);
            });
            if (!cut) kept.push_back(f);
        }
        findings = kept;
        facts.out_of_time =
            "the host's probes did not finish in the time the deadline left them (" +
            join(timed_out, "; ") + ")";
    }

    // An engine call that failed once the deadline's time was spent was cut short by it: the
    // node could not be checked in time (unknown), which says nothing against its engine.
    auto engine_failed = [&](const std::string& what, const std::string& message) {
        if (deadline.passed())
            facts.out_of_time = what + " (" + message + ")";  // the engine's cut is the cause
        else
            facts.engine_error = message;
    };
    std::string run_label = engine::new_run_label();
    // An engine image needs the engine; a transport (docker://, squashfs:, ...) runs in the
    // sandbox, on a node with no engine at all (pyxis/enroot and Apptainer sites).
    const bool in_sandbox = !is_engine_image(opts.image);
    std::unique_ptr<engine::SandboxHost> sandbox;
    std::optional<engine::DockerApi> api;
    std::optional<engine::EngineHost> engine_host;
    std::optional<engine::ImageInfo> info;
    if (in_sandbox) {
        std::string detail;
        auto opened = open_sandbox(opts.image, detail);
        if (!opened) {
            (opened.error().kind == ErrorKind::Environment ? facts.engine_error
                                                           : facts.image_error) =
                opened.error().message;
        } else {
            sandbox = std::move(opened.value());
            info = *sandbox->inspect_image(opts.image).value();
        }
    } else {
        auto found_api = engine::DockerApi::from_environment();
        if (found_api) api = found_api->with_deadline(deadline);
        if (!found_api) {
            facts.engine_error = found_api.error().message;
        } else if (auto alive = api->ping(); !alive) {
            engine_failed("the engine did not answer its ping in time", alive.error().message);
        } else {
            remove_leftovers_of_killed_runs(*api);
            auto found = api->inspect_image(opts.image);
            // An inspect the engine refuses while it still answers (a reference it cannot
            // parse: "Foo:1") is about the image, not a reason to drain the node.
            if (!found && deadline.passed())
                facts.out_of_time =
                    "the engine did not answer the inspection of " + opts.image + " in time";
            else if (!found)
                (api->ping() ? facts.image_error : facts.engine_error) = found.error().message;
            else if (!found.value())
                facts.image_missing = true;
            else
                info = *found.value();
        }
        if (api) engine_host.emplace(*api);
    }
    if (info) {
        Result<engine::EngineInfo> engine_info = Error{ErrorKind::Environment, "the sandbox"};
        facts.image.id = info->id;
        facts.image.repo_digests = info->repo_digests;
        if (api) {
            engine_info = api->info();
            auto version = api->version();
            facts.image.engine = version ? version->name + " " + version->version : "";
        } else {
            facts.image.engine = "sandbox (bubblewrap)";
        }
        std::string gpu_reason = "the sandbox tier binds no GPU yet (CDI devices are not read)";
        const bool gpus =
            api && gpu_tier_available(engine_info, api->is_podman(), "auto", -1, gpu_reason);
        ValidateOptions vopts;
        vopts.images = {opts.image};
        vopts.python = opts.python;
        vopts.probe_timeout_s = left_s();
        std::map<std::string, std::string> no_overrides;
        ValidationRun run{vopts,
                          kb,
                          *data->signatures,
                          sandbox ? static_cast<const engine::ImageHost*>(sandbox.get())
                                  : static_cast<const engine::ImageHost*>(&*engine_host),
                          no_overrides,
                          probes_at.path,
                          engine_info ? engine_info->architecture : std::string(),
                          gpus,
                          -1,
                          gpu_reason,
                          run_label};
        run.quick = true;
        run.waivers = waivers;
        report::ImageValidation v;
        v.image = opts.image;
        progress("node-check " + facts.node + ": validating " + opts.image);
        validate_image(run, v);
        if (engine::interrupted())
            return api ? stop_interrupted_run(*api, run_label) : stop_interrupted_sandbox_run();
        if (deadline.passed())
            facts.out_of_time = "the probes of " + opts.image + " did not all finish in time";
        else if (!v.error.empty())
            (run.engine_lost ? facts.engine_error : facts.image_error) = v.error;
        facts.checks = v.checks;
        facts.image.tier = v.tier;
        facts.image.shm_bytes = v.shm_bytes;
        preflight_here(host.probes, *info, v, kb, *data->forward_compat, facts);
    } else {
        facts.preflight_skipped = "the image could not be read on this node";
    }
    if (engine::interrupted()) {
        print_error("interrupted");
        return k_exit_interrupted;
    }
    facts.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    facts.deadline_passed = facts.seconds > static_cast<double>(opts.deadline_s);
    NodeVerdict verdict = judge_node(facts);

    std::ostream& human = to_stdout(opts.json) ? std::cerr : std::cout;
    human << nhc_line(facts.node, verdict) << "\n";
    for (std::size_t i = 1; i < verdict.reasons.size(); ++i)
        human << "  also: " << terminal_text(verdict.reasons[i]) << "\n";
    for (const auto& note : verdict.notes) human << "  note: " << terminal_text(note) << "\n";
    for (const auto& c : facts.checks)
        if (c.status == "waived")
            human << "  waived: "
                  << terminal_text(c.id + " " + c.name + " (" + c.outcome + ") by " +
                                   c.waiver_source + ": " + c.waiver_reason)
                  << "\n";
    progress("node-check " + facts.node + ": " + verdict.state + " in " +
             format_seconds(facts.seconds));
    if (opts.json)
        if (auto st = emit_report(opts.json, json_text(node_check_report(facts, verdict))); !st)
            return fail(st.error());
    if (verdict.state == "drain" && opts.drain) {
        // What is left of the whole deadline, the reserve included (a second at least).
        auto until_end =
            total - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
        auto budget = std::max<std::chrono::milliseconds>(std::chrono::seconds(1), until_end);
        if (auto st = engine::drain_node(facts.node, drain_reason(verdict), budget); !st)
            print_error("--drain: " + st.error().message);
        else
            progress("node-check " + facts.node + ": drained (" + drain_reason(verdict) + ")");
    }
    if (verdict.state == "healthy") return k_exit_ok;
    return verdict.state == "drain" ? k_exit_check_failed : k_exit_environment;
}

}  // namespace td::app
