#include "engine/runtime_env.hpp"

#include <random>
#include <thread>

#include "core/validate/probe_plan.hpp"
#include "engine/early_probes.hpp"
#include "engine/file_probe_cache.hpp"
#include "engine/interrupt.hpp"
#include "engine/probe_exec.hpp"

namespace td::engine {

namespace {

// A fresh token probe-env echoes: an ENTRYPOINT that prints something else cannot pass for it.
std::string new_nonce() {
    std::random_device rd;
    std::uniform_int_distribution<unsigned> d(0, 15);
    std::string out;
    for (int i = 0; i < 24; ++i) out += "0123456789abcdef"[d(rd)];
    return out;
}

// The file whose first bytes tell what the ENTRYPOINT is: its program, or the script a shell
// is given ("sh /entrypoint.sh").
std::string entrypoint_file(const std::vector<std::string>& ep) {
    if (ep.empty()) return {};
    std::string name = ep[0].substr(ep[0].find_last_of('/') + 1);
    bool shell = name == "sh" || name == "bash" || name == "dash" || name == "ash";
    if (shell && ep.size() >= 2 && ep[1] != "-c" && ep[1].rfind('-', 0) != 0) return ep[1];
    return ep[0];
}

// probe-env started through the image's ENTRYPOINT, as `docker run IMAGE python` would be.
ProbeSpec through_entrypoint(const ImageInfo& info, const std::string& nonce) {
    ProbeSpec through = probe_spec("env", "probe-env", {"--nonce=" + nonce});
    through.keep_entrypoint = true;
    through.env = runner_scratch_env(info.entrypoint, info.env);
    return through;
}

}  // namespace

EnvReading read_environment(const ImageHost& api, const std::string& image, const ImageInfo& info,
                            const std::filesystem::path& host_probes_dir,
                            const std::string& run_label) {
    EnvReading out;
    out.nonce = new_nonce();
    ProbeSpec direct = probe_spec("env", "probe-env", {"--nonce=" + out.nonce});
    if (std::string file = entrypoint_file(info.entrypoint); !file.empty())
        direct.args.push_back("--head=" + file);
    out.probes_dir = host_probes_dir;
    // A wrapper by its configuration alone: both readings at once (the script's head cannot
    // make it less of one).
    std::thread through;
    if (classify_entrypoint(info.entrypoint, "").kind == EntrypointVerdict::Kind::Wrapper)
        through = std::thread([&] {
            out.through = run_probe_in_image(api, image, through_entrypoint(info, out.nonce),
                                             host_probes_dir, 0, 30, run_label);
        });
    out.run = run_probe_in_image(api, image, direct, host_probes_dir, 0, 60, run_label);
    if (through.joinable()) through.join();
    return out;
}

PlatformReading read_platform(const ImageHost& api, const std::string& image, const ImageInfo& info,
                              const std::filesystem::path& host_probes_dir,
                              const std::string& engine_arch, bool files_only,
                              const std::string& run_label) {
    PlatformReading out;
    out.env = read_environment(api, image, info, host_probes_dir, run_label);
    if (out.env.run.usable()) out.files = files_platform(out.env.run.data);
    out.claim_problem = platform_claim_problem(info.architecture, out.files);
    if (out.files.machine.empty()) {
        out.platform = info.platform();
    } else {
        const std::string arch = oci_arch_of_elf(out.files.machine);
        out.platform = "linux/" + arch;
        if (out.claim_problem.empty() && !info.variant.empty()) out.platform += "/" + info.variant;
    }
    const std::string arch =
        out.files.machine.empty() ? info.architecture : oci_arch_of_elf(out.files.machine);
    out.machine = out.files.machine.empty() ? elf_machine_of(info.architecture) : out.files.machine;
    out.set = image_reading(host_probes_dir, arch, engine_arch, files_only);
    return out;
}

RuntimeReading read_runtime(const ImageHost& api, const std::string& image, const ImageInfo& info,
                            const std::filesystem::path& probes_dir,
                            const std::optional<std::string>& python_override,
                            const std::string& run_label,
                            const std::optional<std::string>& files_only, const EnvReading* env) {
    RuntimeReading out;
    EnvReading read = env ? *env : read_environment(api, image, info, probes_dir, run_label);
    const std::string& nonce = read.nonce;
    out.probes["env"] = std::move(read.run);
    const ProbeRun& d = out.probes["env"];
    std::string head;
    if (d.usable() && d.data.contains("head") && d.data["head"].is_object())
        head = d.data["head"].value("text", "");
    out.entrypoint = classify_entrypoint(info.entrypoint, head);
    const ProbeRun* wrapped = nullptr;
    if (out.entrypoint.kind == EntrypointVerdict::Kind::Wrapper && !files_only) {
        out.probes["env_entrypoint"] =
            read.through && read.probes_dir == probes_dir
                ? std::move(*read.through)
                : run_probe_in_image(api, image, through_entrypoint(info, nonce), probes_dir, 0, 30,
                                     run_label);
        wrapped = &out.probes["env_entrypoint"];
    }
    out.plan = plan_runtime(info.env, out.entrypoint, &d, wrapped, nonce, python_override);
    if (files_only) {
        out.plan.files_only = true;
        out.plan.files_only_machine = *files_only;
        out.plan.files_only_site_dirs = site_dirs_by_name_of(out.plan, &d);
        if (out.entrypoint.kind == EntrypointVerdict::Kind::Wrapper)
            out.plan.notes.push_back(
                "the wrapper ENTRYPOINT was not run (files only): the "
                "environment is the image's configured one");
    }
    return out;
}

namespace {

// Runs probes in the image, those that are not python's in one container; the probes that
// only read files through their cache.
Prober image_prober(const ImageHost& api, const std::string& image, const ImageInfo& info,
                    const std::filesystem::path& probes_dir, int gpus, int timeout_s,
                    const std::string& run_label) {
    Prober out;
    out.many = [&api, image, &info, probes_dir, gpus, timeout_s,
                run_label](const std::vector<ProbeSpec>& specs) {
        std::vector<ProbeRun> runs(specs.size());
        std::vector<ProbeSpec> now;
        std::vector<std::size_t> now_at;
        std::vector<std::string> keys(specs.size());
        for (std::size_t i = 0; i < specs.size(); ++i) {
            if (reads_files_only(specs[i].name)) {
                keys[i] = file_probe_cache_key(info, specs[i], probes_dir);
                if (auto hit = cached_probe_run(specs[i].name, keys[i])) {
                    runs[i] = std::move(*hit);
                    continue;
                }
            }
            now.push_back(specs[i]);
            now_at.push_back(i);
        }
        auto ran = run_probes_in_image(api, image, now, probes_dir, gpus, timeout_s, run_label);
        for (std::size_t k = 0; k < now.size(); ++k) {
            const std::size_t i = now_at[k];
            if (!keys[i].empty()) store_probe_run(specs[i].name, keys[i], ran[k]);
            runs[i] = std::move(ran[k]);
        }
        return runs;
    };
    out.one = [many = out.many](const ProbeSpec& p) {
        return many(std::vector<ProbeSpec>{p}).front();
    };
    return out;
}

}  // namespace

EarlyStart start_early(const ImageHost& api, const std::string& image, const ImageInfo& info,
                       const std::string& purpose,
                       const std::optional<std::string>& python_override, int timeout_s,
                       const std::string& run_label) {
    EarlyStart out;
    out.key = probe_memo_key(info, purpose, python_override, timeout_s);
    out.timeout_s = timeout_s;
    ProbeMemo memo;
    if (auto kept = load_probe_memo(out.key)) {
        out.probes_dir = kept->probes_dir;
        out.gpus = kept->gpus;
        memo = std::move(kept->specs);
    }
    out.probes = std::make_shared<EarlyProbes>(
        memo, image_prober(api, image, info, out.probes_dir, out.gpus, timeout_s, run_label));
    return out;
}

RuntimeReading probe_image(const ImageHost& api, const std::string& image, const ImageInfo& info,
                           std::vector<ProbeSpec> specs, const std::filesystem::path& probes_dir,
                           const std::optional<std::string>& python_override, int gpus,
                           int timeout_s, const KnowledgeBase& kb, const std::string& run_label,
                           const std::optional<std::string>& files_only, const EnvReading* env,
                           EarlyStart* early) {
    RuntimeReading out =
        read_runtime(api, image, info, probes_dir, python_override, run_label, files_only, env);
    if (interrupted()) return out;
    // Early runs count only from the same probe set, GPUs and timeout (the files-only tier's
    // probes read another architecture's files: never guessed).
    const bool same = early && early->probes && !files_only && early->probes_dir == probes_dir &&
                      early->gpus == gpus && early->timeout_s == timeout_s;
    ProbeMemo memo;
    auto runs = run_probes(std::move(specs), out.plan, kb,
                           image_prober(api, image, info, probes_dir, gpus, timeout_s, run_label),
                           same ? early->probes.get() : nullptr, &memo);
    if (early && !files_only && !interrupted())
        store_probe_memo(early->key, {probes_dir, gpus, std::move(memo)});
    for (auto& [name, run] : runs) out.probes[name] = std::move(run);
    return out;
}

std::optional<long long> env_shm_bytes(const std::map<std::string, ProbeRun>& probes) {
    auto it = probes.find("env");
    if (it == probes.end() || !it->second.usable()) return std::nullopt;
    const auto& d = it->second.data;
    if (!d.contains("shm_bytes") || !d["shm_bytes"].is_number_integer()) return std::nullopt;
    return d["shm_bytes"].get<long long>();
}

}  // namespace td::engine
