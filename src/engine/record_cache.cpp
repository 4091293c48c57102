#include "engine/record_cache.hpp"

#include <cstdlib>

#include "engine/files.hpp"
#include "engine/probe_exec.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;

fs::path cache_dir() {
    if (const char* d = std::getenv("TORCHDOCK_CACHE_DIR"); d && *d) return d;
    if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "torchdock";
    if (const char* home = std::getenv("HOME"); home && *home)
        return fs::path(home) / ".cache" / "torchdock";
    return {};
}

std::string record_cache_key(const ImageInfo& info, const ProbeSpec& spec,
                             const fs::path& probes_dir) {
    auto binary = read_text_file(probes_dir / spec.file, std::size_t{64} << 20);
    if (!binary || info.layers.empty()) return {};
    std::string material = "probe-record cache 1\n" + sha256_hex(binary.value()) + "\nuser " +
                           info.user + "\n" + join(info.layers, "\n") + "\n" +
                           join(spec.args, "\n");
    return sha256_hex(material);
}

std::optional<ProbeRun> cached_record(const std::string& key) {
    fs::path dir = cache_dir();
    if (key.empty() || dir.empty()) return std::nullopt;
    auto text = read_text_file(dir / "record" / (key + ".json"));
    if (!text) return std::nullopt;
    ProbeRun run = parse_probe_output("record", text.value(), 0);
    if (!run.usable()) return std::nullopt;
    run.exit_code = run.status == "pass" ? 0 : 1;
    run.cached = true;
    return run;
}

void store_record(const std::string& key, const ProbeRun& run) {
    fs::path dir = cache_dir();
    if (key.empty() || dir.empty() || !run.usable() || run.status == "waived") return;
    nlohmann::json line = {{"probe", "record"},
                           {"schema", 1},
                           {"status", run.status},
                           {"reason", run.reason},
                           {"data", run.data}};
    (void)write_files(dir / "record", {{key + ".json", line.dump() + "\n"}}, MissingDir::Create);
}

}  // namespace td::engine
