// `evaluate`: both tiers of checks, then the evidence rule over all of them.
#include "core/validate/checks.hpp"

#include <algorithm>

#include "core/validate/check_context.hpp"
#include "core/validate/probe_plan.hpp"
#include "util/version.hpp"

namespace td {
namespace validate_detail {

using json = nlohmann::json;

std::string str(const json& j, const char* key) {
    if (!j.is_object()) return {};
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_integer()) return std::to_string(it->get<long long>());
    if (it->is_number()) return std::to_string(it->get<double>());
    if (it->is_boolean()) return it->get<bool>() ? "true" : "false";
    return {};
}

VersionMatch match_version(const std::string& have, const std::string& want) {
    auto numeric = [](const std::string& v) {
        return Version::parse(v.substr(0, v.find_first_not_of("0123456789.")));
    };
    auto h = numeric(have), w = numeric(want);
    if (!h || !w) return have == want ? VersionMatch::Equal : VersionMatch::Differs;
    std::size_t n = std::min(h->parts().size(), w->parts().size());
    for (std::size_t i = 0; i < n; ++i)
        if (h->parts()[i] != w->parts()[i]) return VersionMatch::Differs;
    return w->parts().size() > h->parts().size() ? VersionMatch::Unverifiable : VersionMatch::Equal;
}

std::string distribution_version(const CheckContext& ctx, const std::string& name) {
    const json& d = ctx.data("torch");
    auto it = d.find("distributions");
    if (it == d.end() || !it->is_object() || !it->contains(name)) return {};
    return str((*it)[name], "version");
}

std::pair<std::string, std::string> wheel_of_loaded(const CheckContext& ctx,
                                                    const std::string& family) {
    const ProbeRun* torch = ctx.probe("torch");
    if (!torch) return {};
    auto loaded = loaded_library_paths(*torch, family);
    const json& d = ctx.data("torch");
    auto dists = d.find("distributions");
    if (loaded.empty() || dists == d.end() || !dists->is_object()) return {};
    // The wheel whose location + "nvidia/<family dir>/lib/" holds the loaded main library.
    std::string dir = loaded.front().substr(0, loaded.front().find_last_of('/') + 1);
    for (const auto& [name, info] : dists->items()) {
        std::string location = str(info, "location");
        if (name.rfind("nvidia-", 0) != 0 || location.empty()) continue;
        if (location.back() != '/') location += '/';
        if (dir.rfind(location + "nvidia/", 0) == 0) {
            // nvidia-cudnn-cu12 -> nvidia/cudnn/lib; the family decides which wheel, not the dir
            std::string stem =
                name.substr(7, name.rfind("-cu") == std::string::npos ? std::string::npos
                                                                      : name.rfind("-cu") - 7);
            std::string want = family == "cudart" ? "cuda-runtime" : family;
            if (stem == want) return {name, str(info, "version")};
        }
    }
    return {};
}

const ProbeRun* CheckContext::probe(const std::string& name) const {
    auto it = m_in.probes.find(name);
    return it == m_in.probes.end() ? nullptr : &it->second;
}

const json& CheckContext::data(const std::string& name) const {
    static const json empty = json::object();
    const ProbeRun* p = probe(name);
    return p && p->usable() ? p->data : empty;
}

std::string CheckContext::expected(const std::string& key) const {
    m_keys_read.insert(key);
    auto it = m_in.expect.find(key);
    return it == m_in.expect.end() ? std::string() : it->second;
}

std::string CheckContext::why_missing(const std::string& name) const {
    const ProbeRun* p = probe(name);
    if (!p) return probe_program(name) + " was not run";
    if (!p->usable()) return p->problem();
    return p->program + ": " + (p->reason.empty() ? "nothing to report" : p->reason);
}

bool CheckContext::torch_import_failed() const {
    const auto& t = data("torch");
    return !str(t, "import_error").empty() || (t.contains("crash") && t["crash"].is_object());
}

std::string CheckContext::torch_import_failure() const {
    const auto& t = data("torch");
    if (t.contains("crash") && t["crash"].is_object())
        return "torch's process died: " + crash_summary(t["crash"]) + " (TD119)";
    return "torch does not import: " + str(t, "import_error") + " (TD119)";
}

void CheckContext::add(const std::string& id, const std::string& status,
                       const std::string& observed, const std::string& expect,
                       const std::string& message, const std::string& fix,
                       const std::string& severity) {
    const CheckInfo& c = check_info(id);
    CheckResult r;
    r.id = id;
    r.name = c.name;
    r.severity = severity;
    r.status = status;
    r.observed = observed;
    r.expected = expect;
    r.message = message;
    r.fix = status == "pass" ? "" : fix;
    if (status == "fail" || status == "warn")
        for (const auto& key : m_in.user_expect_keys)
            if (m_keys_read.count(key)) r.user_expectations.push_back(key);
    m_out.push_back(std::move(r));
}

}  // namespace validate_detail

namespace {

// The probes of the files-only tier: programs that only read the image's files.
bool reads_files(const std::string& probe) {
    return probe == "env" || probe == "libs" || probe == "record" || probe == "kernels";
}

// In the files-only tier, a check that rests on a probe that runs the image's code (torch, the
// CUDA libraries, the GPU) is skipped with the tier's reason, whatever it said without it.
void skip_what_needs_running(std::vector<CheckResult>& results, const ValidationInput& in) {
    if (in.files_only_reason.empty()) return;
    for (auto& r : results) {
        const CheckInfo& info = check_info(r.id);
        bool needs_running =
            info.tier == "gpu" || std::any_of(info.evidence.begin(), info.evidence.end(),
                                              [](const std::string& p) { return !reads_files(p); });
        // TD119 judges the files in this tier (torch_checks torch_files_only): an image with no
        // torch files fails here too.
        if (!needs_running || r.id == "TD119") continue;
        r.status = "skip";
        r.observed = r.expected = r.fix = "";
        r.message = "files-only tier: rests on probes that run the image's code";
    }
}

}  // namespace

std::vector<CheckResult> evaluate(const ValidationInput& input, const KnowledgeBase& kb) {
    validate_detail::CheckContext ctx(input, kb);
    validate_detail::judge_static_tier(ctx);
    ctx.guarded(validate_detail::judge_gpu_tier);
    std::string shape_error = ctx.shape_error();
    auto results = ctx.take_results();
    // A check that threw on its evidence emitted nothing: it is an error, never missing.
    for (const auto& info : check_catalog()) {
        bool emitted = std::any_of(results.begin(), results.end(),
                                   [&](const CheckResult& r) { return r.id == info.id; });
        if (emitted) continue;
        CheckResult r;
        r.id = info.id;
        r.name = info.name;
        r.severity = r.status = "error";
        r.message =
            "cannot be judged: a probe's answer has an unexpected shape (" + shape_error + ")";
        r.fix = "report this image's probe output (validate --json) to torchdock";
        results.push_back(std::move(r));
    }
    skip_what_needs_running(results, input);
    apply_evidence_rule(results, input);
    return results;
}

}  // namespace td
