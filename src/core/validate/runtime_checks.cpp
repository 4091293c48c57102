// The image as it runs: which python (TD127), what it hides from CUDA (TD131), what LD_PRELOAD
// puts ahead of torch's libraries (TD113), whether the installed files are the ones their
// wheels installed (TD112), and whether what is installed beside torch is what torch pins
// (TD128). Part of the static tier.
#include <algorithm>
#include <map>

#include "core/pypi/pep440.hpp"
#include "core/pypi/wheel_name.hpp"
#include "core/validate/check_context.hpp"
#include "core/validate/probe_plan.hpp"
#include "util/strings.hpp"

namespace td::validate_detail {
namespace {

using json = nlohmann::json;

// TD127: the interpreter judged, why, and what else the image has.
void python_interpreter(CheckContext& ctx) {
    if (!ctx.probe("env")) return ctx.skip("TD127", "the image's environment was not read");
    const RuntimePlan& plan = ctx.input().runtime;
    const json& t = ctx.data("torch");
    std::string judged = plan.candidates.empty() ? "" : plan.candidates.front();
    if (t.contains("interpreter") && t["interpreter"].is_object())
        judged = t["interpreter"].value("path", judged);
    else if (!str(t, "python_executable").empty())
        judged = str(t, "python_executable");
    std::vector<std::string> others;
    if (t.contains("other_interpreters") && t["other_interpreters"].is_array())
        for (const auto& o : t["other_interpreters"]) {
            if (!o.is_object()) continue;
            // "imports": null: not tried (the judged python's torch imported).
            const json imports = o.contains("imports") ? o["imports"] : json(false);
            std::string what =
                str(o, "path") + " (torch " +
                (str(o, "torch").empty() ? std::string("?") : str(o, "torch")) +
                (imports.is_null() ? ", not imported: the judged python's torch imports)"
                 : imports == true ? ", imports)"
                                   : ", does not import: " + str(o, "error") + ")");
            others.push_back(what);
        }
    std::string message = judged.empty() ? "no python interpreter in the image (" + plan.why + ")"
                                         : "judged " + judged + " (" + plan.why + ")";
    if (plan.env_source != "the image's configuration")
        message += "; environment set up by " + plan.env_source;
    if (!others.empty()) message += "; other interpreters with torch: " + join(others, ", ");
    for (const auto& n : plan.notes) message += "; " + n;
    if (!plan.stale.empty())
        return ctx.add("TD127", "warn", judged, "the python the image runs",
                       join(plan.stale, "; ") + "; " + message,
                       "unset the variable or point it at the environment the image runs "
                       "(ENV in the Dockerfile)",
                       "warning");
    ctx.add("TD127", "pass", judged, "the python the image runs", message);
}

// TD131: an image that hides every GPU from CUDA in every container it starts.
void cuda_visible(CheckContext& ctx) {
    if (!ctx.probe("env")) return ctx.skip("TD131", "the image's environment was not read");
    const auto& env = ctx.input().runtime.environment;
    std::vector<std::string> hidden;
    if (auto v = env_lookup(env, "CUDA_VISIBLE_DEVICES"); v && (v->empty() || *v == "-1"))
        hidden.push_back("CUDA_VISIBLE_DEVICES=\"" + *v + "\" hides every GPU from CUDA");
    if (auto v = env_lookup(env, "NVIDIA_VISIBLE_DEVICES");
        v && (v->empty() || *v == "void" || *v == "none"))
        hidden.push_back("NVIDIA_VISIBLE_DEVICES=\"" + *v +
                         "\" makes the NVIDIA runtime give the container no GPU");
    if (hidden.empty())
        return ctx.add("TD131", "pass", "", "GPUs visible", "the image hides no GPU");
    ctx.add("TD131", "warn", join(hidden, "; "), "GPUs visible",
            join(hidden, "; ") + " in every container of this image unless it is overridden",
            "remove the variable from the image (ENV), or set it per run", "warning");
}

// TD113: what LD_PRELOAD puts ahead of the libraries torch pins.
void libs_preload(CheckContext& ctx) {
    const std::string& preload = ctx.input().runtime.ld_preload;
    if (preload.empty()) return ctx.add("TD113", "pass", "", "", "no LD_PRELOAD");
    const json& libs = ctx.data("libs");
    if (!libs.contains("preload") || !libs["preload"].is_array())
        return ctx.skip("TD113",
                        "LD_PRELOAD=" + preload + " could not be read: " + ctx.why_missing("libs"));
    std::vector<std::string> wrong, same, missing, other;
    for (const auto& e : libs["preload"]) {
        std::string entry = str(e, "entry"), path = str(e, "path"), family = str(e, "family");
        if (path.empty()) {
            missing.push_back(entry + " (" + str(e, "error") + ")");
            continue;
        }
        if (family.empty()) {
            other.push_back(path);
            continue;
        }
        std::string pin = wheel_pin_for(ctx.data("torch"), base_name(path));
        std::string want = pin.empty() ? "" : pin.substr(pin.find("==") + 2);
        std::string have = str(e, "version"), wheel = str(e, "wheel");
        // A file that cannot report its version says it through the wheel it came in.
        if (have.empty() && wheel.find(' ') != std::string::npos)
            have = wheel.substr(wheel.find(' ') + 1);
        std::string line = path + " (" + (have.empty() ? "version unknown" : have) +
                           (wheel.empty() ? "" : ", from " + wheel) + ")";
        if (!want.empty() && !have.empty() && match_version(want, have) == VersionMatch::Differs)
            wrong.push_back(line + " ahead of the " + want + " torch pins (" + pin + ")");
        else
            same.push_back(line);
    }
    if (!wrong.empty())
        return ctx.add("TD113", "fail", preload, "torch's own libraries",
                       "LD_PRELOAD puts " + join(wrong, "; ") +
                           ": it beats torch's RPATH, so torch runs with it",
                       "remove it from LD_PRELOAD (ENV LD_PRELOAD= in the image)");
    if (!missing.empty())
        return ctx.add("TD113", "warn", preload, "loadable objects",
                       "LD_PRELOAD names what cannot be preloaded (the loader prints an error in "
                       "every process and ignores it): " +
                           join(missing, "; "),
                       "fix or remove the LD_PRELOAD entry", "warning");
    if (!same.empty())
        return ctx.add("TD113", "warn", preload, "torch's own libraries",
                       "LD_PRELOAD puts a CUDA library ahead of torch's own: " + join(same, "; ") +
                           "; torch runs with it whatever its RPATH says",
                       "prefer torch's pinned wheels; remove it from LD_PRELOAD", "warning");
    ctx.add("TD113", "pass", preload, "", "LD_PRELOAD holds no CUDA library: " + join(other, ", "));
}

// TD112: every file of torch's distributions is what its RECORD says.
void files_intact(CheckContext& ctx) {
    const ProbeRun* p = ctx.probe("record");
    if (!p) return ctx.skip("TD112", "no site directory of a python to check");
    const json& d = ctx.data("record");
    if (!d.contains("distributions") || !d["distributions"].is_array())
        return ctx.skip("TD112", ctx.why_missing("record"));
    std::vector<std::string> problems, fixes, shadowed;
    long long files = d.value("files", 0LL), bytes = d.value("hashed_bytes", 0LL);
    for (const auto& dist : d["distributions"]) {
        if (!dist.is_object()) continue;
        std::string name = str(dist, "name"), version = str(dist, "version");
        if (!str(dist, "shadowed_by").empty()) {
            std::string info = str(dist, "dist_info");
            shadowed.push_back(name + " " + version + " in " +
                               info.substr(0, info.find_last_of('/')) +
                               " (not read: this python imports " + name + " from " +
                               str(dist, "shadowed_by") + ")");
            continue;
        }
        const json list = dist.value("problems", json::array());
        if (!list.is_array() || list.empty()) continue;
        std::vector<std::string> unreadable_dirs;
        bool reinstall = false;
        for (const auto& pr : list) {
            std::string kind = str(pr, "kind"), path = str(pr, "path");
            std::string what = kind == "missing"      ? "is missing"
                               : kind == "unreadable" ? "cannot be read (" + str(pr, "detail") + ")"
                               : kind == "not_regular" ? "is not a regular file"
                               : kind == "hash"        ? "does not match its sha256"
                               : kind == "size" ? "is " + str(pr, "size") + " bytes, RECORD says " +
                                                      str(pr, "expected_size")
                                                : kind + " (" + str(pr, "detail") + ")";
            problems.push_back(name + " " + version + ": " + path + " " + what);
            if (kind == "unreadable")
                unreadable_dirs.push_back(path);
            else
                reinstall = true;
        }
        long long total = dist.value("problems_total", static_cast<long long>(list.size()));
        if (total > static_cast<long long>(list.size()))
            problems.push_back(name + ": and " +
                               std::to_string(total - static_cast<long long>(list.size())) +
                               " more");
        if (reinstall)
            fixes.push_back("pip install --force-reinstall --no-deps '" + name + "==" + version +
                            "'");
        if (!unreadable_dirs.empty())
            fixes.push_back("make " + name +
                            "'s files readable by the image's USER (chmod -R a+rX on its "
                            "directory, or install as that user)");
    }
    std::string seen = std::to_string(files) + " files, " + std::to_string(bytes >> 20) + " MiB" +
                       (shadowed.empty() ? "" : "; " + join(shadowed, "; "));
    if (problems.empty() && files == 0)
        return ctx.skip("TD112", "no wheel RECORD to check torch's files against (" +
                                     ctx.why_missing("record") +
                                     "; a Debian package is checked by `dpkg --verify`)");
    if (problems.empty())
        return ctx.add("TD112", "pass", seen, "as RECORD says",
                       "every file of torch's distributions matches its RECORD (" + seen + ")");
    ctx.add(
        "TD112", "fail", join(problems, "; "), "as RECORD says",
        "damaged installation: " + problems.front() +
            (problems.size() > 1 ? " and " + std::to_string(problems.size() - 1) + " more" : ""),
        join(fixes, "; "));
}

// TD129: the installed distributions are the locked set the image's label names.
void python_locked(CheckContext& ctx) {
    const std::string labelled = ctx.expected("python-set");
    if (labelled.empty())
        return ctx.skip("TD129",
                        "the image carries no hash-locked Python set (no "
                        "io.torchdock.python-set label: not rendered from a lock)");
    const json& d = ctx.data("record");
    if (!d.contains("distributions") || !d["distributions"].is_array())
        return ctx.skip("TD129", ctx.why_missing("record"));
    std::map<std::string, std::string> locked, installed;
    // The extensions built from source in the image's build stage (their archives are
    // sha256-locked; their wheels are built) belong beside the locked set.
    const std::string built = ctx.expected("built-extensions");
    for (const auto& pin : split(labelled + (built.empty() ? "" : "," + built), ',')) {
        auto eq = pin.find("==");
        if (eq != std::string::npos) locked[pin.substr(0, eq)] = pin.substr(eq + 2);
    }
    for (const auto& dist : d["distributions"])
        if (dist.is_object())
            installed[pypi::normalize_project_name(str(dist, "name"))] = str(dist, "version");
    std::vector<std::string> missing, moved, added, tools;
    for (const auto& [name, version] : locked) {
        auto it = installed.find(name);
        if (it == installed.end())
            missing.push_back(name + " " + version);
        else if (it->second != version)
            moved.push_back(name + " " + version + " -> " + it->second);
    }
    for (const auto& [name, version] : installed) {
        if (locked.count(name)) continue;
        (name == "pip" || name == "setuptools" || name == "wheel" ? tools : added)
            .push_back(name + " " + version);
    }
    std::string observed = std::to_string(installed.size()) + " distributions";
    std::string expected = std::to_string(locked.size()) + " locked" +
                           (built.empty() ? "" : " (with the built " + built + ")");
    std::string also = tools.empty() ? "" : " (the environment's own: " + join(tools, ", ") + ")";
    if (missing.empty() && moved.empty() && added.empty())
        return ctx.add("TD129", "pass", observed, expected,
                       "every locked distribution is installed at its locked version and "
                       "nothing else is" +
                           also);
    std::vector<std::string> what;
    if (!moved.empty()) what.push_back("at another version: " + join(moved, ", "));
    if (!added.empty()) what.push_back("not locked: " + join(added, ", "));
    if (!missing.empty()) what.push_back("locked but not installed: " + join(missing, ", "));
    ctx.add("TD129", "fail", observed, expected,
            "the installed Python set is not the lock's: " + join(what, "; ") + also,
            "rebuild the image from its lock, or lock what was added (`torchdock lock`)");
}

// The requirement NAME==VERSION of a Requires-Dist line, when it is one ("" otherwise).
std::pair<std::string, std::string> exact_pin(const std::string& requirement) {
    std::string pin = requirement.substr(0, requirement.find(';'));
    pin.erase(std::remove(pin.begin(), pin.end(), ' '), pin.end());
    auto eq = pin.find("==");
    if (eq == std::string::npos || pin.find("===") != std::string::npos) return {};
    return {to_lower(pin.substr(0, eq)), pin.substr(eq + 2)};
}

// " (newer than the pin)" or " (older than the pin)": which way an installed version moved.
std::string pin_direction(const std::string& have, const std::string& pin) {
    auto h = pypi::Pep440Version::parse(have), p = pypi::Pep440Version::parse(pin);
    if (!h || !p || *h == *p) return {};
    return *p < *h ? " (newer than the pin)" : " (older than the pin)";
}

// TD128: the nvidia-* wheels and triton beside torch are the versions torch pins.
void torch_pins(CheckContext& ctx) {
    const json& t = ctx.data("torch");
    const json dists = t.value("distributions", json::object());
    if (!dists.is_object() || !dists.contains("torch"))
        return ctx.skip("TD128", "no torch distribution: " + ctx.why_missing("torch"));
    std::vector<std::string> wrong, absent, ok;
    const json requires_ = dists["torch"].value("requires", json::array());
    for (const auto& r : requires_) {
        if (!r.is_string()) continue;
        auto [name, version] = exact_pin(r.get<std::string>());
        if (name.empty() || (name.rfind("nvidia-", 0) != 0 && name != "triton")) continue;
        std::string have = distribution_version(ctx, name);
        if (have.empty())
            absent.push_back(name + "==" + version);
        else if (have != version)
            wrong.push_back(name + " " + have + " is installed" + pin_direction(have, version) +
                            ", torch " + distribution_version(ctx, "torch") +
                            " requires ==" + version);
        else
            ok.push_back(name + " " + have);
    }
    if (!wrong.empty())
        return ctx.add(
            "TD128", "fail", join(wrong, "; "), "torch's pins", join(wrong, "; "),
            "pip install --force-reinstall --no-deps " + [&] {
                std::vector<std::string> pins;
                for (const auto& r : requires_)
                    if (r.is_string())
                        if (auto [n, v] = exact_pin(r.get<std::string>());
                            !n.empty() && !distribution_version(ctx, n).empty() &&
                            distribution_version(ctx, n) != v)
                            pins.push_back("'" + n + "==" + v + "'");
                return join(pins, " ");
            }());
    if (!absent.empty())
        return ctx.add("TD128", "warn", "not installed: " + join(absent, ", "), "torch's pins",
                       "torch pins wheels that are not installed (its libraries must then come "
                       "from elsewhere; TD110 says whether they resolve): " +
                           join(absent, ", "),
                       "pip install " + join(absent, " "), "warning");
    if (ok.empty())
        return ctx.skip("TD128", "torch pins no nvidia-* wheel or triton (a CPU build)");
    ctx.add("TD128", "pass", std::to_string(ok.size()) + " pinned wheels", "torch's pins",
            "every wheel torch pins is installed at its pin");
}

// TD134: the image's USER can write a temporary directory (torchvision's import,
// torch.compile and torch.distributed's file rendezvous make one) and its HOME (torch.hub's
// and triton's caches), as the torch probe found running as that USER.
void writable_dirs(CheckContext& ctx) {
    const json& t = ctx.data("torch");
    const json w = t.is_object() ? t.value("writable", json()) : json();
    if (!w.is_object())
        return ctx.skip("TD134", "the torch probe did not get as far as checking (" +
                                     ctx.why_missing("torch") + ")");
    std::string uid = w.contains("uid") && w["uid"].is_number_integer()
                          ? std::to_string(w["uid"].get<long long>())
                          : "?";
    if (!str(w, "temp_error").empty())
        return ctx.add("TD134", "fail", "no temporary directory", "a writable temporary directory",
                       "the image's USER (uid " + uid + ") has no writable temporary directory (" +
                           str(w, "temp_error") +
                           "): `import torchvision`, torch.compile and torch.distributed's file "
                           "rendezvous fail, although `import torch` works",
                       "make /tmp writable (chmod 1777 /tmp in the image) or set TMPDIR to a "
                       "directory the USER can write");
    std::string home = str(w, "home");
    if (w.contains("home_writable") && w["home_writable"] == false)
        return ctx.add("TD134", "warn", str(w, "temp_dir"), "a writable temporary directory",
                       "temporary directory " + str(w, "temp_dir") + "; HOME " +
                           (home.empty() ? std::string("(unset)") : home) +
                           " is not writable by uid " + uid +
                           ": torch.hub's and triton's caches (torch.compile on a GPU) cannot "
                           "be written there",
                       "give the USER a writable HOME, or set TORCH_HOME and TRITON_CACHE_DIR "
                       "to a writable directory",
                       "warning");
    ctx.add("TD134", "pass", str(w, "temp_dir"), "a writable temporary directory",
            "temporary directory " + str(w, "temp_dir") +
                (home.empty() ? std::string() : ", HOME " + home) + " writable by uid " + uid);
}

}  // namespace

void judge_runtime(CheckContext& ctx) {
    for (auto check : {python_interpreter, cuda_visible, libs_preload, files_intact, python_locked,
                       torch_pins, writable_dirs})
        ctx.guarded(check);
}

}  // namespace td::validate_detail
