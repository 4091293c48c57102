#include "engine/early_probes.hpp"

#include <algorithm>

namespace td::engine {

namespace {

using json = nlohmann::json;

json spec_json(const ProbeSpec& p) {
    return {{"name", p.name},
            {"file", p.file},
            {"args", p.args},
            {"python", p.python},
            {"gpu_only", p.gpu_only},
            {"interpreters", p.interpreters},
            {"resolved", p.resolved},
            {"others", p.others},
            {"env", p.env},
            {"keep_entrypoint", p.keep_entrypoint},
            {"host_network", p.host_network}};
}

bool read_strings(const json& j, const char* key, std::vector<std::string>& out) {
    if (!j.contains(key) || !j[key].is_array()) return false;
    for (const auto& s : j[key]) {
        if (!s.is_string()) return false;
        out.push_back(s.get<std::string>());
    }
    return true;
}

bool read_bool(const json& j, const char* key, bool& out) {
    if (!j.contains(key) || !j[key].is_boolean()) return false;
    out = j[key].get<bool>();
    return true;
}

std::optional<ProbeSpec> spec_from_json(const json& j) {
    ProbeSpec p;
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string() || !j.contains("file") ||
        !j["file"].is_string())
        return std::nullopt;
    p.name = j["name"].get<std::string>();
    p.file = j["file"].get<std::string>();
    if (!read_strings(j, "args", p.args) || !read_strings(j, "interpreters", p.interpreters) ||
        !read_strings(j, "others", p.others) || !read_strings(j, "env", p.env) ||
        !read_bool(j, "python", p.python) || !read_bool(j, "gpu_only", p.gpu_only) ||
        !read_bool(j, "resolved", p.resolved) ||
        !read_bool(j, "keep_entrypoint", p.keep_entrypoint) ||
        !read_bool(j, "host_network", p.host_network))
        return std::nullopt;
    return p;
}

}  // namespace

json probe_memo_json(const ProbeMemo& memo) {
    json out = json::object();
    for (const auto& [name, spec] : memo) out[name] = spec_json(spec);
    return out;
}

std::optional<ProbeMemo> probe_memo_from_json(const json& j) {
    if (!j.is_object()) return std::nullopt;
    ProbeMemo out;
    for (const auto& [name, s] : j.items()) {
        auto spec = spec_from_json(s);
        if (!spec || spec->name != name) return std::nullopt;
        out[name] = std::move(*spec);
    }
    return out;
}

EarlyProbes::EarlyProbes(const ProbeMemo& memo, const Prober& prober) {
    std::vector<Early*> together;
    for (const auto& [name, spec] : memo) {
        auto e = std::make_unique<Early>();
        e->spec = spec;
        Early* at = e.get();
        if (spec.python) {
            e->thread = threads_.size();
            threads_.emplace_back([at, prober] { at->run = prober.one(at->spec); });
        } else {
            together.push_back(at);
        }
        runs_.push_back(std::move(e));
    }
    if (together.empty()) return;
    for (auto* e : together) e->thread = threads_.size();
    threads_.emplace_back([together, prober] {
        std::vector<ProbeSpec> specs;
        for (auto* e : together) specs.push_back(e->spec);
        auto runs = prober.all(specs);
        for (std::size_t i = 0; i < together.size() && i < runs.size(); ++i)
            together[i]->run = std::move(runs[i]);
    });
}

EarlyProbes::~EarlyProbes() {
    for (auto& t : threads_)
        if (t.joinable()) t.join();
}

bool EarlyProbes::has(const ProbeSpec& spec) const {
    return std::any_of(runs_.begin(), runs_.end(),
                       [&](const auto& e) { return !e->taken && e->spec == spec; });
}

bool EarlyProbes::holds(const std::string& name) const {
    return std::any_of(runs_.begin(), runs_.end(),
                       [&](const auto& e) { return e->spec.name == name; });
}

std::optional<ProbeRun> EarlyProbes::take(const ProbeSpec& spec) {
    for (auto& e : runs_) {
        if (e->taken || !(e->spec == spec)) continue;
        if (threads_[e->thread].joinable()) threads_[e->thread].join();
        e->taken = true;
        return std::move(e->run);
    }
    return std::nullopt;
}

}  // namespace td::engine
