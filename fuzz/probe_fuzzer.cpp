// libFuzzer target: any bytes as probe output (probes/README.md: the last line is the JSON
// result) must become a run that is evidence or says why not, and `evaluate` must judge every
// check over those runs without throwing (adversarial-2 N12: a wrong JSON type in a probe
// answer aborted validate). The input holds one result line per probe; each probe name in
// the check catalog gets the last line naming it (or the whole input when none does). The
// same runs build a doctor fingerprint whose findings are computed too, and the flags later
// probes would get from them.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "core/diagnose/doctor.hpp"
#include "core/validate/checks.hpp"
#include "core/validate/probe_plan.hpp"
#include "core/validate/runtime_env.hpp"
#include "fuzz_support.hpp"

namespace {

const std::set<std::string>& probe_names() {
    static const std::set<std::string> names = [] {
        std::set<std::string> out;
        for (const auto& c : td::check_catalog())
            for (const auto& e : c.evidence) out.insert(e);
        return out;
    }();
    return names;
}

// The last line that names probe `name` as its "probe", else all of `text`.
std::string output_for(const std::string& name, const std::string& text) {
    std::string best;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string_view line(text.data() + start, end - start);
        if (line.find("\"probe\":\"" + name + "\"") != std::string_view::npos ||
            line.find("\"probe\": \"" + name + "\"") != std::string_view::npos)
            best = std::string(line);
        start = end + 1;
    }
    return best.empty() ? text : best;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    td::ValidationInput in;
    in.image = "fuzz:1";
    in.image_id = "sha256:" + std::string(64, '0');
    in.gpu_tier = size % 2 == 1;
    if (!in.gpu_tier) in.gpu_skip_reason = "no GPU";
    in.shm_bytes = 64LL << 20;
    for (const auto& name : probe_names()) {
        std::string out = output_for(name, text);
        td::ProbeRun run;
        for (int exit_code : {0, 1, 2, 3}) {  // the code that agrees with its status
            run = td::parse_probe_output(name, out, exit_code);
            if (run.usable()) break;
        }
        if (run.usable() == !run.problem().empty()) std::abort();
        in.probes[name] = std::move(run);
    }
    const td::ProbeRun* env = in.probes.count("env") ? &in.probes["env"] : nullptr;
    in.runtime = td::plan_runtime({"PATH=/usr/bin"}, {}, env, nullptr, "n", std::nullopt);
    const td::ProbeRun* torch = in.probes.count("torch") ? &in.probes["torch"] : nullptr;
    const td::ProbeRun* cuda = in.probes.count("cuda") ? &in.probes["cuda"] : nullptr;
    for (const auto& name : probe_names())
        (void)td::dynamic_probe_flags(name, torch, cuda, td::fuzz::kb(), "/x/libfoo.so");

    std::vector<td::CheckResult> results = td::evaluate(in, td::fuzz::kb());
    if (results.empty()) std::abort();
    static const std::set<std::string> statuses = {"pass", "fail", "warn", "skip", "error"};
    for (const auto& r : results)
        if (!statuses.count(r.status) || r.id.empty()) std::abort();

    td::EnvironmentFacts facts;
    facts.kind = "image";
    facts.subject = "fuzz:1";
    facts.glibc = "2.36";
    facts.env = {"PATH=/usr/bin", "LD_LIBRARY_PATH=/usr/local/cuda/lib64"};
    nlohmann::json fp = td::build_fingerprint(facts, in.probes);
    for (const auto& f : td::doctor_findings(fp, td::fuzz::kb(), &td::fuzz::signatures()))
        if (f.id.empty()) std::abort();
    return 0;
}
