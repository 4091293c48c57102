#pragma once
// The image as `docker run IMAGE python` runs it: what its ENTRYPOINT is (a wrapper that
// runs its arguments, or a program of its own), the environment that process gets, and
// which Python that is. Pure: decided from the image's configuration and from probe-env's
// readings (probes/env/README.md), taken once with the entrypoint removed and, for a
// wrapper, once through it.
#include <optional>
#include <string>
#include <vector>

#include "core/validate/probe_run.hpp"

namespace td {

struct EntrypointVerdict {
    enum class Kind { None, Wrapper, Program };
    Kind kind = Kind::None;
    std::string command;   // the ENTRYPOINT as one line ("/usr/local/bin/entrypoint.sh")
    std::string evidence;  // why it is judged so ("its script runs \"$@\"")
};

// An ENTRYPOINT runs its arguments when it is a known init (tini, dumb-init, docker-init,
// catatonit, gosu, su-exec), the `run` of an environment manager (conda, mamba, micromamba,
// uv, poetry, pipenv, pdm, hatch, pixi, rye: it execs its arguments in the project's
// environment), a shell given a script that uses "$@", or a script file whose text (`head`,
// the first bytes probe-env read) uses "$@" or exec's its arguments. Anything else is a
// program of its own: `docker run IMAGE python` runs it, not python.
EntrypointVerdict classify_entrypoint(const std::vector<std::string>& entrypoint,
                                      const std::string& head);

// What a runner ENTRYPOINT needs to start under the probes' read-only root that a default
// `docker run` has: uv writes its cache under HOME, so it gets one in the container's /tmp
// ("UV_CACHE_DIR=/tmp/.torchdock-uv-cache"); nothing for other entrypoints or when the
// image's environment sets the variable itself.
std::vector<std::string> runner_scratch_env(const std::vector<std::string>& entrypoint,
                                            const std::vector<std::string>& image_env);

// What the probes run under and which interpreters they judge.
struct RuntimePlan {
    // The environment of a `docker run IMAGE ...` process when it differs from the image's
    // configuration (a wrapper ENTRYPOINT set it up): "NAME=value", given to every probe
    // container (which runs with the entrypoint removed). Empty: the image's own Env.
    std::vector<std::string> env;
    std::string env_source;                // "the image's configuration" or "its ENTRYPOINT <cmd>"
    std::vector<std::string> environment;  // the whole environment that process sees
    // The interpreters `python` and `python3` resolve to on that PATH, in that order (the
    // torch probe judges the first that has a torch package); `resolved` says they were
    // read off the image (they exist), not guessed from its PATH.
    std::vector<std::string> candidates;
    bool resolved = false;
    // Every other interpreter found in the image (VIRTUAL_ENV, CONDA_PREFIX, other PATH
    // directories, the usual prefixes): the torch probe lists those that have torch.
    std::vector<std::string> others;
    std::string why;         // why candidates[0] is judged ("`python` on the image's PATH")
    std::string ld_preload;  // LD_PRELOAD of that environment ("" when unset or empty)
    // What the runtime reading found wrong, for the python.interpreter check (TD127):
    // "VIRTUAL_ENV=/opt/venv28 is set but `python` runs /opt/conda/bin/python".
    std::vector<std::string> stale;
    std::vector<std::string> notes;  // the entrypoint, when it is a program or did not answer
    // The files-only tier only (files are read, no code of the image runs): the ELF machine of
    // the image's platform ("aarch64") and the directories its python would import from, read
    // from names (core/validate/platform files_only_site_dirs). Empty in the full tier.
    bool files_only = false;
    std::string files_only_machine;  // "" when the image's platform names no known machine
    std::vector<std::string> files_only_site_dirs;
};

// `direct`: probe-env with the entrypoint removed (nullptr when not run); `wrapped`: probe-env
// run through a wrapper ENTRYPOINT (nullptr when none), accepted only when it echoes `nonce`.
// Without usable readings the candidates come from the image's PATH (not `resolved`).
RuntimePlan plan_runtime(const std::vector<std::string>& image_env,
                         const EntrypointVerdict& entrypoint, const ProbeRun* direct,
                         const ProbeRun* wrapped, const std::string& nonce,
                         const std::optional<std::string>& python_override);

// python and python3 in each directory of $PATH (Docker's default PATH when the image sets
// none), in the order a shell would try them; for hosts and for images whose environment
// could not be read. `env` is "NAME=value" entries.
std::vector<std::string> path_interpreters(const std::vector<std::string>& env);

// The value of NAME in "NAME=value" entries; nullopt when unset.
std::optional<std::string> env_lookup(const std::vector<std::string>& env, const std::string& name);

}  // namespace td
