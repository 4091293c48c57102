#include "engine/kb_refresh.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "core/pypi/pep440.hpp"
#include "core/pypi/release_facts.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace {

using pypi::ProjectIndex;

// Runs fn(0..n-1) on up to `jobs` threads.
void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& fn) {
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i = next++; i < n; i = next++) fn(i);
    };
    std::vector<std::thread> threads;
    std::size_t count = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(1, jobs)));
    for (std::size_t t = 1; t < count; ++t) threads.emplace_back(worker);
    worker();
    for (auto& t : threads) t.join();
}

// Metadata of one release of a project, read once however many threads ask for it.
class MetadataCache {
  public:
    explicit MetadataCache(PypiClient& client) : m_client(client) {}

    struct Entry {
        Result<WheelMetadata> metadata = Error{ErrorKind::Config, "not read"};
        const pypi::IndexFile* wheel = nullptr;
        std::string python;
    };

    // `machine`: whose Linux wheel's metadata ("x86_64", "aarch64").
    const Entry& get(const ProjectIndex& idx, const std::string& version,
                     const std::string& machine = "x86_64") {
        std::shared_future<Entry> f;
        std::promise<Entry> mine;
        bool owner = false;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            auto key = idx.name + "@" + version + "@" + machine;
            auto it = m_entries.find(key);
            if (it == m_entries.end()) {
                f = mine.get_future().share();
                m_entries.emplace(key, f);
                owner = true;
            } else {
                f = it->second;
            }
        }
        if (owner) {
            Entry e;
            auto rw = pypi::release_wheels(idx, version, machine);
            if (!rw) {
                e.metadata = rw.error();
            } else {
                e.wheel = rw->metadata_wheel;
                e.python = rw->metadata_python;
                e.metadata = m_client.wheel_metadata(*rw->metadata_wheel);
                // METADATA that describes another project or release is not this wheel's.
                if (e.metadata)
                    if (auto why =
                            pypi::metadata_mismatch(e.metadata->metadata, *rw->metadata_wheel);
                        !why.empty())
                        e.metadata = Error{ErrorKind::Config, why};
            }
            mine.set_value(std::move(e));
        }
        return f.get();
    }

  private:
    PypiClient& m_client;
    std::mutex m_mutex;
    std::map<std::string, std::shared_future<Entry>> m_entries;
};

struct Context {
    const RefreshOptions& opts;
    PypiClient& client;
    MetadataCache& cache;
    const ProjectIndex& torch;
    std::optional<ProjectIndex> toolkit, torchvision, torchaudio;
    std::mutex toolkit_mutex;
    WheelArchReader* arch;
};

std::string companion_cite(const Context& ctx, const ProjectIndex& idx,
                           const MetadataCache::Entry& e) {
    return pypi::cite_wheel(ctx.opts.index_label, idx.name, *e.wheel);
}

// Newest companion release first; reads `jobs` at a time ahead of the picker.
std::optional<pypi::Fact> pair_companion(Context& ctx, const ProjectIndex& idx,
                                         const std::string& torch_version, const char* path) {
    auto versions = idx.release_versions();
    std::reverse(versions.begin(), versions.end());
    if (versions.size() > 120) versions.resize(120);
    pypi::CompanionPicker picker(torch_version);
    std::size_t batch = static_cast<std::size_t>(std::max(1, ctx.opts.jobs));
    for (std::size_t start = 0; start < versions.size() && !picker.done(); start += batch) {
        std::size_t end = std::min(versions.size(), start + batch);
        parallel_for(end - start, static_cast<int>(batch),
                     [&](std::size_t i) { ctx.cache.get(idx, versions[start + i]); });
        for (std::size_t i = start; i < end && !picker.done(); ++i) {
            const auto& e = ctx.cache.get(idx, versions[i]);
            if (!e.metadata) continue;  // unreadable releases prove nothing
            pypi::MarkerEnvironment env;
            env.python_version = e.python;
            picker.offer(versions[i], e.metadata->metadata.requirement_on("torch", env),
                         companion_cite(ctx, idx, e));
        }
    }
    return picker.result(path);
}

// The default build's pins of one machine's wheel (through cuda-toolkit's metadata when torch
// pins it), into `facts`.
Status read_pins(Context& ctx, const std::string& version, const std::string& machine,
                 pypi::ReleaseFacts& facts) {
    const auto& entry = ctx.cache.get(ctx.torch, version, machine);
    if (!entry.metadata) return entry.metadata.error();
    const auto& md = entry.metadata->metadata;
    pypi::MarkerEnvironment env;
    env.python_version = entry.python;
    env.platform_machine = machine;
    std::string torch_cite = pypi::cite_wheel(ctx.opts.index_label, "torch", *entry.wheel);

    const pypi::CoreMetadata* toolkit_md = nullptr;
    std::string toolkit_cite;
    if (auto pin = pypi::toolkit_pin(md, env)) {
        {
            std::lock_guard<std::mutex> lock(ctx.toolkit_mutex);
            if (!ctx.toolkit) {
                auto idx = ctx.client.project("cuda-toolkit");
                if (!idx) return idx.error();
                ctx.toolkit = std::move(idx.value());
            }
        }
        const auto& tk = ctx.cache.get(*ctx.toolkit, pin->version);
        if (!tk.metadata) return tk.metadata.error();
        toolkit_md = &tk.metadata->metadata;
        toolkit_cite = pypi::cite_wheel(ctx.opts.index_label, "cuda-toolkit", *tk.wheel);
    }
    pypi::pin_facts(torch_cite, md, env, toolkit_md, toolkit_cite, facts);
    return ok_status();
}

// The release's Linux aarch64 build (PyPI carries CUDA there from torch 2.11.0, CPU-only
// before): its glibc floor and default build's pins under "platforms.linux/arm64". A release
// with no aarch64 wheel gets a null default_variant, cited.
Status read_arm64(Context& ctx, const std::string& version, pypi::ReleaseFacts& facts) {
    pypi::ReleaseFacts arm;
    auto rw = pypi::release_wheels(ctx.torch, version, "aarch64");
    if (!rw) {
        arm.facts.push_back(
            {"default_variant",
             {""},
             false,
             ctx.opts.index_label + " torch " + version + ": no Linux aarch64 wheel on the index"});
    } else {
        pypi::wheel_name_facts(ctx.opts.index_label, rw.value(), arm);
        if (auto st = read_pins(ctx, version, "aarch64", arm); !st) return st;
    }
    pypi::add_platform_facts("linux/arm64", arm, facts);
    return ok_status();
}

Result<pypi::ReleaseFacts> read_release(Context& ctx, const std::string& version) {
    pypi::ReleaseFacts facts;
    facts.version = version;
    auto rw = pypi::release_wheels(ctx.torch, version);
    if (!rw) return rw.error();
    pypi::wheel_name_facts(ctx.opts.index_label, rw.value(), facts);
    if (auto st = read_pins(ctx, version, "x86_64", facts); !st) return st.error();
    if (auto st = read_arm64(ctx, version, facts); !st) return st.error();
    const auto& entry = ctx.cache.get(ctx.torch, version);

    // The default build's arch list from its binaries; a CPU build has none to read.
    const pypi::Fact* variant = facts.find("default_variant");
    if (ctx.arch && variant && !variant->value().empty() && variant->value() != "cpu") {
        auto arch = ctx.arch->read(ctx.client, *entry.wheel);
        if (!arch) return arch.error();
        if (arch.value())
            facts.facts.push_back({"variants." + variant->value() + ".arch_list",
                                   arch.value()->entries, true, arch.value()->source});
    }
    // Both companions are scanned at once: each scan is a chain of small range reads.
    auto vision = std::async(std::launch::async, [&] {
        return pair_companion(ctx, *ctx.torchvision, version, "torchvision");
    });
    auto audio = std::async(std::launch::async, [&] {
        return pair_companion(ctx, *ctx.torchaudio, version, "torchaudio");
    });
    for (auto [fact, path] :
         {std::pair{vision.get(), "torchvision"}, std::pair{audio.get(), "torchaudio"}})
        facts.facts.push_back(fact ? *fact
                                   : pypi::Fact{path,
                                                {""},
                                                false,
                                                ctx.opts.index_label + " " + path +
                                                    ": no release requires a torch that admits " +
                                                    version});
    return facts;
}

}  // namespace

Result<RefreshResult> refresh_torch_data(const std::string& torch_json, const RefreshOptions& opts,
                                         WheelArchReader* arch_reader) {
    auto known = pypi::torch_data_versions(torch_json);
    if (!known) return known.error();
    PypiClient client(opts.index_url);
    auto torch = client.project("torch");
    if (!torch) return torch.error();
    MetadataCache cache(client);
    Context ctx{opts, client, cache, torch.value(), {}, {}, {}, {}, arch_reader};
    for (auto [slot, name] :
         {std::pair{&ctx.torchvision, "torchvision"}, std::pair{&ctx.torchaudio, "torchaudio"}}) {
        auto idx = client.project(name);
        if (!idx) return idx.error();
        *slot = std::move(idx.value());
    }

    std::vector<std::string> wanted = opts.releases;
    auto on_index = torch->release_versions();
    if (wanted.empty()) {
        std::optional<pypi::Pep440Version> oldest;
        for (const auto& v : known.value())
            if (auto p = pypi::Pep440Version::parse(v); p && (!oldest || *p < *oldest)) oldest = p;
        for (const auto& v : on_index)
            if (!oldest || !(*pypi::Pep440Version::parse(v) < *oldest)) wanted.push_back(v);
    } else {
        for (const auto& v : wanted)
            if (std::find(on_index.begin(), on_index.end(), v) == on_index.end())
                return Error{ErrorKind::Config,
                             "torch " + quote_value(v) + " has no final Linux x86_64 release on " +
                                 opts.index_label + " (" + std::to_string(on_index.size()) +
                                 " releases there, " +
                                 (on_index.empty() ? std::string("none")
                                                   : on_index.front() + " to " + on_index.back()) +
                                 ")"};
    }

    // The torch wheels' metadata in parallel first (three range requests each).
    if (opts.on_progress)
        opts.on_progress("the metadata of " + std::to_string(wanted.size()) + " torch releases");
    parallel_for(wanted.size(), opts.jobs, [&](std::size_t i) {
        cache.get(torch.value(), wanted[i]);
        cache.get(torch.value(), wanted[i], "aarch64");
    });
    std::vector<std::optional<Result<pypi::ReleaseFacts>>> results(wanted.size());
    // Releases one at a time, each with `jobs` requests in flight: the companion scans of
    // neighbouring releases share the metadata cache.
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        if (opts.on_progress)
            opts.on_progress("torch " + wanted[i] + " (" + std::to_string(i + 1) + " of " +
                             std::to_string(wanted.size()) + ")");
        results[i] = read_release(ctx, wanted[i]);
    }
    std::vector<pypi::ReleaseFacts> facts;
    RefreshResult out;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        if (!*results[i])
            return Error{results[i]->error().kind,
                         "torch " + wanted[i] + ": " + results[i]->error().message};
        bool known_release = std::find(known->begin(), known->end(), wanted[i]) != known->end();
        if (!known_release && !results[i]->value().find("python.min")) {
            out.skipped.push_back(
                "torch " + wanted[i] +
                ": no CPython 3 Linux x86_64 wheel, so no Python range; not added");
            continue;
        }
        facts.push_back(std::move(results[i]->value()));
    }
    auto update = pypi::update_torch_data(torch_json, facts);
    if (!update) return update.error();
    out.update = std::move(update.value());
    out.facts = std::move(facts);
    out.releases = wanted;
    out.requests = client.requests();
    out.bytes = client.bytes();
    return out;
}

}  // namespace td::engine
