#include "engine/file_probe_cache.hpp"

#include <cstdlib>

#include "core/validate/runtime_env.hpp"
#include "engine/early_probes.hpp"
#include "engine/files.hpp"
#include "engine/probe_exec.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;

bool reads_files_only(const std::string& probe) { return probe == "record" || probe == "kernels"; }

fs::path cache_dir() {
    if (const char* d = std::getenv("TORCHDOCK_CACHE_DIR"); d && *d) return d;
    if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "torchdock";
    if (const char* home = std::getenv("HOME"); home && *home)
        return fs::path(home) / ".cache" / "torchdock";
    return {};
}

std::string file_probe_cache_key(const ImageInfo& info, const ProbeSpec& spec,
                                 const fs::path& probes_dir) {
    auto binary = read_text_file(probes_dir / spec.file, std::size_t{64} << 20);
    if (!binary || info.layers.empty()) return {};
    // probe-kernels also scans the directories on LD_LIBRARY_PATH: the value its container
    // sees (the image's, or what a wrapper ENTRYPOINT set) is part of what it read.
    std::vector<std::string> env = info.env;
    env.insert(env.end(), spec.env.begin(), spec.env.end());
    std::string material = "file probe cache 1\n" + spec.name + "\n" + sha256_hex(binary.value()) +
                           "\nuser " + info.user +
                           "\nLD_LIBRARY_PATH=" + env_lookup(env, "LD_LIBRARY_PATH").value_or("") +
                           "\n" + join(info.layers, "\n") + "\n" + join(spec.args, "\n");
    return sha256_hex(material);
}

std::optional<ProbeRun> cached_probe_run(const std::string& probe, const std::string& key) {
    fs::path dir = cache_dir();
    if (key.empty() || dir.empty()) return std::nullopt;
    auto text = read_text_file(dir / "probes" / (key + ".json"));
    if (!text) return std::nullopt;
    ProbeRun run = parse_probe_output(probe, text.value(), 0);
    if (!run.usable() || run.status == "waived") return std::nullopt;
    run.exit_code = run.status == "pass" ? 0 : 1;
    run.cached = true;
    return run;
}

void store_probe_run(const std::string& probe, const std::string& key, const ProbeRun& run) {
    fs::path dir = cache_dir();
    if (key.empty() || dir.empty() || !run.usable() || run.status == "waived") return;
    nlohmann::json line = {{"probe", probe},
                           {"schema", 1},
                           {"status", run.status},
                           {"reason", run.reason},
                           {"data", run.data}};
    (void)write_files(dir / "probes", {{key + ".json", line.dump() + "\n"}}, MissingDir::Create);
}

std::string probe_memo_key(const ImageInfo& info, const std::string& purpose,
                           const std::optional<std::string>& python_override, int timeout_s) {
    if (info.id.empty()) return {};
    return sha256_hex("probe memo 1\n" + info.id + "\n" + purpose + "\npython " +
                      python_override.value_or("-") + "\ntimeout " + std::to_string(timeout_s));
}

std::optional<KeptProbeMemo> load_probe_memo(const std::string& key) {
    fs::path dir = cache_dir();
    if (key.empty() || dir.empty()) return std::nullopt;
    auto text = read_text_file(dir / "memo" / (key + ".json"));
    if (!text) return std::nullopt;
    auto doc = nlohmann::json::parse(text.value(), nullptr, false);
    if (!doc.is_object() || !doc.contains("probes_dir") || !doc["probes_dir"].is_string() ||
        !doc.contains("gpus") || !doc["gpus"].is_number_integer() || !doc.contains("specs"))
        return std::nullopt;
    auto specs = probe_memo_from_json(doc["specs"]);
    if (!specs) return std::nullopt;
    return KeptProbeMemo{doc["probes_dir"].get<std::string>(), doc["gpus"].get<int>(),
                         std::move(*specs)};
}

void store_probe_memo(const std::string& key, const KeptProbeMemo& memo) {
    fs::path dir = cache_dir();
    if (key.empty() || dir.empty()) return;
    nlohmann::json doc = {{"probes_dir", memo.probes_dir.string()},
                          {"gpus", memo.gpus},
                          {"specs", probe_memo_json(memo.specs)}};
    (void)write_files(dir / "memo", {{key + ".json", doc.dump() + "\n"}}, MissingDir::Create);
}

}  // namespace td::engine
