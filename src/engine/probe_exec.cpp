#include "engine/probe_exec.hpp"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "core/validate/probe_batch.hpp"
#include "core/validate/probe_plan.hpp"
#include "engine/container_run.hpp"
#include "engine/early_probes.hpp"
#include "engine/interrupt.hpp"
#include "engine/process.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;

std::vector<ProbeSpec> validation_probes(bool gpu_tier) {
    return {
        probe_spec("torch", "torch_probe.py", {"--world-size=2", "--timeout=120"}, true),
        probe_spec("libs", "probe-libs"),
        probe_spec("record", "probe-record"),
        probe_spec("kernels", "probe-kernels"),
        probe_spec("cuda", "probe-cuda"),
        probe_spec("cudnn", "probe-cudnn"),
        probe_spec("nccl", "probe-nccl", {gpu_tier ? "--timeout=120" : "--sizes=1K"}),
        // TD144 judges this figure: sustained (10 s of GEMMs per dtype after 2 s of warm-up,
        // about 70 s for the five dtypes) on full-entropy operands, the throughput users get.
        probe_spec("gemm", "probe-gemm",
                   {"--sizes=8192", "--timing=sustained", "--seconds=10", "--warmup-seconds=2"},
                   false, true),
    };
}

std::vector<ProbeSpec> quick_validation_probes() {
    std::vector<ProbeSpec> out;
    for (auto& p : validation_probes(false)) {
        if (p.name == "gemm") continue;
        if (p.name == "torch") p.args = {"--world-size=1", "--timeout=40"};
        if (p.name == "nccl") p.args = {"--sizes=1K", "--modes=single"};
        out.push_back(std::move(p));
    }
    return out;
}

namespace {
// Facts only: no matmul, one process.
ProbeSpec torch_facts_probe() {
    return probe_spec("torch", "torch_probe.py",
                      {"--dtypes=none", "--world-size=1", "--timeout=60"}, true);
}
}  // namespace

std::vector<ProbeSpec> files_only_probes() {
    return {probe_spec("libs", "probe-libs"), probe_spec("record", "probe-record"),
            probe_spec("kernels", "probe-kernels")};
}

std::vector<ProbeSpec> sbom_probes() {
    return {torch_facts_probe(), probe_spec("record", "probe-record", {"--dists=*"}),
            probe_spec("kernels", "probe-kernels")};
}

std::vector<ProbeSpec> kernel_audit_probes() {
    return {torch_facts_probe(), probe_spec("kernels", "probe-kernels")};
}

std::vector<ProbeSpec> doctor_probes() {
    return {
        torch_facts_probe(),
        probe_spec("libs", "probe-libs"),
        probe_spec("record", "probe-record"),
        probe_spec("kernels", "probe-kernels"),
        probe_spec("cuda", "probe-cuda"),
        probe_spec("cudnn", "probe-cudnn"),
        probe_spec("nccl", "probe-nccl", {"--sizes=1K", "--modes=single"}),
    };
}

std::vector<ProbeRun> Prober::all(const std::vector<ProbeSpec>& specs) const {
    if (many && specs.size() > 1) return many(specs);
    if (specs.size() == 1) return {one(specs.front())};
    std::vector<ProbeRun> runs(specs.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < specs.size(); ++i)
        threads.emplace_back([&, i] { runs[i] = one(specs[i]); });
    for (auto& t : threads) t.join();
    return runs;
}

namespace {

// The flags a probe gets from what ran before it (`torch`, `cuda`), and the environment it
// runs in (the plan's, not what earlier probes found); false: it has nothing to run on.
bool prepare(ProbeSpec& p, const RuntimePlan& plan, const KnowledgeBase& kb, const ProbeRun* torch,
             const ProbeRun* cuda) {
    for (auto& flag : !plan.files_only
                          ? dynamic_probe_flags(p.name, torch, cuda, kb, plan.ld_preload)
                          : files_only_probe_flags(p.name, plan))
        p.args.push_back(std::move(flag));
    // probe-record checks the site directories torch's python imports from; without any
    // (no python), there is nothing to check and it is not run.
    if (p.name == "record" && std::none_of(p.args.begin(), p.args.end(), [](const std::string& a) {
            return starts_with(a, "--site-dirs=");
        }))
        return false;
    p.env = plan.env;
    if (p.python) {
        p.interpreters = plan.candidates;
        p.resolved = plan.resolved;
        p.others = plan.others;
    } else {
        p.env.push_back("LD_PRELOAD=");  // judged on its own (probe-libs --preload)
    }
    return true;
}

// The probes whose flags need only where torch's python imports from, not what torch loaded.
bool needs_only_site_dirs(const std::string& probe) { return probe == "libs" || probe == "record"; }

// When nothing of record's or libs' started early (a first run): a locate run of the torch
// probe (where torch would be imported from, not imported) gives their flags in a fraction of
// the import's time, and they start then, beside the import. Their runs are kept only when
// torch's own answer gives exactly the same spec (EarlyProbes' rule); otherwise (torch came
// from elsewhere, or died before saying) they run again with their own.
class LocatedProbes {
  public:
    LocatedProbes(const std::vector<ProbeSpec>& specs, const RuntimePlan& plan,
                  const KnowledgeBase& kb, const Prober& prober, const EarlyProbes* early) {
        std::vector<ProbeSpec> after;
        for (const auto& p : specs)
            if (needs_only_site_dirs(p.name) && !(early && early->holds(p.name)))
                after.push_back(p);
        auto torch = std::find_if(specs.begin(), specs.end(),
                                  [](const ProbeSpec& p) { return p.python && p.name == "torch"; });
        if (plan.files_only || torch == specs.end() || after.empty()) return;
        ProbeSpec locate = *torch;
        prepare(locate, plan, kb, nullptr, nullptr);
        locate.args.push_back("--locate");
        thread_ = std::thread([this, &plan, &kb, &prober, locate, after]() mutable {
            ProbeRun where = prober.one(locate);
            if (interrupted() || where.state != ProbeRun::State::Ran) return;
            ProbeMemo guess;
            for (auto& p : after)
                if (prepare(p, plan, kb, &where, nullptr)) guess[p.name] = p;
            if (!guess.empty()) runs_ = std::make_unique<EarlyProbes>(guess, prober);
        });
    }
    LocatedProbes(const LocatedProbes&) = delete;
    LocatedProbes& operator=(const LocatedProbes&) = delete;
    ~LocatedProbes() { wait(); }
    // Waits for the locate run's answer; the runs it started after (null: none).
    EarlyProbes* runs() {
        wait();
        return runs_.get();
    }

  private:
    void wait() {
        if (thread_.joinable()) thread_.join();
    }
    std::unique_ptr<EarlyProbes> runs_;  // destroyed after the thread is joined
    std::thread thread_;
};

}  // namespace

std::map<std::string, ProbeRun> run_probes(std::vector<ProbeSpec> specs, const RuntimePlan& plan,
                                           const KnowledgeBase& kb, const Prober& prober,
                                           EarlyProbes* early, ProbeMemo* memo) {
    std::map<std::string, ProbeRun> out;
    auto find = [&](const std::string& name) -> const ProbeRun* {
        auto it = out.find(name);
        return it == out.end() ? nullptr : &it->second;
    };
    LocatedProbes located(specs, plan, kb, prober, early);
    EarlyProbes* located_runs = nullptr;  // read after the python probes' wave
    // Three waves: the python probes (the others look where torch looks), then every probe
    // that needs only their results, at once (in an image, one container for them all), then
    // gemm (it needs the GPU the cuda probe saw).
    auto wave = [&](auto&& in_wave, bool parallel) {
        std::vector<ProbeSpec> now;
        for (auto& p : specs)
            if (in_wave(p) && !interrupted() && prepare(p, plan, kb, find("torch"), find("cuda")))
                now.push_back(p);
        std::vector<ProbeRun> runs(now.size());
        std::vector<EarlyProbes*> started_in(now.size(), nullptr);  // started early with this spec
        std::vector<ProbeSpec> rest;  // not started early with this spec: run now
        std::vector<std::size_t> rest_at;
        for (std::size_t i = 0; i < now.size(); ++i) {
            if (memo && now[i].name != "gemm") (*memo)[now[i].name] = now[i];
            for (EarlyProbes* from : {early, located_runs})
                if (!started_in[i] && from && from->has(now[i])) started_in[i] = from;
            if (!started_in[i]) {
                rest.push_back(now[i]);
                rest_at.push_back(i);
            }
        }
        // The rest first: they run while the early runs still going end.
        std::vector<ProbeRun> rest_runs(rest.size());
        if (parallel && !interrupted()) {
            rest_runs = prober.all(rest);
        } else {
            for (std::size_t i = 0; i < rest.size() && !interrupted(); ++i)
                rest_runs[i] = prober.one(rest[i]);
        }
        for (std::size_t i = 0; i < rest.size(); ++i) runs[rest_at[i]] = std::move(rest_runs[i]);
        for (std::size_t i = 0; i < now.size(); ++i)
            if (started_in[i] && !interrupted())
                if (auto taken = started_in[i]->take(now[i])) runs[i] = std::move(*taken);
        for (std::size_t i = 0; i < now.size(); ++i)
            if (runs[i].state != ProbeRun::State::NotRun || !runs[i].program.empty())
                out[now[i].name] = std::move(runs[i]);
    };
    wave([](const ProbeSpec& p) { return p.python; }, false);
    located_runs = located.runs();
    wave([](const ProbeSpec& p) { return !p.python && p.name != "gemm"; }, true);
    wave([](const ProbeSpec& p) { return p.name == "gemm"; }, false);
    return out;
}

namespace {

std::string trimmed(std::string s, std::size_t max) {
    if (s.size() > max) s = s.substr(0, max);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}

// A run that gave no result line: why, in words that follow the probe's name.
ProbeRun no_result(const ProbeSpec& p, ProbeRun::State state, std::string reason) {
    ProbeRun out;
    out.program = probe_program(p.name);
    out.state = state;
    out.reason = std::move(reason);
    return out;
}

// probe-env found no `python` or `python3` in the image: an observation, in the torch
// probe's own contract (waived, no torch).
ProbeRun no_python(const ProbeSpec& p) {
    ProbeRun out = no_result(p, ProbeRun::State::Ran,
                             "no `python` or `python3` on the image's PATH (probe-env)");
    out.status = "waived";
    out.exit_code = 2;
    out.data = {{"torch", nullptr}, {"interpreters_tried", nlohmann::json::array()}};
    return out;
}

ProbeRun not_built(const ProbeSpec& p, const fs::path& dir) {
    return no_result(
        p, ProbeRun::State::NotRun,
        "it is not built in " + dir.string() + " (CUDA headers missing at build time?)");
}

// Turns what a probe process left behind into a ProbeRun.
ProbeRun judge_run(const ProbeSpec& p, int exit_code, const std::string& out_text,
                   const std::string& err_text, double seconds) {
    if (exit_code == 127 || exit_code == 126 || err_text.find("GLIBC_") != std::string::npos)
        return no_result(
            p, ProbeRun::State::Crashed,
            err_text.find("GLIBC_") != std::string::npos
                ? "the environment's glibc is older than the probes need: " + trimmed(err_text, 300)
                : "could not start (exit " + std::to_string(exit_code) +
                      "): " + trimmed(err_text, 300));
    ProbeRun out = parse_probe_output(p.name, out_text, exit_code);
    out.seconds = seconds;
    out.stderr_tail = err_text.size() > 2000 ? err_text.substr(err_text.size() - 2000) : err_text;
    return out;
}

}  // namespace

namespace {

// What every probe container shares: the probe directory read-only, the GPUs, the time limit
// and the run's label; the environment and network of `p`.
ContainerRunSpec probe_container(const std::string& image, const ProbeSpec& p,
                                 const fs::path& probes_dir, int gpus, int timeout_s,
                                 const std::string& run_label) {
    ContainerRunSpec spec;
    spec.image = image;
    spec.env = p.env;
    spec.keep_entrypoint = p.keep_entrypoint;
    if (p.host_network) spec.network_mode = "host";
    spec.binds = {fs::absolute(probes_dir).string() + ":" + k_probe_mount + ":ro"};
    spec.gpus = gpus;
    // The python probes carry the wait (torch's import is the longest run of a validate): on
    // a busy host the other probes, started beside them, yield the CPU to them. A weight
    // only orders the CPU between running probes; no probe's answer depends on it.
    if (!p.python) spec.cpu_shares = k_helper_cpu_shares;
    spec.timeout = std::chrono::seconds(timeout_s);
    spec.run_label = run_label;
    return spec;
}

std::string in_mount(const ProbeSpec& p) { return std::string(k_probe_mount) + "/" + p.file; }

// A container that did not end on its own, or whose output could not be read: why, as the
// run of `p`; nullopt when it ended and was read.
std::optional<ProbeRun> container_problem(const ProbeSpec& p, const ContainerRunResult& r,
                                          int timeout_s) {
    if (r.timed_out || r.interrupted)
        return no_result(p, ProbeRun::State::TimedOut,
                         r.interrupted ? "was interrupted"
                                       : "timed out after " + std::to_string(timeout_s) + " s");
    if (!r.logs_error.empty())
        return no_result(p, ProbeRun::State::Crashed,
                         "its output could not be read: " + r.logs_error);
    return std::nullopt;
}

}  // namespace

ProbeRun run_probe_in_image(const ImageHost& api, const std::string& image, const ProbeSpec& p,
                            const fs::path& probes_dir, int gpus, int timeout_s,
                            const std::string& run_label) {
    if (!fs::exists(probes_dir / p.file)) return not_built(p, probes_dir);
    const std::string path = in_mount(p);
    ContainerRunSpec spec = probe_container(image, p, probes_dir, gpus, timeout_s, run_label);
    if (p.python && p.resolved) {
        // Read off the image: the first is the interpreter `docker run IMAGE python` runs; no
        // shell is needed (an image may have none).
        if (p.interpreters.empty()) return no_python(p);
        spec.cmd = {p.interpreters.front(), path};
        spec.cmd.insert(spec.cmd.end(), p.args.begin(), p.args.end());
        spec.cmd.push_back("--candidates=" + join(p.interpreters, ":"));
        if (!p.others.empty()) spec.cmd.push_back("--others=" + join(p.others, ":"));
    } else if (p.python) {
        // Guessed from the image's PATH: the first that exists starts the probe, which then
        // picks the one that finds torch. The candidates (one argument, ':'-separated like
        // PATH, split with globbing off) and the probe's arguments are passed as arguments,
        // never pasted into the script.
        std::string script =
            "set -f; c=$1; list=$2; shift 2; IFS=:; for py in $list; do unset IFS; "
            "if [ -f \"$py\" ] && [ -x \"$py\" ]; then exec \"$py\" " +
            path + " \"$@\" \"$c\"; fi; IFS=:; done; echo '{\"probe\":\"" + p.name +
            "\",\"schema\":1,\"status\":\"waived\",\"reason\":\"no python "
            "interpreter in the image\",\"data\":{\"torch\":null,\"interpreters_tried\":"
            "[]}}'; exit 2";
        spec.cmd = {"/bin/sh",
                    "-c",
                    script,
                    "torchdock-probe",
                    "--candidates=" + join(p.interpreters, ":"),
                    join(p.interpreters, ":")};
        spec.cmd.insert(spec.cmd.end(), p.args.begin(), p.args.end());
    } else {
        spec.cmd = {path};
        spec.cmd.insert(spec.cmd.end(), p.args.begin(), p.args.end());
    }
    auto r = api.run(spec);
    if (!r) return no_result(p, ProbeRun::State::Crashed, r.error().message);
    if (auto problem = container_problem(p, r.value(), timeout_s)) return *problem;
    return judge_run(p, r->exit_code, r->out, r->err, r->seconds);
}

namespace {

// Probes that can share one container: none of python's, one environment and network, no
// ENTRYPOINT kept, distinct names.
bool batchable(const std::vector<ProbeSpec>& specs) {
    for (const auto& p : specs) {
        if (p.python || p.keep_entrypoint || p.env != specs.front().env ||
            p.host_network != specs.front().host_network)
            return false;
        if (std::count_if(specs.begin(), specs.end(),
                          [&](const ProbeSpec& q) { return q.name == p.name; }) > 1)
            return false;
    }
    return true;
}

}  // namespace

std::vector<ProbeRun> run_probes_in_image(const ImageHost& api, const std::string& image,
                                          const std::vector<ProbeSpec>& specs,
                                          const fs::path& probes_dir, int gpus, int timeout_s,
                                          const std::string& run_label) {
    std::vector<ProbeRun> runs(specs.size());
    std::vector<std::size_t> batch;  // indexes of the probes that are built
    for (std::size_t i = 0; i < specs.size(); ++i) {
        if (fs::exists(probes_dir / specs[i].file))
            batch.push_back(i);
        else
            runs[i] = not_built(specs[i], probes_dir);
    }
    if (batch.size() < 2 || !batchable(specs) || !fs::exists(probes_dir / k_batch_runner))
        return Prober{[&](const ProbeSpec& p) {
                          return run_probe_in_image(api, image, p, probes_dir, gpus, timeout_s,
                                                    run_label);
                      },
                      {}}
            .all(specs);
    std::vector<std::pair<std::string, std::vector<std::string>>> argv;
    for (auto i : batch) {
        std::vector<std::string> one = {in_mount(specs[i])};
        one.insert(one.end(), specs[i].args.begin(), specs[i].args.end());
        argv.emplace_back(specs[i].name, std::move(one));
    }
    // The runner kills a probe at the time limit and frames it; the container's own limit
    // is a backstop for a runner that does not end.
    ContainerRunSpec spec =
        probe_container(image, specs[batch.front()], probes_dir, gpus, timeout_s + 15, run_label);
    spec.cmd = {std::string(k_probe_mount) + "/" + k_batch_runner};
    for (auto& a : batch_arguments(timeout_s, argv)) spec.cmd.push_back(std::move(a));
    spec.whole_log = true;
    auto r = api.run(spec);
    // The frames written before a timeout or Ctrl-C are of probes that ended: kept.
    BatchOutput framed;
    if (r && r->logs_error.empty()) framed = parse_batch_output(r->out);
    std::vector<std::size_t> alone;  // overflowed: run again in a container of its own
    for (auto i : batch) {
        const ProbeSpec& p = specs[i];
        auto f = std::find_if(framed.frames.begin(), framed.frames.end(),
                              [&](const BatchFrame& b) { return b.name == p.name; });
        if (!r) {
            runs[i] = no_result(p, ProbeRun::State::Crashed, r.error().message);
        } else if (f != framed.frames.end() && f->overflow) {
            alone.push_back(i);
        } else if (f != framed.frames.end() && f->timed_out) {
            runs[i] = no_result(p, ProbeRun::State::TimedOut,
                                "timed out after " + std::to_string(timeout_s) + " s");
        } else if (f != framed.frames.end()) {
            runs[i] = judge_run(p, f->exit_code >= 0 ? f->exit_code : 128 + f->signal, f->out,
                                f->err, f->seconds);
        } else if (auto problem = container_problem(p, r.value(), timeout_s)) {
            runs[i] = *problem;
        } else {
            runs[i] = no_result(p, ProbeRun::State::Crashed,
                                std::string("gave no result through ") + k_batch_runner + " (" +
                                    (framed.problem.empty() ? "no frame for it" : framed.problem) +
                                    "; exit " + std::to_string(r->exit_code) + ": " +
                                    trimmed(r->err, 300) + ")");
        }
    }
    for (auto i : alone)
        runs[i] = run_probe_in_image(api, image, specs[i], probes_dir, gpus, timeout_s, run_label);
    return runs;
}

ProbeRun run_probe_on_host(const ProbeSpec& p, const fs::path& probes_dir, int timeout_s) {
    if (!fs::exists(probes_dir / p.file)) return not_built(p, probes_dir);
    ProcessSpec spec;
    if (p.python) {
        std::string first;
        for (const auto& c : p.interpreters)
            if (first.empty() && ::access(c.c_str(), X_OK) == 0) first = c;
        if (first.empty())
            return no_result(
                p, ProbeRun::State::NotRun,
                "no python interpreter here (looked for: " + join(p.interpreters, ", ") + ")");
        spec.argv = {first, (probes_dir / p.file).string(),
                     "--candidates=" + join(p.interpreters, ":")};
    } else {
        spec.argv = {(probes_dir / p.file).string()};
    }
    spec.argv.insert(spec.argv.end(), p.args.begin(), p.args.end());
    spec.env = environment_with({});
    spec.timeout = std::chrono::seconds(timeout_s);
    auto r = run_process(spec);
    if (!r) return no_result(p, ProbeRun::State::Crashed, r.error().message);
    if (r->outcome == ProcessResult::Outcome::TimedOut ||
        r->outcome == ProcessResult::Outcome::Interrupted)
        return no_result(p, ProbeRun::State::TimedOut, r->describe());
    int code = r->outcome == ProcessResult::Outcome::Exited ? r->exit_code : 128 + r->signal;
    return judge_run(p, code, r->out, r->err, r->seconds);
}

Result<std::string> run_shell_in_image(const ImageHost& api, const std::string& image,
                                       const std::string& script, const std::string& run_label) {
    ContainerRunSpec spec;
    spec.image = image;
    spec.cmd = {"/bin/sh", "-c", script};
    spec.timeout = std::chrono::seconds(30);
    spec.run_label = run_label;
    auto r = api.run(spec);
    if (!r) return r.error();
    if (r->exit_code != 0)
        return Error{ErrorKind::Environment,
                     "shell in " + image + " exited " + std::to_string(r->exit_code)};
    return r->out;
}

}  // namespace td::engine
