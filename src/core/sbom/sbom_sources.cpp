#include "core/sbom/sbom_sources.hpp"

#include "core/json/json_text.hpp"
#include "core/render/apt_lock.hpp"
#include "core/render/python_lock.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

using json = nlohmann::json;
using Kind = SbomComponent::Kind;

SbomComponent component(Kind kind, std::string name, std::string version) {
    SbomComponent c;
    c.kind = kind;
    c.name = std::move(name);
    c.version = std::move(version);
    return c;
}

// "nvidia/cuda:12.4.1-runtime-ubuntu22.04" -> repository and tag.
std::pair<std::string, std::string> split_reference(const std::string& ref) {
    auto slash = ref.rfind('/');
    auto colon = ref.rfind(':');
    if (colon == std::string::npos || (slash != std::string::npos && colon < slash))
        return {ref, ""};
    return {ref.substr(0, colon), ref.substr(colon + 1)};
}

}  // namespace

Result<SbomInput> variant_sbom_input(const Variant& v, const KnowledgeBase& kb) {
    if (!v.python_lock)
        return Error{ErrorKind::Config,
                     "variant " + v.name + " has no Python lock (" +
                         (v.python_not_locked.empty() ? std::string("none") : v.python_not_locked) +
                         "), so its packages are not known by hash; run `torchdock lock`, or "
                         "give the built image instead"};
    const Manifest& m = *v.manifest;
    SbomInput in;
    in.subject = {v.name, v.tag, "variant", {}};
    for (const auto& [k, value] : std::vector<std::pair<std::string, std::string>>{
             {"torchdock:manifest", m.file},
             {"torchdock:manifest-sha256", m.sha256},
             {"torchdock:lock", v.python_lock_file},
             {"torchdock:python", v.python},
             {"torchdock:torch", v.torch},
             {"torchdock:cuda", v.cuda},
             {"torchdock:os", v.os_id},
             {"torchdock:target-gpus", join(v.target_gpus, ",")},
             // Built for several platforms, the packages below are the first one's set.
             {"torchdock:python-set-platform",
              v.platform_locks.empty() ? std::string() : m.platforms.front()}})
        if (!value.empty()) in.subject.properties.emplace_back(k, value);
    auto [repo, tag] = split_reference(v.base_ref);
    SbomComponent base = component(Kind::BaseImage, repo, tag);
    if (v.base_digest)
        base.digest = *v.base_digest;
    else
        base.note = "not locked by digest: `torchdock lock` pins it";
    in.components.push_back(std::move(base));
    const bool torch_index = v.torch_source == Variant::TorchSource::PytorchIndex;
    for (const auto& p : v.python_lock->packages) {
        SbomComponent c = component(Kind::Python, p.name, p.version);
        for (const auto& h : p.hashes)
            if (starts_with(h, "sha256:")) c.hashes.push_back({"SHA-256", h.substr(7)});
        c.download_url = p.url;
        if (p.url.empty())
            c.index = torch_index && p.version.find('+') != std::string::npos
                          ? "the PyTorch wheel index (" + v.wheel_variant + ")"
                          : "PyPI or the mirror the build's settings name";
        c.required_by = p.required_by;
        c.note = "hash-locked in " + v.python_lock_file;
        in.components.push_back(std::move(c));
    }
    auto apt = [&](const std::string& pin, const std::string& how) {
        auto eq = pin.find('=');
        SbomComponent c = component(Kind::Apt, pin.substr(0, eq),
                                    eq == std::string::npos ? "" : pin.substr(eq + 1));
        c.os_id = v.os_id;
        c.note = how + (eq == std::string::npos ? "; not pinned to a version" : "");
        in.components.push_back(std::move(c));
    };
    for (const auto& p : v.system_apt) apt(p, "the Python the image runs");
    if (v.apt_lock) {
        for (const auto& p : apt_locked_pins(*v.apt_lock))
            apt(p, "resolved in the pinned base by `torchdock lock`");
    } else {
        for (const auto& p : v.apt) apt(p, "the manifest's apt list");
    }
    if (m.openmpi) {
        apt("libopenmpi-dev=" + *m.openmpi, "OpenMPI");
        apt("openmpi-bin=" + *m.openmpi, "OpenMPI");
    }
    for (const auto& ext : v.extensions) {
        if (ext.from_source) {
            // Built in the image's build stage: known by its source archive (the wheel and its
            // GPU code exist only after the build; `sbom IMAGE` reads them).
            SbomComponent c = component(Kind::Python, ext.name, ext.version);
            c.hashes.push_back({"SHA-256", ext.sha256});
            c.download_url = ext.url;
            c.note =
                "built from this source archive in the image's build stage for "
                "TORCH_CUDA_ARCH_LIST " +
                (v.source_build ? v.source_build->arch_list : std::string("?")) +
                " (the hash is the archive's)";
            in.components.push_back(std::move(c));
            continue;
        }
        const ExtensionInfo* info = kb.extensions().find(ext.name);
        const ExtensionRelease* rel = info ? info->release(ext.version) : nullptr;
        if (!rel || ext.facts_source.empty()) continue;
        for (const auto& o : rel->objects) {
            SbomComponent c = component(Kind::GpuObject, o.path, ext.version);
            c.path = o.path;
            c.gpu_targets = o.targets;
            c.note = "in " + ext.name + " " + ext.version + ": " + rel->source;
            in.components.push_back(std::move(c));
        }
    }
    return in;
}

namespace {

// What probe-record's reading of one distribution vouches for. A RECORD that lists no file
// (or none with a hash) vouches for nothing, and is not called "as its RECORD says".
std::string record_note(const json& d) {
    auto count = [&d](const char* key) -> long long {
        if (!d.is_object() || !d.contains(key)) return -1;
        const json& v = d[key];
        if (v.is_number_unsigned() || v.is_number_integer()) return v.get<long long>();
        return -1;
    };
    long long problems = count("problems_total");
    if (problems < 0)
        problems = d.is_object() && d.contains("problems") && d["problems"].is_array()
                       ? static_cast<long long>(d["problems"].size())
                       : 0;
    if (problems > 0) return std::to_string(problems) + " file(s) differ from its RECORD";
    // `files`: the files with a sha256 hash that were checked; `unchecked`: rows with another
    // algorithm (rows with no hash, such as RECORD itself, are not counted at all).
    long long files = count("files"), unchecked = count("unchecked");
    if (files == 0 && unchecked > 0)
        return "installed; its RECORD gives " + std::to_string(unchecked) +
               " file(s) a hash other than sha256 and none a sha256 one, so no file was "
               "checked (probe-record)";
    if (files == 0)
        return "installed; its RECORD lists no files with a hash, so no file was checked "
               "(probe-record)";
    if (unchecked > 0)
        return "installed; its " + std::to_string(files) +
               " file(s) with a sha256 hash as its RECORD says, " + std::to_string(unchecked) +
               " with another hash not checked (probe-record)";
    return "installed; every file as its RECORD says (probe-record)";
}

}  // namespace

Result<SbomInput> image_sbom_input(const std::string& image_ref, const std::string& image_id,
                                   const std::map<std::string, std::string>& labels,
                                   const std::map<std::string, ProbeRun>& probes) {
    auto probe = [&](const char* name) -> const ProbeRun* {
        auto it = probes.find(name);
        return it == probes.end() ? nullptr : &it->second;
    };
    const ProbeRun* record = probe("record");
    if (!record || !record->usable() || !record->data.contains("distributions"))
        return Error{ErrorKind::Environment,
                     "the installed Python distributions of " + image_ref + " could not be read (" +
                         (record ? record->problem() : std::string("probe-record did not run")) +
                         "), so there is nothing to list"};
    SbomInput in;
    in.subject = {image_ref, image_id, "image", {}};
    for (const char* key : {"variant", "torch", "cuda", "python", "manifest", "target-gpus"})
        if (auto it = labels.find(std::string("io.torchdock.") + key); it != labels.end())
            in.subject.properties.emplace_back(std::string("torchdock:") + key, it->second);
    if (auto name = labels.find("org.opencontainers.image.base.name"); name != labels.end()) {
        auto [repo, tag] = split_reference(name->second);
        SbomComponent base = component(Kind::BaseImage, repo, tag);
        if (auto d = labels.find("org.opencontainers.image.base.digest"); d != labels.end())
            base.digest = d->second;
        base.note = "from the image's org.opencontainers.image.base labels";
        in.components.push_back(std::move(base));
    }
    for (const auto& d : record->data["distributions"]) {
        SbomComponent c = component(Kind::Python, string_at(d, "name"), string_at(d, "version"));
        if (c.name.empty()) continue;
        c.path = string_at(d, "dist_info");
        c.note = record_note(d);
        in.components.push_back(std::move(c));
    }
    if (const ProbeRun* torch = probe("torch"); torch && torch->usable())
        for (const auto& lib : torch->data.value("loaded_libraries", json::array())) {
            if (!lib.is_string()) continue;
            std::string path = lib.get<std::string>();
            SbomComponent c = component(Kind::CudaLibrary, path.substr(path.rfind('/') + 1), "");
            c.path = path;
            c.note = "loaded by torch (the torch probe read its process's mappings)";
            in.components.push_back(std::move(c));
        }
    if (const ProbeRun* kernels = probe("kernels"); kernels && kernels->usable())
        for (const auto& o : kernels->data.value("objects", json::array())) {
            if (!o.is_object() || !o.value("has_fatbin", false)) continue;
            std::string path = string_at(o, "path");
            SbomComponent c = component(Kind::GpuObject, path.substr(path.rfind('/') + 1), "");
            c.path = path;
            for (const auto& s : o.value("sass", json::array()))
                if (s.is_string()) c.gpu_targets.push_back(s.get<std::string>());
            for (const auto& p : o.value("ptx", json::array()))
                if (p.is_object()) c.gpu_targets.push_back(string_at(p, "arch"));
            c.note = "GPU code read from its fatbins (probe-kernels)";
            in.components.push_back(std::move(c));
        }
    // What could not be read is said, so a short list is never taken for a complete one.
    std::vector<std::string> unread;
    for (const char* name : {"torch", "kernels"}) {
        const ProbeRun* run = probe(name);
        if (!run)
            unread.push_back(std::string(name) + " probe did not run");
        else if (!run->usable())
            unread.push_back(run->problem());
    }
    if (!unread.empty())
        in.subject.properties.emplace_back(
            "torchdock:not-read",
            join(unread, "; ") +
                " (the CUDA libraries torch loads or the GPU objects are missing)");
    return in;
}

}  // namespace td
