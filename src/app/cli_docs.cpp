#include "app/cli_docs.hpp"

#include <vector>

namespace td::app {
namespace {

struct OptionDoc {
    std::vector<std::string> names;  // "-j", "--jobs"
    bool takes_value = false;
    std::string value_name;  // "TEXT", "INT:INT in [1 - 64]"
    std::string description;
    std::string default_value;
};

struct CommandDoc {
    std::string path;  // "kb refresh"
    std::string description;
    std::vector<OptionDoc> options;
    std::vector<OptionDoc> arguments;   // positionals: names = {"images"}
    std::vector<std::string> children;  // subcommand names
};

void collect(const CLI::App& app, const std::string& path, std::vector<CommandDoc>& out) {
    CommandDoc doc;
    doc.path = path;
    doc.description = app.get_description();
    for (const CLI::Option* opt : app.get_options()) {
        OptionDoc o;
        o.description = opt->get_description();
        o.default_value = opt->get_default_str();
        o.takes_value = opt->get_type_size() > 0 && opt->get_expected_min() > 0;
        o.value_name = opt->get_type_name();
        if (opt->nonpositional()) {
            for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
            for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
            doc.options.push_back(o);
        } else {
            o.names.push_back(opt->get_name(true));
            doc.arguments.push_back(o);
        }
    }
    auto subs = app.get_subcommands([](const CLI::App*) { return true; });
    for (const CLI::App* sub : subs) doc.children.push_back(sub->get_name());
    out.push_back(doc);
    for (const CLI::App* sub : subs)
        collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

std::vector<CommandDoc> commands_of(const CLI::App& app) {
    std::vector<CommandDoc> out;
    collect(app, "", out);
    return out;
}

std::string joined(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
    return out;
}

// roff text: backslashes and hyphens escaped, no line starting with a control character.
std::string roff(const std::string& text) {
    std::string out;
    for (char ch : text) {
        if (ch == '\\')
            out += "\\e";
        else if (ch == '-')
            out += "\\-";
        else
            out += ch;
    }
    if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
    return out;
}

std::string option_line(const OptionDoc& o) {
    std::string line = "\\fB" + roff(joined(o.names, ", ")) + "\\fR";
    if (o.takes_value) line += " \\fI" + roff(o.value_name) + "\\fR";
    return line;
}

const char* const k_man_tail = R"(.SH ENVIRONMENT
.TP
.B TORCHDOCK_DATA
knowledge base directory, when \fB\-\-data\fR is not given
.TP
.B TORCHDOCK_PROBES
probe directory, when \fB\-\-probes\fR is not given
.TP
.B TORCHDOCK_CONFIG
settings file (registry mirrors, package indexes), when \fB\-\-config\fR is not given
.TP
.B DOCKER_HOST
the container engine (\fIunix://\fR only); default \fI/var/run/docker.sock\fR: dockerd, or Podman's Docker-compatible API (not for \fBbuild\fR and \fBlock\fR)
.TP
.B TORCHDOCK_DOCKER
the Docker client \fBbuild\fR runs
.TP
.B TORCHDOCK_UV
the uv \fBlock\fR runs
.SH FILES
Found relative to the directory of the running binary (its symlinks resolved), so an
installed tree can be moved as a whole:
.TP
.I ../share/torchdock/data/
the knowledge base (\fBkb refresh\fR updates it; \fBknowledge_base.json\fR holds its date)
.TP
.I ../share/torchdock/manifests/
the bundled example manifests
.TP
.I ../libexec/torchdock/probes/
the probe programs that \fBvalidate\fR, \fBdoctor\fR and \fBpreflight\fR run
.TP
.I ./manifests/, ./dockerfiles/, ./torchdock.json
the defaults of \fB\-\-manifests\fR, \fB\-\-out\fR and \fB\-\-config\fR, in the working directory
.SH EXIT STATUS
.TP
.B 0
all checks passed
.TP
.B 1
a check failed, or nothing ran
.TP
.B 2
a usage or configuration error
.TP
.B 3
an environment is unavailable (no engine, no GPU where one is required)
.TP
.B 4
a time\-out
.TP
.B 130
interrupted (Ctrl\-C, SIGTERM)
)";

}  // namespace

std::string man_page(const CLI::App& app, const std::string& version) {
    auto commands = commands_of(app);
    std::string out =
        ".\\\" Generated from torchdock's command line by torchdock_docgen; do not edit.\n";
    out += ".TH TORCHDOCK 1 \"\" \"torchdock " + roff(version) + "\" \"User Commands\"\n";
    out += ".SH NAME\ntorchdock \\- render, build and validate pinned PyTorch\\-CUDA images\n";
    out +=
        ".SH SYNOPSIS\n.B torchdock\n.I COMMAND\n.RI [ OPTIONS ]\n.br\n.B torchdock "
        "\\-\\-version\n";
    std::string about = commands.front().description;
    if (about.rfind("torchdock: ", 0) == 0) about = about.substr(11);
    out += ".SH DESCRIPTION\ntorchdock: " + roff(about) + ".\n";
    out += "Run \\fBtorchdock \\fICOMMAND\\fB \\-\\-help\\fR for the same text as here.\n";
    out += ".SH OPTIONS\n";
    for (const auto& o : commands.front().options)
        out += ".TP\n" + option_line(o) + "\n" + roff(o.description) + "\n";
    out += ".SH COMMANDS\n";
    for (std::size_t i = 1; i < commands.size(); ++i) {
        const auto& c = commands[i];
        std::string synopsis = "torchdock " + c.path;
        if (!c.children.empty()) synopsis += " COMMAND";
        for (const auto& a : c.arguments) synopsis += " " + a.names.front();
        if (!c.options.empty()) synopsis += " [OPTIONS]";
        out += ".SS \"" + roff(synopsis) + "\"\n" + roff(c.description) + ".\n";
        if (!c.children.empty())
            out += "Commands: " + roff(joined(c.children, ", ")) + " (below).\n";
        for (const auto& a : c.arguments)
            out += ".TP\n\\fI" + roff(a.names.front()) + "\\fR\n" + roff(a.description) + "\n";
        for (const auto& o : c.options) {
            std::string text = o.description;
            if (!o.default_value.empty()) text += " (default: " + o.default_value + ")";
            out += ".TP\n" + option_line(o) + "\n" + roff(text) + "\n";
        }
    }
    return out + k_man_tail;
}

namespace {

// The words of a bash/zsh `case` pattern for every command path: ":render", "kb:refresh".
std::string step_patterns(const std::vector<CommandDoc>& commands) {
    std::vector<std::string> patterns;
    for (const auto& c : commands)
        for (const auto& child : c.children) patterns.push_back("'" + c.path + ":" + child + "'");
    return joined(patterns, "|");
}

std::string all_names(const std::vector<OptionDoc>& options, bool valued_only) {
    std::vector<std::string> names;
    for (const auto& o : options)
        if (!valued_only || o.takes_value)
            for (const auto& n : o.names) names.push_back(n);
    return joined(names, " ");
}

// Text inside single quotes in a shell script.
std::string single_quoted(const std::string& s) {
    std::string out;
    for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out;
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
    auto commands = commands_of(app);
    std::string out =
        "# bash completion for torchdock. Generated from its command line by torchdock_docgen; "
        "do not edit.\n"
        "_torchdock() {\n"
        "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path='' i "
        "opts valued children\n"
        "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "    case \"$path:${COMP_WORDS[i]}\" in\n"
        "      " +
        step_patterns(commands) +
        ") path=\"${path:+$path }${COMP_WORDS[i]}\" ;;\n"
        "    esac\n"
        "  done\n"
        "  case \"$path\" in\n";
    for (const auto& c : commands) {
        out += "    '" + c.path + "') opts='" + all_names(c.options, false) + "' valued='" +
               all_names(c.options, true) + "' children='" + joined(c.children, " ") + "' ;;\n";
    }
    out +=
        "  esac\n"
        "  if [[ \" $valued \" == *\" $prev \"* ]]; then\n"
        "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "  elif [[ $cur == -* ]]; then\n"
        "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
        "  elif [[ -n $children ]]; then\n"
        "    COMPREPLY=($(compgen -W \"$children\" -- \"$cur\"))\n"
        "  else\n"
        "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "  fi\n"
        "}\n"
        "complete -o filenames -F _torchdock torchdock\n";
    return out;
}

std::string zsh_completion(const CLI::App& app) {
    auto commands = commands_of(app);
    std::string out =
        "#compdef torchdock\n"
        "# zsh completion for torchdock. Generated from its command line by torchdock_docgen; "
        "do not edit.\n"
        "_torchdock() {\n"
        "  local cmd_path='' i depth=0\n"
        "  for ((i = 2; i < CURRENT; i++)); do\n"
        "    case \"$cmd_path:${words[i]}\" in\n"
        "      (" +
        step_patterns(commands) +
        ") cmd_path=\"${cmd_path:+$cmd_path }${words[i]}\"; "
        "depth=$((depth + 1)) ;;\n"
        "    esac\n"
        "  done\n"
        "  words=(\"${(@)words[depth+1,-1]}\"); (( CURRENT -= depth ))\n"
        "  case \"$cmd_path\" in\n";
    for (const auto& c : commands) {
        out += "    ('" + c.path + "')\n      _arguments -S";
        for (const auto& o : c.options) {
            std::string desc = o.description;
            std::string escaped;
            for (char ch : desc) {
                if (ch == '[' || ch == ']' || ch == ':') escaped += '\\';
                escaped += ch;
            }
            for (const auto& n : o.names)
                out += " \\\n        '*" + n + "[" + single_quoted(escaped) + "]" +
                       (o.takes_value ? ":value:_files" : "") + "'";
        }
        if (!c.children.empty()) {
            std::vector<std::string> items;  // name\:"description", as _arguments' ((...)) wants
            for (const auto& child : c.children)
                for (const auto& d : commands)
                    if (d.path == (c.path.empty() ? child : c.path + " " + child)) {
                        std::string quoted;
                        for (char ch : d.description) {
                            if (ch == '"' || ch == '\\' || ch == '$' || ch == '`') quoted += '\\';
                            quoted += ch;
                        }
                        items.push_back(child + "\\:\"" + quoted + "\"");
                    }
            out += " \\\n        '1:command:((" + single_quoted(joined(items, " ")) +
                   "))' '*::argument:_files'";
        } else if (!c.arguments.empty()) {
            out += " \\\n        '*:argument:_files'";
        }
        out += " ;;\n";
    }
    out += "  esac\n}\n_torchdock \"$@\"\n";
    return out;
}

}  // namespace td::app
