#include "app/image_hosts.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>

#include "app/console.hpp"
#include "app/probe_containers.hpp"
#include "app/settings.hpp"
#include "core/build/image_source.hpp"
#include "engine/image_store.hpp"
#include "util/strings.hpp"

namespace td::app {

bool is_engine_image(const std::string& image) {
    auto s = parse_image_source(image);
    return !s || s->in_engine();
}

bool needs_engine(const std::vector<std::string>& images) {
    for (const auto& i : images)
        if (is_engine_image(i)) return true;
    return false;
}

std::string host_machine() {
    struct utsname u {};
    return ::uname(&u) == 0 ? std::string(u.machine) : std::string();
}

namespace {

std::string platform_of_machine(const std::string& machine) {
    if (machine == "aarch64") return "linux/arm64";
    if (machine == "x86_64") return "linux/amd64";
    return "linux/" + machine;
}

std::string megabytes(std::uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f MB", static_cast<double>(bytes) / 1e6);
    return buf;
}

}  // namespace

Result<std::unique_ptr<engine::SandboxHost>> open_sandbox(const std::string& image,
                                                          std::string& detail) {
    auto source = parse_image_source(image);
    if (!source) return source.error();
    if (auto bwrap = engine::find_bwrap(); !bwrap) return bwrap.error();
    progress(image + ": reading the image (" + source->transport_name() +
             ") into the sandbox store");
    engine::StoreOptions options;
    options.platform = platform_of_machine(host_machine());
    ImageSource read_from = source.value();
    if (read_from.transport == ImageSource::Transport::Registry) {
        // Registry mirrors from the settings, as `lock` and `build` use them.
        auto settings = load_settings(SettingsOptions{});
        if (!settings) return settings.error();
        read_from.registry_ref = apply_mirrors(read_from.registry_ref, settings->mirrors);
    }
    auto local = engine::open_local_image(read_from, options);
    if (!local) return Error{local.error().kind, image + ": " + local.error().message};
    if (local->cached) {
        detail = "bubblewrap over the unpacked layers in " + local->root.string() + " (cached)";
    } else {
        char rate[64] = "";
        if (local->unpack_seconds > 0)
            std::snprintf(rate, sizeof rate, ", %.0f MB/s",
                          static_cast<double>(local->unpacked_bytes) / 1e6 / local->unpack_seconds);
        char secs[64];
        std::snprintf(secs, sizeof secs, "%.1f s", local->unpack_seconds);
        detail = "bubblewrap over " + local->root.string() + " (unpacked " +
                 megabytes(local->unpacked_bytes) + " in " + secs + rate + ")";
    }
    if (::geteuid() != 0)
        detail +=
            "; unprivileged: every file belongs to the invoking user (as under enroot), so "
            "permissions a USER other than root would meet are not the engine's";
    progress(image + ": " + detail);
    if (!local->cached) {
        // The store kept under its cap: the least recently used roots go, never this one.
        auto cap = sandbox_cache_cap(std::nullopt);
        if (!cap) return cap.error();
        (void)engine::prune_store(engine::default_store_dir(), cap.value(), local->root);
    }
    return std::make_unique<engine::SandboxHost>(local->root, std::move(local->info), image);
}

int OpenedImage::stop_interrupted(const std::string& run_label) const {
    return api ? stop_interrupted_run(*api, run_label) : stop_interrupted_sandbox_run();
}

Result<OpenedImage> open_image(const std::string& image) {
    OpenedImage out;
    if (!is_engine_image(image)) {
        auto sandbox = open_sandbox(image, out.detail);
        if (!sandbox) return sandbox.error();
        out.info = *sandbox.value()->inspect_image(image).value();
        out.host = std::move(sandbox.value());
        out.machine = host_machine();
    } else {
        auto api = engine::DockerApi::from_environment();
        if (!api) return api.error();
        if (auto st = api->ping(); !st) return st.error();
        remove_leftovers_of_killed_runs(api.value());
        auto info = api->inspect_image(image);
        if (!info) return info.error();
        if (!info.value())
            return Error{ErrorKind::Config,
                         "no such image: " + image + " (build or pull it first)"};
        out.info = *info.value();
        auto engine_info = api->info();
        out.machine = engine_info ? engine_info->architecture : "";
        out.host = std::make_unique<engine::EngineHost>(api.value());
        out.api = std::move(api.value());
    }
    out.id = out.info.id.empty() ? image : out.info.id;
    return out;
}

}  // namespace td::app
