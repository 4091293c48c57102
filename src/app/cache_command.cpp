// `torchdock cache list|prune`: the sandbox's image store (engine/image_store).
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "app/image_hosts.hpp"
#include "app/output.hpp"
#include "core/build/image_source.hpp"
#include "engine/image_store.hpp"
#include "report/table.hpp"

namespace td::app {
namespace {

std::string gigabytes(std::uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / double(1 << 30));
    return buf;
}

}  // namespace

Result<std::uint64_t> sandbox_cache_cap(const std::optional<std::string>& flag) {
    if (flag) return parse_byte_size(*flag);
    if (const char* env = std::getenv("TORCHDOCK_SANDBOX_CACHE_MAX"); env && *env) {
        auto cap = parse_byte_size(env);
        if (!cap)
            return Error{ErrorKind::Usage, "TORCHDOCK_SANDBOX_CACHE_MAX: " + cap.error().message};
        return cap;
    }
    return std::uint64_t{50} << 30;
}

int run_cache_list(const CacheOptions& opts) {
    if (auto st = check_report_flags({{"--json", &opts.json}}); !st) return fail(st.error());
    auto dir = engine::default_store_dir();
    auto entries = engine::list_store(dir);
    if (!entries) return fail(entries.error());
    std::uint64_t total = 0;
    nlohmann::json list = nlohmann::json::array();
    std::vector<std::vector<std::string>> rows;
    for (const auto& e : entries.value()) {
        total += e.bytes;
        char when[32] = "";
        std::time_t t = static_cast<std::time_t>(e.last_used);
        std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", std::gmtime(&t));
        rows.push_back({e.chain.substr(0, 16), gigabytes(e.bytes), when});
        list.push_back({{"chain", e.chain}, {"bytes", e.bytes}, {"last_used", e.last_used}});
    }
    std::ostream& human = to_stdout(opts.json) ? std::cerr : std::cout;
    human << report::format_table({"ROOT", "ITS LAYER ADDED", "LAST USED (UTC)"}, rows)
          << entries->size() << " roots, " << gigabytes(total) << " in " << dir.string() << "\n";
    nlohmann::json report = {
        {"schema", 1}, {"store", dir.string()}, {"bytes", total}, {"roots", list}};
    if (auto st = emit_report(opts.json, report.dump(2) + "\n"); !st) return fail(st.error());
    return k_exit_ok;
}

int run_cache_prune(const CacheOptions& opts) {
    auto cap = sandbox_cache_cap(opts.max_size);
    if (!cap) return fail(cap.error());
    auto dir = engine::default_store_dir();
    auto freed = engine::prune_store(dir, cap.value());
    if (!freed) return fail(freed.error());
    std::cout << "freed " << gigabytes(freed.value()) << " from " << dir.string() << " (kept under "
              << gigabytes(cap.value()) << ")\n";
    return k_exit_ok;
}

}  // namespace td::app
