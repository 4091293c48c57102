// The static tier: what can be judged without a GPU (library versions, the loader's view,
// torch's build, a CPU all-reduce, /dev/shm).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "core/validate/check_context.hpp"
#include "core/validate/library_observation.hpp"
#include "core/validate/probe_plan.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td::validate_detail {
namespace {

using json = nlohmann::json;

// CUDA runtime as the image shows it: the libcudart torch loads (the cuda probe asks that
// file), else the loader's, else the CUDA torch was built with.
std::string observed_cuda(const CheckContext& ctx) {
    const json& c = ctx.data("cuda");
    if (c.contains("runtime_version") && c["runtime_version"].is_number_integer())
        return cuda_version_from_int(c["runtime_version"].get<long long>());
    return str(ctx.data("torch"), "cuda");
}

// The runtime library torch loads against the CUDA torch was built with: "" when they fit
// (or cannot be compared), else the verdict: fail for an older runtime or another major,
// warn for a newer minor.
void runtime_against_build(CheckContext& ctx, const std::string& runtime, const std::string& want) {
    std::string build = str(ctx.data("torch"), "cuda");
    auto r = Version::parse(runtime), b = Version::parse(build);
    std::string where = str(ctx.data("cuda"), "runtime_library");
    auto [wheel, wheel_version] = wheel_of_loaded(ctx, "cudart");
    std::string from = wheel.empty() ? where : wheel + " " + wheel_version + " (" + where + ")";
    std::string observed = runtime + " (torch built with " + build + ")";
    if (r->major() != b->major() || *r < *b)
        return ctx.add("TD101", "fail", observed, want.empty() ? build : want,
                       "torch was built with CUDA " + build + " but loads runtime " + runtime +
                           " from " + from,
                       "install the CUDA " + b->major_minor() + " runtime torch expects (" +
                           (wheel.empty() ? "libcudart" : wheel.substr(0, wheel.rfind('-'))) + " " +
                           b->major_minor() + ".*) or the torch build for CUDA " + runtime);
    ctx.add("TD101", "warn", observed, want.empty() ? build : want,
            "torch was built with CUDA " + build + " and loads the newer runtime " + runtime +
                " from " + from + ": compatible within CUDA " + std::to_string(b->major()) +
                ", but it needs the driver floor of CUDA " + runtime + ", not " + build,
            "pin the runtime torch was built with, or make sure hosts meet CUDA " + runtime +
                "'s driver floor",
            "warning");
}

void cuda_runtime(CheckContext& ctx) {
    std::string want = ctx.expected("cuda"), have = observed_cuda(ctx);
    // Nothing provides a runtime and torch cannot say which it would load: a promise is
    // unmet (nothing in the image provides it), no promise is nothing to judge.
    if (have.empty() && ctx.torch_import_failed() && want.empty())
        return ctx.skip("TD101", "no CUDA runtime on the loader's path, and " +
                                     ctx.torch_import_failure() +
                                     ", so the runtime torch would load is unknown");
    if (!want.empty() && have.empty())
        return ctx.add("TD101", "fail", "none", want,
                       "the image promises CUDA " + want + " but no CUDA runtime loads (" +
                           ctx.why_missing("cuda") + ")",
                       "install the CUDA " + want + " runtime (libcudart.so." +
                           split(want, '.')[0] + ") or fix the io.torchdock.cuda label");
    if (!want.empty() && match_version(have, want) == VersionMatch::Differs)
        return ctx.add("TD101", "fail", have, want,
                       "the image runs CUDA " + have + " but is labelled " + want,
                       "rebuild from a base with CUDA " + want + ", or correct the label");
    std::string build = str(ctx.data("torch"), "cuda");
    auto r = Version::parse(have), b = Version::parse(build);
    if (r && b && !(*r == *b) && r->major_minor() != b->major_minor())
        return runtime_against_build(ctx, have, want);
    // "A CPU image" is torch's word (a CPU build), never the conclusion of finding no torch.
    if (have.empty() && !ctx.data("torch").value("torch", json()).is_string())
        return ctx.skip("TD101",
                        "no CUDA runtime on the loader's path, and no torch was found "
                        "to say whether this is a CPU image (TD119)");
    if (have.empty())
        return ctx.add("TD101", "pass", "none", "none",
                       "no CUDA expected and none found (CPU image)");
    std::string also = build.empty() ? "" : " (torch built with " + build + ")";
    ctx.add("TD101", "pass", have + also, want.empty() ? "none" : want,
            want.empty() ? "CUDA " + have + " present although none is labelled" + also
                         : "CUDA runtime " + have + also);
}

// A library version promised by a label against the one found (TD102 cuDNN, TD104 NCCL).
// `have` is the fullest version known (a wheel's 9.10.2.21 over the library's 9.10.2).
void library_version(CheckContext& ctx, const char* id, const std::string& library,
                     const std::string& want, const std::string& have, const std::string& probe,
                     const std::string& mismatch_fix) {
    if (want.empty())
        return ctx.add(id, "skip", have, "",
                       "no " + library + " version is labelled or expected" +
                           (have.empty() ? "" : " (found " + library + " " + have + ")"));
    if (have.empty() && ctx.torch_import_failed())
        return ctx.add(id, "fail", "none", want,
                       library + " " + want + " is promised but the loader finds none, and " +
                           ctx.torch_import_failure(),
                       "install " + library + " " + want + " (the wheel torch pins)");
    if (have.empty())
        return ctx.add(id, "fail", "none", want,
                       library + " " + want + " is promised but none is found (" +
                           ctx.why_missing(probe) + ")",
                       "install " + library + " " + want);
    switch (match_version(have, want)) {
        case VersionMatch::Equal:
            return ctx.add(id, "pass", have, want, library + " " + have);
        case VersionMatch::Differs:
            return ctx.add(id, "fail", have, want,
                           library + " " + have + " is found, " + want + " is labelled",
                           mismatch_fix);
        case VersionMatch::Unverifiable:
            return ctx.add(id, "warn", have, want,
                           library + " " + have + " agrees with " + want +
                               " as far as the library reports its version; the rest cannot be "
                               "checked",
                           "label the version the library reports, or install it from a wheel "
                           "whose metadata names the full version",
                           "warning");
    }
}

// The fullest version of a library torch uses: the wheel it was loaded from, when the
// wheel agrees with what the library itself reports, else the library's own answer.
std::string fullest(const CheckContext& ctx, const std::string& family, const std::string& own) {
    auto [wheel, version] = wheel_of_loaded(ctx, family);
    if (!version.empty() && (own.empty() || match_version(version, own) == VersionMatch::Equal))
        return version;
    return own;
}

void cudnn_version(CheckContext& ctx) {
    const json& t = ctx.data("torch");
    // torch could not use its cuDNN (a second cuDNN shadows parts of it): that is a failure
    // whatever the labels say.
    if (std::string err = str(t, "cudnn_error"); !err.empty()) {
        std::optional<ErrorAdvice> advice;
        if (ctx.input().advise) advice = ctx.input().advise(err);
        std::vector<std::string> places;
        for (const auto& p : loaded_library_paths(*ctx.probe("torch"), "cudnn")) {
            std::string dir = p.substr(0, p.find_last_of('/'));
            if (std::find(places.begin(), places.end(), dir) == places.end()) places.push_back(dir);
        }
        return ctx.add(
            "TD102", "fail", "torch cannot use cuDNN", ctx.expected("cudnn"),
            (advice ? advice->id + ": " : "") + err +
                (places.size() > 1 ? " (torch loads cuDNN from " + join(places, " and ") + ")"
                                   : ""),
            advice ? advice->fix
                   : "remove the other cuDNN from LD_LIBRARY_PATH so torch loads the "
                     "one it was built with");
    }
    std::string own = t.contains("cudnn") && t["cudnn"].is_number_integer()
                          ? cudnn_version_from_int(t["cudnn"].get<long long>())
                          : str(ctx.data("cudnn"), "version_string");
    library_version(ctx, "TD102", "cuDNN", ctx.expected("cudnn"), fullest(ctx, "cudnn", own),
                    "cudnn",
                    "a different cuDNN shadows the intended one: check LD_LIBRARY_PATH and TD111");
}

void cudnn_cuda_major(CheckContext& ctx) {
    const json& d = ctx.data("cudnn");
    if (!d.contains("cudart_version") || !d["cudart_version"].is_number_integer())
        return ctx.skip("TD103",
                        "the cudnn probe found no cuDNN to ask (" + ctx.why_missing("cudnn") + ")");
    std::string built_for = cuda_version_from_int(d["cudart_version"].get<long long>());
    std::string runtime = observed_cuda(ctx);
    std::string major = split(built_for, '.')[0];
    // cuDNN loads libcudart of its own CUDA major at run time (dlopen, not DT_NEEDED).
    std::string soname = ctx.kb().cudart_soname(major);
    if (soname.empty()) soname = "libcudart for CUDA " + major;
    if (runtime.empty() && ctx.torch_import_failed())
        return ctx.skip("TD103", "cuDNN was built for CUDA " + built_for +
                                     "; the runtime is unknown: " + ctx.torch_import_failure());
    if (runtime.empty())
        return ctx.add(
            "TD103", "fail", built_for, "a CUDA " + major + " runtime",
            "cuDNN was built for CUDA " + built_for + " and needs " + soname +
                ", which the image does not have",
            "install the CUDA " + major + " runtime, or the cuDNN build for the CUDA in the image");
    std::string runtime_major = split(runtime, '.')[0];
    if (major == runtime_major)
        ctx.add("TD103", "pass", built_for, "CUDA " + runtime_major + ".x",
                "cuDNN was built for CUDA " + built_for);
    else
        ctx.add("TD103", "fail", built_for, "CUDA " + runtime_major + ".x",
                "cuDNN was built for CUDA " + built_for + " and needs " + soname +
                    ", but the image runs CUDA " + runtime,
                "install the cuDNN build for CUDA " + runtime_major + " (e.g. nvidia-cudnn-cu" +
                    runtime_major + ")");
}

void nccl_version(CheckContext& ctx) {
    // What the file torch loaded says (probe-nccl asks it; LD_PRELOAD can make it another
    // than torch's own), else the number torch was compiled with.
    std::string have = str(ctx.data("nccl"), "version");
    if (have.empty()) have = str(ctx.data("torch"), "nccl");
    library_version(ctx, "TD104", "NCCL", ctx.expected("nccl"), fullest(ctx, "nccl", have), "nccl",
                    "check which libnccl.so.2 wins (TD111) or correct the label");
}

std::string fix_for_missing(const CheckContext& ctx, const std::string& soname) {
    if (auto pin = wheel_pin_for(ctx.data("torch"), soname); !pin.empty()) {
        // A wheel that is installed is not the fix: it sits where this torch does not look.
        const std::string name = to_lower(pin.substr(0, pin.find("==")));
        const std::string installed = distribution_version(ctx, name);
        if (!installed.empty())
            return name + " " + installed +
                   " is installed but not where torch's libraries look for it: install it "
                   "into the same site directory as torch (or put its lib directory on "
                   "LD_LIBRARY_PATH)";
        return "pip install '" + pin + "' (torch " + distribution_version(ctx, "torch") +
               " requires it), or reinstall torch without --no-deps";
    }
    if (starts_with(soname, "libcudart.so.")) {
        std::string major = soname.substr(13, soname.find('.', 13) - 13);
        return "install the CUDA " + major + " runtime (apt cuda-cudart-" + major +
               "-x, or the nvidia-cuda-runtime-cu" + major +
               " wheel) or use libraries built for the CUDA in the image";
    }
    return "install the package that provides " + soname + ", or remove what needs it";
}

// "DIR is mode 0700 owned by uid 0; the image's USER (uid 1000) cannot read it", for the
// directories probe-libs could not enter (its wheels are there, not readable).
std::string unreadable_cause(const json& libs) {
    std::vector<std::string> dirs;
    for (const auto& e : libs.value("unreadable", json::array()))
        dirs.push_back(str(e, "path") + " is mode " + str(e, "mode") + " owned by uid " +
                       str(e, "uid"));
    if (dirs.empty()) return {};
    return join(dirs, ", ") + ": the image's USER (uid " + str(libs, "uid") +
           ") cannot read it, so the libraries inside cannot load";
}

// probe-libs waived: it found no CUDA library and no torch to resolve.
bool libs_found_nothing(const CheckContext& ctx) {
    const ProbeRun* p = ctx.probe("libs");
    return p && p->usable() && p->status == "waived";
}

// Why no process shows what torch loads, for a verdict of the loader model alone.
std::string model_only_reason(const CheckContext& ctx) {
    if (ctx.torch_import_failed())
        return "no process mapped torch's libraries: " + ctx.torch_import_failure();
    if (!ctx.data("torch").value("torch", json()).is_string())
        return "no torch imported to show what loads";
    return "the torch probe did not report what its process mapped";
}

// The sonames of the objects nvidia wheels put under the site directories (probe-libs'
// pip-nvidia roots), each with its path: torch's import loads these itself from sys.path, by
// path, which the loader model does not follow.
std::map<std::string, std::string> wheel_sonames(const json& libs) {
    std::map<std::string, std::string> out;
    if (!libs.contains("roots") || !libs["roots"].is_array()) return out;
    for (const auto& r : libs["roots"])
        if (str(r, "kind") == "pip-nvidia" && !str(r, "soname").empty())
            out.emplace(str(r, "soname"), str(r, "path"));
    return out;
}

void libs_resolved(CheckContext& ctx) {
    const json& d = ctx.data("libs");
    if (libs_found_nothing(ctx))
        return ctx.skip("TD110", "nothing to resolve: " + ctx.why_missing("libs"));
    if (!d.contains("unresolved")) return ctx.skip("TD110", ctx.why_missing("libs"));
    if (std::string cause = unreadable_cause(d); !cause.empty() && d["unresolved"].is_array() &&
                                                 d["unresolved"].empty() &&
                                                 (!d.contains("roots") || d["roots"].empty()))
        return ctx.add("TD110", "fail", "unreadable", "all resolve", cause,
                       "make these directories readable by the image's USER (chmod -R a+rX DIR "
                       "in the image, or install as that user)");
    // What the process mapped outranks the model: a soname of an object torch's import loaded
    // was found (RPATH, torch's preloading from sys.path, LD_PRELOAD), whatever the model says.
    LibraryObservation seen = observe_libraries(d, ctx.data("torch"));
    std::string process_note;
    if (!seen.found_by_process.empty())
        process_note = "; the loader model does not find " +
                       std::to_string(seen.found_by_process.size()) +
                       " that the running process mapped (torch loads its nvidia wheels from "
                       "sys.path too): " +
                       describe(seen.found_by_process.front()) +
                       (seen.found_by_process.size() > 1
                            ? " and " + std::to_string(seen.found_by_process.size() - 1) + " more"
                            : "");
    // A soname the model resolves to one copy while the process mapped another (torch
    // preloads its wheel's libnvJitLink by path ahead of an older one on LD_LIBRARY_PATH).
    for (const auto& other : seen.disagreements) process_note += "; " + describe(other);
    const json& u = seen.unresolved;
    if (u.empty()) {
        std::size_t n =
            d.contains("libraries") && d["libraries"].is_array() ? d["libraries"].size() : 0;
        return ctx.add("TD110", "pass",
                       std::to_string(n + seen.found_by_process.size()) + " libraries resolved",
                       "all resolve", "every needed soname resolves" + process_note);
    }
    std::vector<std::string> missing, in_wheels;
    std::string first_missing;  // its soname, for the fix
    const auto wheels = wheel_sonames(d);
    for (const auto& e : u) {
        std::string item = str(e, "soname") + " (needed by " + str(e, "needed_by") + ")";
        // Without a process to show what loads, a soname a wheel on sys.path provides is one
        // torch's import would load itself: the model cannot say it is missing.
        auto w = seen.observed ? wheels.end() : wheels.find(str(e, "soname"));
        if (w != wheels.end())
            in_wheels.push_back(item + ", in " + w->second);
        else if (missing.push_back(item); first_missing.empty())
            first_missing = str(e, "soname");
    }
    std::string unreadable = unreadable_cause(d);
    if (missing.empty())
        return ctx.skip(
            "TD110",
            "unknown: the loader model does not resolve " + std::to_string(in_wheels.size()) +
                " soname(s) that nvidia wheels on sys.path provide (" + in_wheels.front() +
                (in_wheels.size() > 1 ? " and " + std::to_string(in_wheels.size() - 1) + " more"
                                      : "") +
                "); torch's import loads those itself, and " + model_only_reason(ctx));
    if (!in_wheels.empty())
        process_note += "; " + std::to_string(in_wheels.size()) +
                        " more the model does not resolve are in nvidia wheels on sys.path, "
                        "which torch loads itself (" +
                        in_wheels.front() + ")";
    // No process shows what loads: the loader model speaks alone, and says so.
    const std::string whose =
        seen.observed ? "" : " by the loader model (" + model_only_reason(ctx) + ")";
    ctx.add("TD110", "fail", join(missing, "; "), "all resolve",
            "unresolved" + whose + ": " + missing.front() +
                (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more" : "") +
                (unreadable.empty() ? "" : "; " + unreadable) + process_note,
            unreadable.empty() ? fix_for_missing(ctx, first_missing)
                               : "make these directories readable by the image's USER (chmod "
                                 "-R a+rX DIR in the image, or install as that user); the "
                                 "wheels are installed");
}

// The version of one copy: what the file itself reports (probe-libs asks each file in its
// own process), else what its name says.
std::string copy_version(const json& copy) {
    std::string content = str(copy, "content_version");
    return content.empty() ? str(copy, "version") : content;
}

// Where torch loads a family's files from: their directories, in order.
std::vector<std::string> torch_dirs(const CheckContext& ctx, const std::string& family) {
    std::vector<std::string> dirs;
    const ProbeRun* torch = ctx.probe("torch");
    if (!torch) return dirs;
    for (const auto& p : loaded_library_paths(*torch, family)) {
        std::string dir = p.substr(0, p.find_last_of('/'));
        if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
    }
    return dirs;
}

void libs_duplicates(CheckContext& ctx) {
    const json& d = ctx.data("libs");
    if (libs_found_nothing(ctx))
        return ctx.skip("TD111", "nothing to compare: " + ctx.why_missing("libs"));
    if (!d.contains("duplicates")) return ctx.skip("TD111", ctx.why_missing("libs"));
    // mixed: torch itself loads copies of different versions (broken for torch);
    // shadowed: torch loads one version, another is where the loader looks (a trap for other
    // programs and for the next change of LD_LIBRARY_PATH); same: one version twice.
    // untold: a copy known only by its name's version ("12") beside one whose file reports
    // "12.8": whether they differ cannot be told.
    std::vector<std::string> mixed, shadowed, same, untold;
    for (const auto& dup : d["duplicates"]) {
        std::string family = str(dup, "name");
        std::map<std::string, std::string> version_of_dir;
        std::vector<std::string> versions, copies, by_name;
        for (const auto& c : dup.value("copies", json::array())) {
            std::string path = str(c, "path"), v = copy_version(c);
            const bool named = !v.empty() && str(c, "content_version").empty();
            if (named) by_name.push_back(v);
            copies.push_back(path + " (" +
                             (v.empty() ? "version unknown"
                              : named   ? v + " by its file name: " +
                                            (str(c, "content_error").empty()
                                                 ? std::string("the file was not asked")
                                                 : str(c, "content_error"))
                                      : v) +
                             ")");
            versions.push_back(v);
            version_of_dir[path.substr(0, path.find_last_of('/'))] = v;
        }
        const bool cannot_tell = std::any_of(by_name.begin(), by_name.end(), [&](const auto& n) {
            return std::any_of(versions.begin(), versions.end(),
                               [&](const auto& v) { return starts_with(v, n + "."); });
        });
        std::sort(versions.begin(), versions.end());
        versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
        std::string line = family + ": " + join(copies, ", ");
        if (versions.size() < 2) {
            same.push_back(line);
            continue;
        }
        std::set<std::string> loaded_versions;
        auto dirs = torch_dirs(ctx, family);
        for (const auto& dir : dirs)
            if (auto it = version_of_dir.find(dir); it != version_of_dir.end())
                loaded_versions.insert(it->second);
        if (cannot_tell && (dirs.size() != 1 || loaded_versions.size() != 1)) {
            untold.push_back(line);
            continue;
        }
        if (dirs.empty() || loaded_versions.size() != 1 || dirs.size() > 1)
            mixed.push_back(line + (dirs.size() > 1 ? "; torch loads " + family + " files from " +
                                                          join(dirs, " and ")
                                                    : ""));
        else
            shadowed.push_back(line + "; torch loads only " + *loaded_versions.begin() + " from " +
                               dirs.front());
    }
    if (!mixed.empty())
        return ctx.add("TD111", "fail", join(mixed, "; "), "one version per library",
                       "conflicting copies that can shadow each other: " + mixed.front(),
                       "remove one copy, or make LD_LIBRARY_PATH/RUNPATH pick the intended one");
    if (!shadowed.empty())
        return ctx.add(
            "TD111", "warn", join(shadowed, "; "), "one version per library",
            "another version is installed beside the one torch uses: " + shadowed.front() +
                "; programs that load it by name get the other",
            "remove the copy torch does not use, or keep it off the loader's path", "warning");
    if (!untold.empty())
        return ctx.add("TD111", "warn", join(untold, "; "), "one version per library",
                       "several copies whose versions cannot all be read: " + untold.front(),
                       "remove the copies torch does not use, or keep them off the loader's path",
                       "warning");
    if (!same.empty())
        return ctx.add("TD111", "warn", join(same, "; "), "one copy per library",
                       "several copies of the same version: " + same.front(),
                       "harmless today; remove the extra copy to keep upgrades predictable",
                       "warning");
    ctx.add("TD111", "pass", "no duplicates", "one copy per library",
            "no duplicate CUDA libraries");
}

void shm_size(CheckContext& ctx) {
    const ValidationInput& in = ctx.input();
    if (!in.shm_bytes)
        return ctx.add("TD130", "error", "", "",
                       "cannot be judged: the size of /dev/shm could not be read" +
                           (in.shm_error.empty() ? "" : " (" + in.shm_error + ")"));
    long long mb = *in.shm_bytes / (1024 * 1024);
    std::string want_text = ctx.expected("validate.shm-min-mb");
    long long want = want_text.empty() ? 1024 : std::atoll(want_text.c_str());
    std::string expect = ">= " + std::to_string(want) + " MiB";
    if (mb >= want)
        return ctx.add("TD130", "pass", std::to_string(mb) + " MiB", expect,
                       "/dev/shm is large enough");
    ctx.add(
        "TD130", want_text.empty() ? "warn" : "fail", std::to_string(mb) + " MiB", expect,
        "/dev/shm is " + std::to_string(mb) +
            " MiB under a default `docker run`; NCCL and DataLoader workers need more",
        "run with --ipc=host, or --shm-size=" + std::to_string(std::max(want / 1024, 1LL)) + "g",
        want_text.empty() ? "warning" : "error");
}

}  // namespace

void judge_static_tier(CheckContext& ctx) {
    for (auto check :
         {cuda_runtime, cudnn_version, cudnn_cuda_major, nccl_version, libs_resolved,
          libs_duplicates, judge_torch, judge_kernels, judge_platform, judge_runtime, shm_size})
        ctx.guarded(check);
}

}  // namespace td::validate_detail
