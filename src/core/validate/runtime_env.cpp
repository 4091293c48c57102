#include "core/validate/runtime_env.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace td {
namespace {

using json = nlohmann::json;

// Docker's PATH for a container whose image sets none.
constexpr const char* k_default_path =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

bool uses_arguments(const std::string& script) {
    for (const char* form : {"\"$@\"", "${@}", "$@", "\"$*\"", "$*"})
        if (script.find(form) != std::string::npos) return true;
    return false;
}

bool is_shell(const std::string& name) {
    for (const char* s : {"sh", "bash", "dash", "ash", "zsh", "ksh"})
        if (name == s) return true;
    return false;
}

// Programs that exist to run their arguments (an init, a user switch, an environment runner).
bool is_known_runner(const std::vector<std::string>& ep) {
    std::string name = base_name(ep[0]);
    for (const char* init : {"tini", "tini-static", "dumb-init", "docker-init", "catatonit", "gosu",
                             "su-exec", "setpriv", "env", "nvidia_entrypoint.sh"})
        if (name == init) return true;
    // Environment managers whose `run` execs its arguments inside the project's environment
    // (PATH and VIRTUAL_ENV set to its venv): `uv run --frozen`, `poetry run`, ... Options may
    // come before `run` (`uv --directory /app run`).
    for (const char* manager : {"conda", "mamba", "micromamba", "uv", "poetry", "pipenv", "pdm",
                                "hatch", "pixi", "rye"}) {
        if (name != manager) continue;
        for (std::size_t i = 1; i < ep.size(); ++i) {
            if (ep[i] == "run") return true;
            if (ep[i].empty() || ep[i][0] != '-') break;  // a subcommand other than run
            // An option's value in the next word ("--directory /app"), unless given as =.
            if (ep[i].rfind("--", 0) == 0 && ep[i].find('=') == std::string::npos &&
                i + 1 < ep.size() && ep[i + 1] != "run" && !ep[i + 1].empty() &&
                ep[i + 1][0] != '-')
                ++i;
        }
    }
    return false;
}

// probe-env's reading as an object, or null when it is no evidence.
const json* reading(const ProbeRun* run) {
    return run && run->usable() && run->data.is_object() ? &run->data : nullptr;
}

std::vector<std::string> env_entries(const json& reading) {
    std::vector<std::string> out;
    const json env = reading.value("env", json::object());
    if (env.is_object())
        for (const auto& [k, v] : env.items())
            if (v.is_string()) out.push_back(k + "=" + v.get<std::string>());
    return out;
}

// The environment a wrapper set up, as overrides of the image's own: every variable it has
// (but the ones a shell or the engine sets per process), and "" for each it removed.
std::vector<std::string> wrapper_overrides(const std::vector<std::string>& image_env,
                                           const std::vector<std::string>& wrapped_env) {
    static const std::vector<std::string> per_process = {"HOSTNAME", "HOME",  "PWD",
                                                         "OLDPWD",   "SHLVL", "_"};
    std::vector<std::string> out;
    for (const auto& kv : wrapped_env) {
        std::string name = kv.substr(0, kv.find('='));
        if (std::find(per_process.begin(), per_process.end(), name) == per_process.end())
            out.push_back(kv);
    }
    for (const auto& kv : image_env) {
        std::string name = kv.substr(0, kv.find('='));
        if (!env_lookup(wrapped_env, name)) out.push_back(name + "=");
    }
    return out;
}

// A string member, or "" when absent or of another type (probe answers may have any shape).
std::string string_member(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                                                  : std::string();
}

std::string resolved_path(const json& reading, const char* name, std::string* real = nullptr) {
    const json py = reading.value("python", json::object());
    if (!py.is_object() || !py.contains(name) || !py[name].is_object()) return {};
    if (real) *real = string_member(py[name], "realpath");
    return string_member(py[name], "path");
}

}  // namespace

std::optional<std::string> env_lookup(const std::vector<std::string>& env,
                                      const std::string& name) {
    std::optional<std::string> out;
    for (const auto& kv : env)  // the last entry wins, as in a process environment
        if (kv.size() > name.size() && kv.compare(0, name.size(), name) == 0 &&
            kv[name.size()] == '=')
            out = kv.substr(name.size() + 1);
        else if (kv == name)
            out = std::string();
    return out;
}

EntrypointVerdict classify_entrypoint(const std::vector<std::string>& ep, const std::string& head) {
    EntrypointVerdict v;
    if (ep.empty() || (ep.size() == 1 && ep[0].empty())) return v;
    v.command = join(ep, " ");
    v.kind = EntrypointVerdict::Kind::Program;
    if (is_known_runner(ep)) {
        v.kind = EntrypointVerdict::Kind::Wrapper;
        v.evidence = base_name(ep[0]) + " runs its arguments";
    } else if (is_shell(base_name(ep[0]))) {
        // ["/bin/sh", "-c", "SCRIPT", ...]: a wrapper when the script uses its arguments.
        for (std::size_t i = 1; i < ep.size(); ++i)
            if (uses_arguments(ep[i])) {
                v.kind = EntrypointVerdict::Kind::Wrapper;
                v.evidence = "its shell script uses \"$@\"";
            }
        if (v.kind != EntrypointVerdict::Kind::Wrapper && ep.size() >= 2 && ep[1] != "-c" &&
            uses_arguments(head)) {
            v.kind = EntrypointVerdict::Kind::Wrapper;
            v.evidence = "the script " + ep[1] + " uses \"$@\"";
        }
    } else if (head.rfind("#!", 0) == 0 && uses_arguments(head)) {
        v.kind = EntrypointVerdict::Kind::Wrapper;
        v.evidence = "its script uses \"$@\"";
    }
    if (v.kind == EntrypointVerdict::Kind::Program && v.evidence.empty())
        v.evidence = head.rfind("#!", 0) == 0 ? "its script never uses its arguments (\"$@\")"
                                              : "it is a program, not a script that runs "
                                                "its arguments";
    return v;
}

std::vector<std::string> runner_scratch_env(const std::vector<std::string>& ep,
                                            const std::vector<std::string>& image_env) {
    if (ep.empty() || base_name(ep[0]) != "uv" || env_lookup(image_env, "UV_CACHE_DIR")) return {};
    return {"UV_CACHE_DIR=/tmp/.torchdock-uv-cache"};
}

std::vector<std::string> path_interpreters(const std::vector<std::string>& env) {
    std::vector<std::string> out;
    auto path = env_lookup(env, "PATH");
    for (const auto& dir : split(path && !path->empty() ? *path : k_default_path, ':')) {
        if (dir.empty() || dir[0] != '/') continue;  // the working directory: not the image's
        for (const char* name : {"python", "python3"})
            if (std::find(out.begin(), out.end(), dir + "/" + name) == out.end())
                out.push_back(dir + "/" + name);
    }
    return out;
}

RuntimePlan plan_runtime(const std::vector<std::string>& image_env,
                         const EntrypointVerdict& entrypoint, const ProbeRun* direct,
                         const ProbeRun* wrapped, const std::string& nonce,
                         const std::optional<std::string>& python_override) {
    RuntimePlan plan;
    plan.env_source = "the image's configuration";
    const json* base = reading(direct);
    const json* through = reading(wrapped);
    if (through && string_member(*through, "nonce") != nonce) {
        plan.notes.push_back("the ENTRYPOINT " + entrypoint.command +
                             " did not run torchdock's environment probe (its answer lacks the "
                             "run's nonce): its environment is not used");
        through = nullptr;
    } else if (wrapped && !through) {
        plan.notes.push_back("the ENTRYPOINT " + entrypoint.command +
                             " did not run torchdock's environment probe: " + wrapped->problem() +
                             "; the image's configured environment is used");
    }
    if (entrypoint.kind == EntrypointVerdict::Kind::Program)
        plan.notes.push_back("the ENTRYPOINT " + entrypoint.command + " is a program of its own (" +
                             entrypoint.evidence +
                             "): `docker run IMAGE python` runs it, not "
                             "python; the probes run with the entrypoint removed");
    const json* used = through ? through : base;
    std::vector<std::string> env = used ? env_entries(*used) : image_env;
    if (through) {
        plan.env = wrapper_overrides(image_env, env);
        plan.env_source = "its ENTRYPOINT " + entrypoint.command;
    }
    plan.environment = env;
    plan.ld_preload = env_lookup(env, "LD_PRELOAD").value_or("");

    std::vector<std::string> reals;
    if (python_override) {
        plan.candidates = {*python_override};
        plan.why = "--python";
    } else if (used) {
        plan.resolved = true;
        for (const char* name : {"python", "python3"}) {
            std::string real, path = resolved_path(*used, name, &real);
            if (path.empty()) continue;
            if (plan.candidates.empty())
                plan.why = std::string("`") + name + "` on " +
                           (through ? "the PATH its ENTRYPOINT sets up (" + entrypoint.command + ")"
                                    : std::string("the image's PATH")) +
                           (std::string(name) == "python3" ? " (there is no `python`)" : "");
            if (std::find(plan.candidates.begin(), plan.candidates.end(), path) ==
                plan.candidates.end()) {
                plan.candidates.push_back(path);
                reals.push_back(real.empty() ? path : real);
            }
        }
        if (plan.candidates.empty()) plan.why = "no `python` or `python3` on the image's PATH";
    } else {
        plan.candidates = path_interpreters(env);
        plan.why =
            "the first `python` or `python3` on the PATH that has torch (not read off the image)";
    }
    if (used) {
        const json list = used->value("interpreters", json::array());
        if (list.is_array())
            for (const auto& i : list) {
                if (!i.is_object()) continue;
                // Another interpreter, or the same one in another environment (a venv's
                // python is a link to its base): what shares a candidate's bin directory is
                // that candidate.
                std::string path = string_member(i, "path");
                std::string dir = path.substr(0, path.find_last_of('/'));
                if (path.empty() || std::any_of(plan.candidates.begin(), plan.candidates.end(),
                                                [&](const std::string& c) {
                                                    return c.substr(0, c.find_last_of('/')) == dir;
                                                }))
                    continue;
                plan.others.push_back(path);
            }
        // A VIRTUAL_ENV or CONDA_PREFIX whose python is not the one the image runs.
        std::string runs = plan.candidates.empty() ? "" : plan.candidates.front();
        std::string runs_real = reals.empty() ? runs : reals.front();
        for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
            auto dir = env_lookup(env, var);
            if (!dir || dir->empty() || python_override) continue;
            std::string prefix = *dir + (dir->back() == '/' ? "" : "/");
            if (runs.rfind(prefix, 0) == 0 || runs_real.rfind(prefix, 0) == 0) continue;
            plan.stale.push_back(std::string(var) + "=" + *dir + " is set but `python` runs " +
                                 (runs.empty() ? std::string("nothing") : runs) +
                                 ": tools that trust " + var + " see another environment");
        }
    }
    return plan;
}

}  // namespace td
