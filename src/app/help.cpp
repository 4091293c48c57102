#include "app/help.hpp"

#include <iostream>

#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace {

constexpr const char* k_exit_codes =
    "exit codes:\n"
    "  0    everything checked passed\n"
    "  1    a check failed, drift was found, or nothing ran\n"
    "  2    usage or configuration error (bad flag, manifest, settings, missing file)\n"
    "  3    a needed part is unavailable (Docker engine, GPU with --require-gpu, network)\n"
    "  4    a build, lock or probe ran past its --timeout\n"
    "  130  interrupted (Ctrl-C, SIGTERM)\n";

// Global options that take a value, so the word after them is not the command.
bool takes_value(const std::string& arg) { return arg == "--color"; }

std::vector<std::string> command_names(CLI::App& cli) {
    std::vector<std::string> names;
    for (const CLI::App* sub : cli.get_subcommands([](CLI::App*) { return true; }))
        names.push_back(sub->get_name());
    names.push_back("help");
    return names;
}

int print_help(CLI::App& cli, const std::vector<std::string>& topic) {
    if (topic.empty()) {
        std::cout << cli.help();
        return k_exit_ok;
    }
    if (topic[0] == "environment") {
        std::cout << "environment variables torchdock reads:\n";
        for (const auto& v : environment_variables())
            std::cout << "  " << v.name << "\n      " << v.meaning << "\n";
        return k_exit_ok;
    }
    if (topic[0] == "exit-codes") {
        std::cout << k_exit_codes;
        return k_exit_ok;
    }
    CLI::App* app = &cli;
    std::string path;  // "torchdock kb" for `help kb refresh`: the usage line names it
    for (const auto& word : topic) {
        CLI::App* sub = nullptr;
        try {
            sub = app->get_subcommand(word);
        } catch (const CLI::OptionNotFound&) {
        }
        if (!sub) {
            auto names = command_names(*app);
            names.push_back("environment");
            names.push_back("exit-codes");
            std::string msg =
                "no help for " + quote_value(word) + ": topics are " + join(names, ", ");
            if (auto guess = closest_match(word, names))
                msg += "; did you mean \"" + *guess + "\"?";
            print_error(msg);
            return k_exit_config;
        }
        path += (path.empty() ? "" : " ") + app->get_name();
        app = sub;
    }
    std::cout << app->help(path);
    return k_exit_ok;
}

}  // namespace

const std::vector<EnvironmentVariable>& environment_variables() {
    static const std::vector<EnvironmentVariable> vars = {
        {"TORCHDOCK_DATA", "knowledge base directory (--data overrides it)"},
        {"TORCHDOCK_PROBES", "probe directory (--probes overrides it)"},
        {"TORCHDOCK_CONFIG",
         "settings file, trusted as the user's own (--config overrides it; default: "
         "torchdock.json found from the current directory up to the repository root or $HOME, "
         "if yours or root's and not writable by others, then "
         "$XDG_CONFIG_HOME/torchdock/torchdock.json)"},
        {"TORCHDOCK_DOCKER", "the docker client `build` runs (default: docker on PATH)"},
        {"TORCHDOCK_UV", "the uv binary `lock` runs (default: uv on PATH)"},
        {"TORCHDOCK_CACHE_DIR",
         "cache of file probe results and of the sandbox's unpacked images (images/) (default: "
         "$XDG_CACHE_HOME/torchdock, else ~/.cache/torchdock; for root the image store defaults "
         "to /var/cache/torchdock/images)"},
        {"TORCHDOCK_SANDBOX_CACHE_MAX",
         "the size the sandbox's image store is kept under, least recently used images removed "
         "first (e.g. 50G; default 50G; `torchdock cache prune` on demand)"},
        {"DOCKER_HOST",
         "the container engine: unix:///PATH (default /var/run/docker.sock), tcp://HOST:PORT "
         "(TLS with DOCKER_TLS_VERIFY), ssh://[USER@]HOST[:PORT]; dockerd, or Podman's "
         "Docker-compatible API (not for build and lock)"},
        {"DOCKER_TLS_VERIFY, DOCKER_TLS, DOCKER_CERT_PATH",
         "TLS to a tcp:// engine, as the Docker CLI reads them: verify the engine against "
         "ca.pem and present cert.pem/key.pem from DOCKER_CERT_PATH (default ~/.docker)"},
        {"DOCKER_CONTEXT, DOCKER_CONFIG",
         "the Docker context to use (when DOCKER_HOST is unset; else config.json's "
         "currentContext) and the Docker client's directory (contexts, config.json's logins for "
         "docker:// images; default ~/.docker)"},
        {"TORCHDOCK_ENGINE_PLAIN_TCP", "1 accepts a tcp:// engine without TLS (refused otherwise)"},
        {"TORCHDOCK_SSH_CONFIG", "ssh configuration file for an ssh:// engine (`ssh -F`)"},
        {"PIP_CERT, REQUESTS_CA_BUNDLE, SSL_CERT_FILE",
         "CA bundle handed to builds' pip when --ca-cert is not given (first one set)"},
        {"NO_COLOR", "no colour when set and not empty (--color always overrides it)"},
        {"XDG_CONFIG_HOME, XDG_CACHE_HOME, HOME", "where the user's settings and cache live"},
        {"PATH", "where docker, uv, hadolint, srun and the host's python are found"},
        {"KUBERNETES_SERVICE_HOST", "doctor --host notes that it runs in a Kubernetes pod"},
        {"SLURMD_NODENAME", "node-check's node name under Slurm (--node overrides it)"},
        {"SLURM_CONF", "the cluster fleet's srun, sinfo and scontrol talk to (Slurm's own)"},
    };
    return vars;
}

std::string main_help_footer() {
    return std::string("\n") + k_exit_codes +
           "\nmore: torchdock help COMMAND, torchdock help environment\n";
}

std::optional<int> answer_before_parse(CLI::App& cli, const std::vector<std::string>& args) {
    // The first word that is not a global option is the command.
    std::size_t i = 0;
    while (i < args.size() && starts_with(args[i], "-")) i += takes_value(args[i]) ? 2 : 1;
    if (i < args.size()) {
        const std::string& word = args[i];
        if (word == "help")
            return print_help(
                cli, std::vector<std::string>(args.begin() + static_cast<long>(i) + 1, args.end()));
        auto names = command_names(cli);
        if (std::find(names.begin(), names.end(), word) == names.end()) {
            std::string msg = "unknown command " + quote_value(word);
            if (auto guess = closest_match(word, names))
                msg += "; did you mean \"" + *guess + "\"?";
            print_error(msg + " (commands: " + join(names, ", ") + ")");
            return k_exit_config;
        }
    }
    // validate and doctor took `--json FILE` before the report flags were one convention;
    // now the file goes after '=' and `validate IMG --json out.json` would validate an image
    // called out.json, so that form is refused with the one that works.
    bool took_files = i < args.size() && (args[i] == "validate" || args[i] == "doctor");
    for (std::size_t k = i; took_files && k + 1 < args.size(); ++k)
        for (const char* flag : {"--json", "--junit", "--markdown", "--sarif"})
            if (args[k] == flag && !starts_with(args[k + 1], "-"))
                for (const char* ext : {".json", ".xml", ".md", ".sarif"})
                    if (ends_with(args[k + 1], ext)) {
                        print_error(std::string(flag) + " " + quote_value(args[k + 1]) +
                                    ": a report file goes after '=': " + flag + "=" + args[k + 1] +
                                    " (" + flag + " alone prints to stdout)");
                        return k_exit_config;
                    }
    return std::nullopt;
}

}  // namespace td::app
