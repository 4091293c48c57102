// `torchdock doctor`: fingerprint a host or an image and list what the knowledge base sees.
#include <filesystem>
#include <iostream>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/image_hosts.hpp"
#include "app/output.hpp"
#include "app/probe_containers.hpp"
#include "core/diagnose/doctor.hpp"
#include "core/json/json_text.hpp"
#include "core/validate/runtime_env.hpp"
#include "engine/container_run.hpp"
#include "engine/data_files.hpp"
#include "engine/environment_facts.hpp"
#include "engine/files.hpp"
#include "engine/install_layout.hpp"
#include "engine/interrupt.hpp"
#include "engine/probe_exec.hpp"
#include "engine/project_loader.hpp"
#include "engine/runtime_env.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace fs = std::filesystem;

namespace {

std::string describe(const nlohmann::json& fp) {
    // "-" for a fact not read (a distroless image has no os-release, and no shell to ask).
    auto s = [&](const nlohmann::json& j, const char* k) {
        std::string v =
            j.is_object() && j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : "";
        return v.empty() ? std::string("-") : v;
    };
    std::vector<std::vector<std::string>> rows = {
        {"subject", s(fp, "kind") + ": " + s(fp, "subject")},
        {"os", s(fp["os"], "pretty") + ", glibc " + s(fp["os"], "glibc")},
        {"driver", s(fp["driver"], "version") + " (CUDA " + s(fp["driver"], "cuda") + ")"},
        {"cuda runtime",
         s(fp["cuda_runtime"], "version") + "  " + s(fp["cuda_runtime"], "library")},
        {"cudnn", s(fp["cudnn_loader"], "version") + "  " + s(fp["cudnn_loader"], "library")},
        {"nccl", s(fp["nccl_loader"], "version") + "  " + s(fp["nccl_loader"], "library")},
        {"python", s(fp["python"], "version") + "  " + s(fp["python"], "executable") + " (" +
                       s(fp["python"], "why") + ")"},
    };
    auto num = [](const nlohmann::json& j, const char* k) {
        return j.is_object() && j.contains(k) && j[k].is_number_integer()
                   ? std::to_string(j[k].get<long long>())
                   : std::string("-");
    };
    if (fp["torch"].is_object())
        rows.push_back({"torch", s(fp["torch"], "version") + " (CUDA " + s(fp["torch"], "cuda") +
                                     ", cuDNN " + num(fp["torch"], "cudnn") + ", NCCL " +
                                     s(fp["torch"], "nccl") + ")"});
    else
        rows.push_back({"torch", "- (" + s(fp, "torch_error") + ")"});
    std::string gpus;
    for (const auto& g : fp["gpus"])
        gpus += (gpus.empty() ? "" : ", ") + s(g, "name") + " (" + s(g, "cc") + ")";
    rows.push_back({"gpus", gpus.empty() ? "none" : gpus});
    rows.push_back(
        {"/dev/shm", fp["shm_bytes"].is_number()
                         ? std::to_string(fp["shm_bytes"].get<long long>() >> 20) + " MiB"
                         : "-"});
    rows.push_back({"container runtime", s(fp, "container_runtime")});
    std::string env;
    for (const auto& [k, v] : fp["env"].items())
        env += (env.empty() ? "" : " ") + k + "=" + v.get<std::string>();
    rows.push_back({"environment", env.empty() ? "-" : env});
    return report::format_table({"FACT", "VALUE"}, rows);
}

}  // namespace

int run_doctor(const CommonOptions& common, const DoctorOptions& opts) {
    engine::install_interrupt_handlers();
    if (opts.host == opts.image.has_value()) {
        print_error("give exactly one of --host or --image IMAGE");
        return k_exit_config;
    }
    if (opts.image && opts.image->empty()) {
        print_error("--image needs an image reference");
        return k_exit_config;
    }
    if (auto st = check_report_flags({{"--json", &opts.json}}); !st) return fail(st.error());
    auto data = engine::load_data_files(common.data_dir, {.signatures = true});
    if (!data) return fail(data.error());
    const KnowledgeBase& kb = data->kb;
    // Without its probes doctor knows nothing of CUDA or torch: that is an error, not a
    // clean bill of health.
    auto probes_at = engine::locate_probes_dir(opts.probes_dir);
    if (auto st = engine::check_probes_dir(probes_at); !st) return fail(st.error());
    fs::path probes_dir = probes_at.path;
    std::map<std::string, ProbeRun> probes;
    EnvironmentFacts facts;
    if (opts.host) {
        auto host = engine::read_host(kb, probes_dir, opts.python, 60);
        facts = std::move(host.facts);
        probes = std::move(host.probes);
    } else {
        auto opened = open_image(*opts.image);
        if (!opened) return fail(opened.error());
        std::string label = engine::new_run_label();
        const engine::ImageHost& host = *opened->host;
        const std::string& id = opened->id;
        // An image of another architecture runs under qemu-user with its architecture's probes
        // where this host emulates it; doctor reads an image by running it, so otherwise it
        // cannot, and says where to go instead.
        // The platform from the image's files, not its config's claim (engine::read_platform).
        auto platform = engine::read_platform(host, id, opened->info, probes_dir, opened->machine,
                                              false, label);
        const auto& probe_set = platform.set;
        if (probe_set.tier.kind == ReadingTier::FilesOnly)
            return fail(Error{ErrorKind::Environment, "doctor runs the image's code, and " +
                                                          probe_set.tier.reason +
                                                          ": `torchdock validate " + *opts.image +
                                                          "` reads it in its files-only tier"});
        if (probe_set.tier.kind == ReadingTier::Emulated)
            progress("doctor " + *opts.image + ": " + probe_set.tier.reason);
        progress("doctor " + *opts.image + ": reading the image");
        auto f = engine::image_facts(host, *opts.image, label);
        if (engine::interrupted()) return opened->stop_interrupted(label);
        if (!f) return fail(f.error());
        facts = f.value();
        // The image as `docker run IMAGE python` runs it (engine/runtime_env), by its ID.
        progress("doctor " + *opts.image + ": running the probes");
        auto reading = engine::probe_image(
            host, id, opened->info, engine::doctor_probes(), probe_set.probes_dir, opts.python, 0,
            probe_set.timeout_s(60), kb, label, std::nullopt, &platform.env);
        probes = std::move(reading.probes);
        facts.interpreter_why = reading.plan.why;
        // /dev/shm as probe-env read it, as validate reads it: an image without a shell too.
        if (auto shm = engine::env_shm_bytes(probes)) facts.shm_bytes = *shm;
        if (engine::interrupted()) return opened->stop_interrupted(label);
    }
    if (engine::interrupted()) {
        print_error("interrupted");
        return k_exit_interrupted;
    }
    nlohmann::json fp = build_fingerprint(facts, probes);
    auto findings = doctor_findings(fp, kb, &*data->signatures);
    // With the fingerprint on stdout, the description goes to stderr.
    std::ostream& out = to_stdout(opts.json) ? std::cerr : std::cout;
    out << describe(fp) << "\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& f : findings) rows.push_back({f.id, f.severity, f.title, f.detail});
    if (findings.empty())
        out << "no findings\n";
    else {
        out << report::format_table({"ID", "SEVERITY", "FINDING", "DETAIL"}, rows);
        for (const auto& f : findings)
            out << "  " << f.id << " fix: " << terminal_text(f.fix) << "\n";
    }
    if (opts.json) {
        nlohmann::json doc = fp;
        doc["findings"] = findings_json(findings);
        if (auto st = emit_report(opts.json, json_text(doc)); !st) return fail(st.error());
    }
    for (const auto& f : findings)
        if (f.severity == "error") return k_exit_check_failed;
    return k_exit_ok;
}

}  // namespace td::app
