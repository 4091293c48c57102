// TD118, TD120-TD124: the Python, and what torch reports about itself once it imports (TD119,
// whether it does: torch_import_check.cpp).
#include <algorithm>

#include "core/pypi/wheel_name.hpp"
#include "core/validate/check_context.hpp"
#include "core/validate/python_abi.hpp"
#include "core/validate/runtime_env.hpp"
#include "util/strings.hpp"

namespace td::validate_detail {

// ", found through PYTHONPATH=/opt/pkgs, ahead of ...": a PYTHONPATH entry comes before the
// interpreter's own site directories, so when a package is found in `site` through it, that
// variable decides which copy runs, and is named. "" otherwise.
std::string through_pythonpath(const CheckContext& ctx, const std::string& site) {
    auto pythonpath = env_lookup(ctx.input().runtime.environment, "PYTHONPATH");
    if (!pythonpath || site.empty()) return {};
    for (const auto& entry : split(*pythonpath, ':'))
        if (!entry.empty() && (entry == site || entry + "/" == site))
            return ", found through PYTHONPATH=" + *pythonpath +
                   ", ahead of the interpreter's own site directories";
    return {};
}

namespace {

using json = nlohmann::json;

void torch_version(CheckContext& ctx, const json& t) {
    std::string have = str(t, "torch");
    std::string want = ctx.expected("torch-reports").empty() ? ctx.expected("torch")
                                                             : ctx.expected("torch-reports");
    std::string plain = have.substr(0, have.find('+'));
    if (want.empty())
        ctx.skip("TD120", "no torch version is labelled or expected (found " + have + ")");
    else if (plain == want || have == want)
        ctx.add("TD120", "pass", have, want, "torch " + have);
    else
        ctx.add("TD120", "fail", have, want, "torch reports " + have + ", " + want + " is labelled",
                "install torch==" + want + " or correct the label");
}

void torch_cuda(CheckContext& ctx, const json& t) {
    std::string torch_cuda = str(t, "cuda"), want_cuda = ctx.expected("cuda");
    std::string want_major = split(want_cuda, '.')[0];
    if (want_cuda.empty() && torch_cuda.empty())
        ctx.add("TD121", "pass", "cpu", "cpu", "CPU torch in a CPU image");
    else if (torch_cuda.empty())
        ctx.add("TD121", "fail", "cpu", want_cuda,
                "torch is a CPU build in an image labelled CUDA " + want_cuda,
                "install torch from the matching CUDA wheel index");
    else if (want_cuda.empty())
        ctx.add("TD121", "pass", torch_cuda, "-", "torch built for CUDA " + torch_cuda);
    else if (split(torch_cuda, '.')[0] == want_major)
        ctx.add("TD121", "pass", torch_cuda, want_cuda, "torch built for CUDA " + torch_cuda);
    else
        ctx.add(
            "TD121", "fail", torch_cuda, want_cuda,
            "torch was built for CUDA " + torch_cuda + " but the image is CUDA " + want_cuda,
            "install the torch wheel for CUDA " + want_major + ".x (e.g. +cu" + want_major + "x)");
}

void torch_arch_targets(CheckContext& ctx, const json& t) {
    std::vector<std::string> arch;
    if (t.contains("arch_list") && t["arch_list"].is_array())
        for (const auto& a : t["arch_list"])
            if (a.is_string()) arch.push_back(normalize_arch(a.get<std::string>()));
    std::string targets = ctx.expected("target-gpus"), labelled = ctx.expected("arch-list");
    if (targets.empty() && labelled.empty())
        return ctx.add("TD122", "skip", join(arch, ";"), "",
                       "no target GPUs or arch list are labelled");
    std::string want = join({labelled, targets}, labelled.empty() || targets.empty() ? "" : "; ");
    if (arch.empty())
        return ctx.add("TD122", "fail", "no CUDA archs", want,
                       "torch has no compiled CUDA architectures", "install a CUDA build of torch");
    std::vector<std::string> problems;
    // The labelled arch list: every entry compiled in ("8.6", "sm_86", "8.6+PTX").
    for (const auto& raw : split(labelled, ';'))
        for (const auto& piece : split(raw, ' '))
            if (std::string a = normalize_arch(piece);
                !a.empty() && std::find(arch.begin(), arch.end(), a) == arch.end())
                problems.push_back(a + " is labelled but not compiled in");
    for (const auto& name : split(targets, ',')) {
        if (name.empty()) continue;
        const GpuModel* g = ctx.kb().gpu(name);
        if (!g)
            problems.push_back(name +
                               " (not in data/gpus.json, so its compute capability is unknown)");
        else if (!arch_list_covers(arch, g->cc))
            problems.push_back(name + " (" + g->cc + ") is not covered");
    }
    if (problems.empty())
        ctx.add("TD122", "pass", join(arch, ";"), want,
                "the arch list has the labelled archs and covers every target GPU");
    else
        ctx.add("TD122", "fail", join(arch, ";"), want, join(problems, ", "),
                "use a torch build whose arch list includes these, or correct the labels");
}

// TD118: the interpreter that runs torch against the labelled Python (major.minor).
void python_version(CheckContext& ctx) {
    const json& t = ctx.data("torch");
    std::string have = str(t, "python"), want = ctx.expected("python");
    std::string who = str(t, "python_executable");
    if (want.empty())
        return ctx.add("TD118", "skip", have, "",
                       "no Python version is labelled or expected" +
                           (have.empty() ? std::string() : " (found " + have + " at " + who + ")"));
    if (have.empty()) return ctx.skip("TD118", "no python interpreter ran the torch probe");
    if (match_version(have, want) == VersionMatch::Differs)
        return ctx.add(
            "TD118", "fail", have, want,
            "torch runs under Python " + have + " (" + who + "), " + want + " is labelled",
            "install torch for Python " + want + ", or correct the label");
    ctx.add("TD118", "pass", have, want, "Python " + have + " (" + who + ")");
}

// TD124: torchvision and torchaudio as installed: they import (and torchvision's operators
// are registered), they are the release that pairs with this torch (data/torch.json), and
// they are what the labels say.
void torch_companions(CheckContext& ctx) {
    const json& t = ctx.data("torch");
    // torch's own answer, else (its process died importing a companion) its metadata's.
    std::string torch_version =
        str(t, "torch").empty() ? distribution_version(ctx, "torch") : str(t, "torch");
    std::string torch_plain = torch_version.substr(0, torch_version.find('+'));
    const TorchRelease* release = ctx.kb().torch(torch_plain);
    std::vector<std::string> ok, wrong, fixes, observed, notes;
    for (const char* name : {"torchvision", "torchaudio"}) {
        std::string want = ctx.expected(name), have = distribution_version(ctx, name);
        std::string pairs = release ? (std::string(name) == "torchvision" ? release->torchvision
                                                                          : release->torchaudio)
                                    : "";
        if (!have.empty()) observed.push_back(std::string(name) + " " + have);
        std::string fix_pin = std::string(name) + "==" + (pairs.empty() ? want : pairs);
        const json run = t.value(name, json());
        bool failed_here = false;
        // The process died importing it: never "imports", whatever its version.
        if (!have.empty() && t.contains("crash") && t["crash"].is_object() &&
            str(t["crash"], "stage") == "import " + std::string(name)) {
            wrong.push_back("import " + std::string(name) + " " + have + " killed the process (" +
                            str(t["crash"], "signal") + ")");
            failed_here = true;
        }
        if (!have.empty() && run.is_object()) {
            if (!run.value("imports", true)) {
                wrong.push_back("import " + std::string(name) + " " + have +
                                " fails: " + str(run, "import_error"));
                failed_here = true;
            } else if (run.contains("ops_ok") && run["ops_ok"].is_boolean() &&
                       !run["ops_ok"].get<bool>()) {
                wrong.push_back(std::string(name) + " " + have +
                                " imports but its operators fail: " + str(run, "ops_error"));
                failed_here = true;
            }
        }
        if (!have.empty() && !pairs.empty() &&
            split(have.substr(0, have.find('+')), '.').size() >= 2) {
            auto mm = [](const std::string& v) {
                auto parts = split(v.substr(0, v.find('+')), '.');
                return parts.size() >= 2 ? parts[0] + "." + parts[1] : v;
            };
            if (mm(have) != mm(pairs)) {
                const json dists = t.value("distributions", json::object());
                std::string site =
                    dists.is_object() && dists.contains(name) ? str(dists[name], "location") : "";
                std::string through = through_pythonpath(ctx, site);
                wrong.push_back(std::string(name) + " " + have +
                                (through.empty() ? "" : " (from " + site + through + ")") +
                                " does not pair with torch " + torch_plain + " (its release is " +
                                pairs + ", data/torch.json)");
                failed_here = true;
            } else if (have.substr(0, have.find('+')) != pairs) {
                notes.push_back(std::string(name) + " " + have + " (torch " + torch_plain +
                                " was released with " + pairs + ")");
            }
        }
        if (!want.empty()) {
            if (have.empty()) {
                wrong.push_back(std::string(name) + " " + want + " is labelled but not installed");
                failed_here = true;
            } else if (match_version(have, want) == VersionMatch::Differs) {
                wrong.push_back(std::string(name) + " " + have + " is installed, " + want +
                                " is labelled");
                failed_here = true;
            }
        }
        if (failed_here)
            fixes.push_back("pip install '" + fix_pin + "'");
        else if (!have.empty())
            ok.push_back(std::string(name) + " " + have);
    }
    std::string seen = observed.empty() ? "none installed" : join(observed, ", ");
    std::string expect = ctx.expected("torchvision") + "/" + ctx.expected("torchaudio");
    if (!wrong.empty())
        return ctx.add("TD124", "fail", seen, expect, join(wrong, "; "),
                       join(fixes, "; ") + " (the release that pairs with torch " + torch_plain +
                           "), or correct the labels");
    if (ok.empty())
        return ctx.add("TD124", "skip", seen, expect,
                       "no torchvision or torchaudio installed or labelled");
    ctx.add("TD124", "pass", seen, expect,
            join(ok, ", ") + " import and pair with torch " + torch_plain +
                (notes.empty() ? "" : "; note: " + join(notes, "; ")));
}

void torch_distributed(CheckContext& ctx, const json& t) {
    const ProbeRun* p = ctx.probe("torch");
    const json& dist = t.contains("distributed") ? t["distributed"] : json();
    const json w = t.value("writable", json());
    if (!dist.is_object() && w.is_object() && !str(w, "temp_error").empty())
        ctx.skip("TD123",
                 "the all-reduce's file rendezvous needs a temporary directory the "
                 "image's USER can write, and there is none (TD134)");
    else if (!dist.is_object())
        ctx.skip("TD123", "the torch probe ran no distributed all-reduce");
    else if (dist.value("exact", false))
        ctx.add("TD123", "pass", str(dist, "observed"), str(dist, "expected"),
                str(dist, "backend") + " all-reduce over " + str(dist, "world_size") +
                    " processes is exact");
    else
        ctx.add("TD123", "fail", str(dist, "observed"), str(dist, "expected"),
                str(dist, "backend") + " all-reduce gave a wrong sum" +
                    (p && !p->reason.empty() ? ": " + p->reason : ""),
                "check the NCCL/gloo installation and NCCL_* environment variables");
}

}  // namespace

void judge_torch(CheckContext& ctx) {
    ctx.guarded(python_version);
    std::string unavailable;
    ctx.guarded([&](CheckContext& c) { unavailable = torch_imports(c); });
    if (!unavailable.empty()) {
        for (const char* id : {"TD120", "TD121", "TD122", "TD123"}) ctx.skip(id, unavailable);
        // torch imported and the process died importing torchvision or torchaudio: whether
        // they pair with it is read from their metadata.
        const json& t = ctx.data("torch");
        if (t.contains("crash") && t["crash"].is_object() &&
            companion_stage(str(t["crash"], "stage")))
            ctx.guarded(torch_companions);
        else
            ctx.skip("TD124", unavailable);
        return;
    }
    const json& t = ctx.data("torch");
    for (auto check : {torch_version, torch_cuda, torch_arch_targets, torch_distributed})
        ctx.guarded([&](CheckContext& c) { check(c, t); });
    ctx.guarded(torch_companions);
}

}  // namespace td::validate_detail
