// `torchdock sbom VARIANT|IMAGE`: a CycloneDX 1.6 SBOM. A rendered variant's comes from its
// lock (no network, no engine); an image's from its files, read by the probes validate uses
// (the torch probe, probe-record over every distribution, probe-kernels).
#include <filesystem>
#include <iostream>

#include "app/commands.hpp"
#include "app/console.hpp"
#include "app/exit_codes.hpp"
#include "app/image_hosts.hpp"
#include "app/output.hpp"
#include "app/probe_containers.hpp"
#include "app/version.hpp"
#include "core/sbom/sbom_sources.hpp"
#include "engine/container_run.hpp"
#include "engine/docker_api.hpp"
#include "engine/file_probe_cache.hpp"
#include "engine/install_layout.hpp"
#include "engine/interrupt.hpp"
#include "engine/probe_exec.hpp"
#include "engine/project_loader.hpp"
#include "engine/runtime_env.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace {

int write_sbom(const SbomOptions& opts, SbomInput in) {
    in.tool_version = version_text();
    // What CycloneDX 1.6 cannot hold is left out of the file, noted there, and said here.
    for (const auto& change : fit_cyclonedx_limits(in))
        std::cerr << "torchdock: warning: " << change << "\n";
    for (const auto& [key, value] : in.subject.properties)
        if (key == "torchdock:not-read")
            std::cerr << "torchdock: warning: the SBOM is incomplete: " << terminal_text(value)
                      << "\n";
    if (auto st = emit_report(std::optional<std::string>(opts.output), cyclonedx_json(in)); !st)
        return fail(st.error());
    if (opts.output != "-")
        std::cerr << "torchdock: wrote " << opts.output << " (CycloneDX 1.6, "
                  << in.components.size() << " components)\n";
    return k_exit_ok;
}

// A name the manifests render, or nothing: then the target is taken for an image.
const Variant* find_variant(const std::optional<RenderPlan>& plan, const std::string& name) {
    if (!plan) return nullptr;
    for (const auto& v : plan->variants)
        if (v.name == name) return &v;
    return nullptr;
}

int image_sbom(const SbomOptions& opts, const KnowledgeBase& kb) {
    auto opened = open_image(opts.target);
    if (!opened && opened.error().kind == ErrorKind::Config && is_engine_image(opts.target))
        return fail({ErrorKind::Config, quote_value(opts.target) +
                                            " is neither a variant the manifests render nor an "
                                            "image the engine has (build or pull it first)"});
    if (!opened) return fail(opened.error());
    auto probes_at = engine::locate_probes_dir(opts.probes_dir);
    if (auto st = engine::check_probes_dir(probes_at); !st) return fail(st.error());
    std::string label = engine::new_run_label();
    const engine::ImageHost& host = *opened->host;
    const engine::ImageInfo& info = opened->info;
    const std::string& id = opened->id;
    // An image of another architecture: its own architecture's probes under qemu-user where
    // this host emulates it, else its files alone (probe-record and probe-kernels read them
    // whatever the architecture; the torch probe cannot run).
    auto early = engine::start_early(host, id, info, "sbom", opts.python, 300, label);
    // The platform from the image's files, not its config's claim (engine::read_platform).
    auto platform =
        engine::read_platform(host, id, info, probes_at.path, opened->machine, false, label);
    const auto& probe_set = platform.set;
    const bool files_only = probe_set.tier.kind == ReadingTier::FilesOnly;
    std::vector<engine::ProbeSpec> specs;
    for (auto& p : engine::sbom_probes())
        if (!files_only || engine::reads_files_only(p.name)) specs.push_back(std::move(p));
    progress("sbom " + opts.target + ": reading its files with the probes" +
             (probe_set.tier.kind == ReadingTier::Full
                  ? std::string()
                  : " (" + probe_set.tier.name() + ": " + probe_set.tier.reason + ")"));
    auto reading = engine::probe_image(
        host, id, info, std::move(specs), probe_set.probes_dir, opts.python, 0, 300, kb, label,
        files_only ? std::optional<std::string>(platform.machine) : std::nullopt, &platform.env,
        &early);
    if (engine::interrupted()) return opened->stop_interrupted(label);
    auto in = image_sbom_input(opts.target, info.id, info.labels, reading.probes);
    if (!in) return fail(in.error());
    return write_sbom(opts, std::move(in.value()));
}

}  // namespace

int run_sbom(const CommonOptions& common, const SbomOptions& opts) {
    const std::optional<std::string> output = opts.output;
    if (auto st = check_report_flags({{"--output", &output}}); !st) return fail(st.error());
    auto kb = engine::load_knowledge_base(engine::find_data_dir(common.data_dir));
    if (!kb) return fail(kb.error());
    // A variant name has no '/', ':' or '@'; anything else is an image reference, and so is
    // every name outside a project (no manifest directory).
    std::error_code ec;
    bool maybe_variant = opts.target.find_first_of("/:@") == std::string::npos &&
                         std::filesystem::is_directory(common.manifests_dir, ec);
    if (maybe_variant) {
        int code = 0;
        auto plan = plan_project(common, code, false);
        if (!plan) return code;
        if (const Variant* v = find_variant(plan, opts.target)) {
            auto in = variant_sbom_input(*v, kb.value());
            if (!in) return fail(in.error());
            return write_sbom(opts, std::move(in.value()));
        }
    }
    return image_sbom(opts, kb.value());
}

}  // namespace td::app
