#include "core/pypi/metadata.hpp"

#include <cctype>

#include "core/pypi/wheel_name.hpp"
#include "util/strings.hpp"

namespace td::pypi {
namespace {

std::string trim(std::string_view s) {
    std::size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return std::string(s.substr(a, b - a));
}

bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// A small recursive-descent evaluator for PEP 508 markers. Bounded: input is at most 4 KiB
// and nesting at most 32 parentheses.
class MarkerParser {
  public:
    MarkerParser(std::string_view text, const MarkerEnvironment& env) : m_s(text), m_env(env) {}

    std::optional<bool> run() {
        if (m_s.size() > 4096) return std::nullopt;
        auto v = expr(0);
        skip_ws();
        if (!v || m_i != m_s.size()) return std::nullopt;
        return v;
    }

  private:
    std::string_view m_s;
    const MarkerEnvironment& m_env;
    std::size_t m_i = 0;

    void skip_ws() {
        while (m_i < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_i]))) ++m_i;
    }
    bool keyword(std::string_view w) {
        skip_ws();
        if (m_s.compare(m_i, w.size(), w) != 0) return false;
        std::size_t end = m_i + w.size();
        if (end < m_s.size() &&
            (std::isalnum(static_cast<unsigned char>(m_s[end])) || m_s[end] == '_'))
            return false;
        m_i = end;
        return true;
    }

    std::optional<bool> expr(int depth) {
        auto left = conj(depth);
        if (!left) return std::nullopt;
        bool v = *left;
        while (keyword("or")) {
            auto right = conj(depth);
            if (!right) return std::nullopt;
            v = v || *right;
        }
        return v;
    }
    std::optional<bool> conj(int depth) {
        auto left = atom(depth);
        if (!left) return std::nullopt;
        bool v = *left;
        while (keyword("and")) {
            auto right = atom(depth);
            if (!right) return std::nullopt;
            v = v && *right;
        }
        return v;
    }
    std::optional<bool> atom(int depth) {
        skip_ws();
        if (m_i < m_s.size() && m_s[m_i] == '(') {
            if (depth >= 32) return std::nullopt;
            ++m_i;
            auto v = expr(depth + 1);
            skip_ws();
            if (!v || m_i >= m_s.size() || m_s[m_i] != ')') return std::nullopt;
            ++m_i;
            return v;
        }
        std::string lvar;
        auto lhs = value(lvar);
        if (!lhs) return std::nullopt;
        auto op = oper();
        if (!op) return std::nullopt;
        std::string rvar;
        auto rhs = value(rvar);
        if (!rhs) return std::nullopt;
        return compare_values(*lhs, *op, *rhs, lvar.empty() ? rvar : lvar);
    }
    // A quoted string or an environment variable (its name is returned in `var`).
    std::optional<std::string> value(std::string& var) {
        skip_ws();
        if (m_i >= m_s.size()) return std::nullopt;
        char q = m_s[m_i];
        if (q == '"' || q == '\'') {
            std::size_t end = m_s.find(q, m_i + 1);
            if (end == std::string_view::npos) return std::nullopt;
            std::string v(m_s.substr(m_i + 1, end - m_i - 1));
            m_i = end + 1;
            return v;
        }
        std::size_t start = m_i;
        while (m_i < m_s.size() && (std::isalnum(static_cast<unsigned char>(m_s[m_i])) ||
                                    m_s[m_i] == '_' || m_s[m_i] == '.'))
            ++m_i;
        var = std::string(m_s.substr(start, m_i - start));
        if (var == "python_version" || var == "python_full_version") return m_env.python_version;
        if (var == "extra") return m_env.extra;
        if (var == "sys_platform") return m_env.sys_platform;
        if (var == "platform_system") return m_env.platform_system;
        if (var == "platform_machine") return m_env.platform_machine;
        if (var == "os_name") return m_env.os_name;
        if (var == "implementation_name") return m_env.implementation_name;
        if (var == "platform_python_implementation") return m_env.platform_python_implementation;
        if (var == "platform_release" || var == "platform_version" ||
            var == "implementation_version")
            return std::string();
        return std::nullopt;
    }
    std::optional<std::string> oper() {
        skip_ws();
        for (const char* op : {"===", "==", "!=", "<=", ">=", "~=", "<", ">"})
            if (m_s.compare(m_i, std::char_traits<char>::length(op), op) == 0) {
                m_i += std::char_traits<char>::length(op);
                return std::string(op);
            }
        if (keyword("in")) return std::string("in");
        if (keyword("not")) {
            if (keyword("in")) return std::string("not in");
            return std::nullopt;
        }
        return std::nullopt;
    }
    static bool compare_values(const std::string& l, const std::string& op, const std::string& r,
                               const std::string& var) {
        if (op == "in") return r.find(l) != std::string::npos;
        if (op == "not in") return r.find(l) == std::string::npos;
        if (var == "extra") {
            bool eq = normalize_project_name(l) == normalize_project_name(r);
            return op == "!=" ? !eq : eq;
        }
        auto lv = Pep440Version::parse(l), rv = Pep440Version::parse(r);
        if (lv && rv && op != "===") {
            auto spec = SpecifierSet::parse(op + r);
            if (spec) return spec->contains(*lv);
        }
        if (op == "==" || op == "===") return l == r;
        if (op == "!=") return l != r;
        return false;
    }
};

}  // namespace

std::optional<bool> evaluate_marker(std::string_view marker, const MarkerEnvironment& env) {
    return MarkerParser(marker, env).run();
}

Result<Requirement> parse_requirement(std::string_view line) {
    Requirement r;
    r.text = trim(line);
    std::string_view s = r.text;
    if (auto semi = s.find(';'); semi != std::string_view::npos) {
        r.marker = trim(s.substr(semi + 1));
        s = s.substr(0, semi);
    }
    std::size_t i = 0;
    while (i < s.size() && name_char(s[i])) ++i;
    if (i == 0)
        return Error{ErrorKind::Config,
                     "requirement " + quote_value(line) + " has no project name"};
    r.name = normalize_project_name(s.substr(0, i));
    std::string rest = trim(s.substr(i));
    if (!rest.empty() && rest.front() == '[') {
        auto close = rest.find(']');
        if (close == std::string::npos)
            return Error{ErrorKind::Config,
                         "requirement " + quote_value(line) + ": unclosed extras"};
        for (const auto& e : split(rest.substr(1, close - 1), ','))
            if (auto t = trim(e); !t.empty()) r.extras.push_back(normalize_project_name(t));
        rest = trim(rest.substr(close + 1));
    }
    if (starts_with(rest, "@")) return r;  // a direct URL reference: no version constraint
    auto spec = SpecifierSet::parse(rest);
    if (!spec)
        return Error{ErrorKind::Config, "requirement " + quote_value(line) +
                                            ": version specifier " + quote_value(rest) +
                                            " does not parse"};
    r.specifier = *spec;
    return r;
}

Result<CoreMetadata> parse_core_metadata(std::string_view text) {
    CoreMetadata md;
    std::vector<std::pair<std::string, std::string>> headers;
    for (const auto& raw : split(text, '\n')) {
        std::string line = raw;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) break;  // the description body follows
        if ((line[0] == ' ' || line[0] == '\t') && !headers.empty()) {
            headers.back().second += " " + trim(line);
            continue;
        }
        auto colon = line.find(':');
        if (colon == std::string::npos || colon == 0)
            return Error{ErrorKind::Config,
                         "METADATA line " + quote_value(line) + " is not a header"};
        headers.emplace_back(to_lower(line.substr(0, colon)), trim(line.substr(colon + 1)));
    }
    for (const auto& [key, value] : headers) {
        if (key == "name")
            md.name = value;
        else if (key == "version")
            md.version = value;
        else if (key == "requires-python")
            md.requires_python = value;
        else if (key == "requires-dist") {
            auto r = parse_requirement(value);
            if (!r) return r.error();
            md.requires_dist.push_back(std::move(r.value()));
        }
    }
    if (md.name.empty() || md.version.empty())
        return Error{ErrorKind::Config, "METADATA has no Name or Version header"};
    return md;
}

std::vector<const Requirement*> CoreMetadata::applicable(const MarkerEnvironment& env) const {
    std::vector<const Requirement*> out;
    for (const auto& r : requires_dist) {
        if (r.marker.empty()) {
            out.push_back(&r);
            continue;
        }
        if (auto v = evaluate_marker(r.marker, env); v && *v) out.push_back(&r);
    }
    return out;
}

const Requirement* CoreMetadata::requirement_on(const std::string& project,
                                                const MarkerEnvironment& env) const {
    std::string want = normalize_project_name(project);
    for (const Requirement* r : applicable(env))
        if (r->name == want) return r;
    return nullptr;
}

}  // namespace td::pypi
