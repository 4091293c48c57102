// `torchdock node-check IMAGE`: the quick tier of this node with the image jobs run, within a
// deadline Slurm's HealthCheckProgram fits (60 s): the host fingerprint, validate's probes of
// the image through this node's engine (the GPU tier where the engine gives GPUs), preflight
// against this node's driver and GPUs, and one verdict with an NHC-style line.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/image_validation.hpp"
#include "app/output.hpp"
#include "app/probe_containers.hpp"
#include "core/diagnose/doctor.hpp"
#include "core/diagnose/host_gpus.hpp"
#include "core/fleet/node_check.hpp"
#include "core/json/json_text.hpp"
#include "core/validate/expectations.hpp"
#include "engine/container_run.hpp"
#include "engine/environment_facts.hpp"
#include "engine/install_layout.hpp"
#include "engine/interrupt.hpp"
#include "engine/project_loader.hpp"
#include "engine/slurm.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace {

using Clock = std::chrono::steady_clock;

std::string node_name(const NodeCheckOptions& opts) {
    if (opts.node) return *opts.node;
    if (const char* slurm = std::getenv("SLURMD_NODENAME"); slurm && *slurm) return slurm;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
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
    auto left_s = [&] {
        double used = std::chrono::duration<double>(Clock::now() - start).count();
        return std::max(1, static_cast<int>(static_cast<double>(opts.deadline_s) - used));
    };
    if (auto st = check_image_reference(opts.image); !st) return fail(st.error());
    if (auto st = check_report_flags({{"--json", &opts.json}}); !st) return fail(st.error());
    auto data_dir = engine::find_data_dir(common.data_dir);
    auto kb = engine::load_knowledge_base(data_dir);
    if (!kb) return fail(kb.error());
    auto signatures = engine::load_error_signatures(data_dir);
    if (!signatures) return fail(signatures.error());
    auto fc = engine::load_forward_compat(data_dir);
    if (!fc) return fail(fc.error());
    auto probes_at = engine::locate_probes_dir(opts.probes_dir);
    if (auto st = engine::check_probes_dir(probes_at); !st) return fail(st.error());

    NodeCheckFacts facts;
    facts.node = node_name(opts);
    // One node: a host list ("gpu[1-500]") would make --drain drain all of them.
    if (facts.node.empty() || facts.node.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                           "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                           "0123456789._-") != std::string::npos)
        return fail(Error{ErrorKind::Usage,
                          "node name " + quote_value(facts.node) +
                              " is not one node's name (letters, digits and ._- only; set "
                              "--node NAME)"});
    facts.image.reference = opts.image;
    facts.deadline_s = static_cast<int>(opts.deadline_s);
    progress("node-check " + facts.node + ": reading the host");
    // The host's probes get at most a third of the deadline; the image's the rest.
    auto host =
        engine::read_host(kb.value(), probes_at.path, std::nullopt, std::max(1, left_s() / 3));
    facts.fingerprint = build_fingerprint(host.facts, host.probes);
    facts.fingerprint["findings"] =
        findings_json(doctor_findings(facts.fingerprint, kb.value(), &signatures.value()));

    std::string run_label = engine::new_run_label();
    auto api = engine::DockerApi::from_environment();
    std::optional<engine::ImageInfo> info;
    if (!api) {
        facts.engine_error = api.error().message;
    } else if (auto alive = api->ping(); !alive) {
        facts.engine_error = alive.error().message;
    } else {
        remove_leftovers_of_killed_runs(api.value());
        auto found = api->inspect_image(opts.image);
        // An inspect the engine refuses while it still answers (a reference it cannot parse:
        // "Foo:1") is about the image, not a reason to drain the node.
        if (!found)
            (api->ping() ? facts.image_error : facts.engine_error) = found.error().message;
        else if (!found.value())
            facts.image_missing = true;
        else
            info = *found.value();
    }
    if (info) {
        auto engine_info = api->info();
        facts.image.id = info->id;
        facts.image.repo_digests = info->repo_digests;
        auto version = api->version();
        facts.image.engine = version ? version->name + " " + version->version : "";
        ValidateOptions vopts;
        vopts.images = {opts.image};
        vopts.python = opts.python;
        vopts.probe_timeout_s = left_s();
        std::string gpu_reason;
        std::map<std::string, std::string> no_overrides;
        ValidationRun run{vopts,
                          kb.value(),
                          signatures.value(),
                          api.value(),
                          no_overrides,
                          probes_at.path,
                          engine_info ? engine_info->architecture : std::string(),
                          gpu_tier_available(engine_info, api->is_podman(), "auto", -1, gpu_reason),
                          -1,
                          gpu_reason,
                          run_label};
        run.quick = true;
        report::ImageValidation v;
        v.image = opts.image;
        progress("node-check " + facts.node + ": validating " + opts.image);
        validate_image(run, v);
        if (engine::interrupted()) return stop_interrupted_run(api.value(), run_label);
        if (!v.error.empty()) {
            if (run.engine_lost)
                facts.engine_error = v.error;
            else
                facts.image_error = v.error;
        }
        facts.checks = v.checks;
        facts.image.tier = v.tier;
        facts.image.shm_bytes = v.shm_bytes;
        preflight_here(host.probes, *info, v, kb.value(), fc.value(), facts);
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
    progress("node-check " + facts.node + ": " + verdict.state + " in " +
             format_seconds(facts.seconds));
    if (opts.json)
        if (auto st = emit_report(opts.json, json_text(node_check_report(facts, verdict))); !st)
            return fail(st.error());
    if (verdict.state == "drain" && opts.drain) {
        if (auto st = engine::drain_node(facts.node, drain_reason(verdict)); !st)
            print_error("--drain: " + st.error().message);
        else
            progress("node-check " + facts.node + ": drained (" + drain_reason(verdict) + ")");
    }
    if (verdict.state == "healthy") return k_exit_ok;
    return verdict.state == "drain" ? k_exit_check_failed : k_exit_environment;
}

}  // namespace td::app
