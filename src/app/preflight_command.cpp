// `torchdock preflight`: will this image run on a given driver and GPUs? Its labels and
// environment judged against the host, and (unless --no-kernel-audit) the code it really
// carries, audited by probe-kernels in a throwaway container.
#include <filesystem>
#include <iostream>
#include <optional>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "app/image_hosts.hpp"
#include "app/output.hpp"
#include "app/probe_containers.hpp"
#include "core/diagnose/host_gpus.hpp"
#include "core/diagnose/preflight.hpp"
#include "core/json/json_text.hpp"
#include "core/validate/checks.hpp"
#include "engine/container_run.hpp"
#include "engine/data_files.hpp"
#include "engine/docker_api.hpp"
#include "engine/files.hpp"
#include "engine/install_layout.hpp"
#include "engine/interrupt.hpp"
#include "engine/probe_exec.hpp"
#include "engine/project_loader.hpp"
#include "engine/runtime_env.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td::app {
namespace fs = std::filesystem;

namespace {

// Runs the torch probe and probe-kernels in the image. The audit is evidence only when
// probe-kernels ran to its end; otherwise the reason becomes a note and the labels alone
// decide. `emulated`: why the image ran under qemu-user, when it did (a note). Returns the
// exit code when interrupted by Ctrl-C.
std::optional<int> audit_kernels(const OpenedImage& image, const PreflightOptions& opts,
                                 const KnowledgeBase& kb, ImageProbes& out, std::string& emulated) {
    auto probes_at = engine::locate_probes_dir(opts.probes_dir);
    if (auto st = engine::check_probes_dir(probes_at); !st) {
        out.not_audited = st.error().message;
        return std::nullopt;
    }
    // An image of another architecture runs under qemu-user with its architecture's probes
    // where this host emulates it; otherwise torch cannot run, and the labels alone decide.
    const engine::ImageHost& api = *image.host;
    const engine::ImageInfo& info = image.info;
    std::string label = engine::new_run_label();
    const std::string& id = image.id;
    auto early = engine::start_early(api, id, info, "preflight", opts.python, 60, label);
    // The platform from the image's files, not its config's claim (engine::read_platform).
    auto platform =
        engine::read_platform(api, id, info, probes_at.path, image.machine, false, label);
    const auto& probe_set = platform.set;
    if (probe_set.tier.kind == ReadingTier::FilesOnly) {
        out.not_audited = "the kernel audit needs torch to run, and " + probe_set.tier.reason +
                          " (validate reads them: TD125)";
        return std::nullopt;
    }
    if (probe_set.tier.kind == ReadingTier::Emulated) emulated = probe_set.tier.reason;
    auto probes = engine::probe_image(api, id, info, engine::kernel_audit_probes(),
                                      probe_set.probes_dir, opts.python, 0, probe_set.timeout_s(60),
                                      kb, label, std::nullopt, &platform.env, &early)
                      .probes;
    if (engine::interrupted()) return image.stop_interrupted(label);
    const ProbeRun& k = probes["kernels"];
    if (!k.usable() || !k.data.contains("objects"))
        out.not_audited = k.usable() ? "probe-kernels " + k.status + ": " + k.reason : k.problem();
    else
        out.audit = k.data;
    if (probes["torch"].usable()) out.torch = probes["torch"].data;
    return std::nullopt;
}

}  // namespace

int run_preflight(const CommonOptions& common, const PreflightOptions& opts) {
    engine::install_interrupt_handlers();
    if (auto st = check_report_flags({{"--json", &opts.json}}); !st) return fail(st.error());
    auto data = engine::load_data_files(common.data_dir, {.forward_compat = true});
    if (!data) return fail(data.error());
    const KnowledgeBase& kb = data->kb;

    std::string driver = opts.driver.value_or("");
    std::vector<std::string> gpus;
    for (const auto& g : opts.gpus)
        for (const auto& part : split(g, ','))
            if (!part.empty()) gpus.push_back(part);
    if (opts.host) {
        auto probes_at = engine::locate_probes_dir(opts.probes_dir);
        if (auto st = engine::check_probes_dir(probes_at); !st) return fail(st.error());
        auto run =
            engine::run_probe_on_host(engine::probe_spec("cuda", "probe-cuda"), probes_at.path, 60);
        if (!run.usable())
            return fail(
                {ErrorKind::Environment, "--host: the cuda probe could not run: " + run.reason});
        HostGpus host = host_gpus(run.data);
        if (!host.driver.empty()) driver = host.driver;
        gpus.insert(gpus.end(), host.gpus.begin(), host.gpus.end());
        if (driver.empty()) {
            print_error("--host: no NVIDIA driver on this host (" + run.reason + ")");
            return k_exit_environment;
        }
    }
    if (driver.empty() || gpus.empty()) {
        print_error("give --driver VERSION and --gpu MODEL[,MODEL...], or --host");
        return k_exit_config;
    }
    if (auto v = Version::parse(driver); !v || v->parts().size() < 2) {
        print_error("--driver " + quote_value(driver) +
                    " is not an NVIDIA driver version (like 535.104.05 or 570.124)");
        return k_exit_config;
    }
    auto overrides = parse_expect_overrides(opts.expect, preflight_expect_keys());
    if (!overrides) return fail(overrides.error());
    auto image = open_image(opts.image);
    if (!image) return fail(image.error());
    Expectations expect =
        gather_expectations(opts.image, image->info.labels, image->info.env, kb, overrides.value());

    ContainerRequirements requirements = container_requirements(image->info.env);
    ImageProbes kernels;
    std::string emulated;
    if (opts.no_kernel_audit) {
        kernels.not_audited = "--no-kernel-audit";
    } else {
        if (auto code = audit_kernels(image.value(), opts, kb, kernels, emulated)) return *code;
    }
    PreflightResult r =
        preflight(expect, driver, gpus, kb, *data->forward_compat, requirements, kernels);
    if (!emulated.empty()) r.notes.insert(r.notes.begin(), emulated);
    if (opts.json) {
        nlohmann::json targets = nlohmann::json::array();
        for (const auto& t : r.targets)
            targets.push_back({{"gpu", t.gpu}, {"cc", t.cc}, {"ok", t.ok}, {"reasons", t.reasons}});
        auto st =
            emit_report(opts.json, json_text(nlohmann::json{{"schema", 1},
                                                            {"image", opts.image},
                                                            {"driver", driver},
                                                            {"answer", r.answer},
                                                            {"ok", r.ok},
                                                            {"driver_ok", r.driver_ok},
                                                            {"driver_verdict", r.driver_verdict},
                                                            {"targets", targets},
                                                            {"run_flags", r.run_flags},
                                                            {"notes", r.notes}}));
        if (!st) return fail(st.error());
    }
    if (!to_stdout(opts.json)) {
        std::string answer = r.answer;
        for (auto& c : answer) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        // Image labels and names reach these lines: shown escaped, never acted on.
        std::cout << terminal_text(opts.image) << " on driver " << terminal_text(driver) << ": "
                  << answer << "\n";
        std::cout << "  driver: " << (r.driver_ok ? "yes" : "no") << " - "
                  << terminal_text(r.driver_verdict) << "\n";
        for (const auto& t : r.targets)
            std::cout << "  " << terminal_text(t.gpu) << (t.cc.empty() ? "" : " (" + t.cc + ")")
                      << ": " << (t.ok ? "yes" : "no")
                      << (t.reasons.empty() ? "" : " - " + terminal_text(join(t.reasons, "; ")))
                      << "\n";
        if (!r.run_flags.empty())
            std::cout << "  run with: docker run " << join(r.run_flags, " ") << " "
                      << terminal_text(opts.image) << "\n";
        for (const auto& n : r.notes) std::cout << "  note: " << terminal_text(n) << "\n";
    }
    // Only a checked yes is a pass; "unknown" is not.
    return r.answer == "yes" ? k_exit_ok : k_exit_check_failed;
}

}  // namespace td::app
