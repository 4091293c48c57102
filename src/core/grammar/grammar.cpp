#include "core/grammar/grammar.hpp"

#include <algorithm>
#include <initializer_list>

#include "util/strings.hpp"
#include "util/version.hpp"

namespace td::grammar {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_alnum(char c) { return is_digit(c) || is_lower(c) || is_upper(c); }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!is_digit(c)) return false;
    return true;
}

// Finds the first byte that is not printable ASCII, for messages.
std::string first_bad_char(std::string_view s, bool (*allowed)(char)) {
    for (char c : s)
        if (!allowed(c)) return quote_value(std::string(1, c));
    return {};
}

// PEP 440 release segment + optional pre/post/dev, lowercase canonical spellings only.
bool pep440_public(std::string_view s) {
    std::size_t i = 0;
    auto number = [&] {
        std::size_t start = i;
        while (i < s.size() && is_digit(s[i])) ++i;
        return i > start;
    };
    if (s.size() > 2 && s[0] >= '0' && s[0] <= '9') {
        // optional epoch N!
        std::size_t bang = s.find('!');
        if (bang != std::string_view::npos) {
            if (!all_digits(s.substr(0, bang))) return false;
            i = bang + 1;
        }
    }
    if (!number()) return false;
    while (i + 1 < s.size() && s[i] == '.' && is_digit(s[i + 1])) {
        ++i;
        number();
    }
    // 0: tag absent; 1: tag and its number; -1: tag without a number.
    auto suffix = [&](std::string_view tag) {
        if (s.substr(i, tag.size()) != tag) return 0;
        i += tag.size();
        return number() ? 1 : -1;
    };
    if (i < s.size() && s[i] != '.') {
        int pre = suffix("rc");
        if (pre == 0) pre = suffix("a");
        if (pre == 0) pre = suffix("b");
        if (pre <= 0) return false;
    }
    if (i < s.size() && s.substr(i, 5) == ".post") {
        i += 1;
        if (suffix("post") <= 0) return false;
    }
    if (i < s.size() && s.substr(i, 4) == ".dev") {
        i += 1;
        if (suffix("dev") <= 0) return false;
    }
    return i == s.size();
}

bool local_label(std::string_view s) {
    if (s.empty()) return false;
    for (const auto& part : split(s, '.')) {
        if (part.empty()) return false;
        for (char c : part)
            if (!is_lower(c) && !is_digit(c)) return false;
    }
    return true;
}

// Empty when accepted, else what is wrong (see check_registry_host).
std::string registry_host_problem(std::string_view s) {
    auto colon = s.find(':');
    std::string_view host = s.substr(0, colon);
    if (colon != std::string_view::npos) {
        std::string_view port = s.substr(colon + 1);
        if (!all_digits(port)) return "bad port " + quote_value(port);
        unsigned long value = 0;
        for (char c : port.substr(0, 6)) value = value * 10 + static_cast<unsigned long>(c - '0');
        if (port.size() > 5 || value < 1 || value > 65535)
            return "port " + std::string(port.substr(0, 20)) + (port.size() > 20 ? "..." : "") +
                   " is not from 1 to 65535";
    }
    if (host.empty()) return "empty host";
    for (const auto& label : split(host, '.')) {
        if (label.empty() || label.front() == '-' || label.back() == '-') return "bad host name";
        for (char c : label)
            if (!is_alnum(c) && c != '-') return "bad host name";
    }
    return {};
}

bool path_component(std::string_view s) {
    // [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*
    if (s.empty() || !(is_lower(s.front()) || is_digit(s.front()))) return false;
    if (!(is_lower(s.back()) || is_digit(s.back()))) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (is_lower(c) || is_digit(c) || c == '-') continue;
        if (c == '.' || c == '_') {
            bool double_underscore = c == '_' && i + 1 < s.size() && s[i + 1] == '_';
            std::size_t next = i + (double_underscore ? 2 : 1);
            if (next >= s.size() || !(is_lower(s[next]) || is_digit(s[next]))) return false;
            i = next - 1;
            continue;
        }
        return false;
    }
    return true;
}

}  // namespace

std::string check_pip_name(std::string_view s) {
    if (s.empty()) return "empty package name";
    if (s.size() > 100) return "package name longer than 100 characters";
    if (!is_alnum(s.front()) || !is_alnum(s.back()))
        return "a PEP 508 name starts and ends with a letter or digit";
    for (char c : s)
        if (!is_alnum(c) && c != '.' && c != '_' && c != '-')
            return "character " + quote_value(std::string(1, c)) +
                   " is not allowed in a PEP 508 name (letters, digits, '.', '_', '-')";
    return {};
}

namespace {

// A loopback host as a URL names it: localhost, [::1] or a dotted quad in 127.0.0.0/8.
bool is_loopback_host(std::string_view host) {
    if (host == "localhost" || host == "[::1]") return true;
    int parts = 0;
    std::size_t start = 0;
    while (start <= host.size()) {
        std::size_t dot = host.find('.', start);
        std::string_view part =
            host.substr(start, dot == std::string_view::npos ? host.npos : dot - start);
        if (part.empty() || part.size() > 3 || !std::all_of(part.begin(), part.end(), is_digit))
            return false;
        if (std::stoi(std::string(part)) > 255 || (parts == 0 && part != "127")) return false;
        ++parts;
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    return parts == 4;
}

// An http(s) address of a file whose name ends in one of `suffixes`; `what` and `example`
// say what would be accepted. Plain http only to a loopback host, as for index URLs (pip's
// rule): a file from elsewhere comes over https.
std::string check_file_url(std::string_view s, std::initializer_list<std::string_view> suffixes,
                           const std::string& what, const std::string& example) {
    const std::string expected =
        "; expected an http:// or https:// address of " + what + ", like \"" + example + "\"";
    if (s.size() > 2048) return "URL longer than 2048 characters" + expected;
    std::string_view rest;
    if (s.starts_with("https://"))
        rest = s.substr(8);
    else if (s.starts_with("http://"))
        rest = s.substr(7);
    else
        return "URL " + quote_value(s) + " is not http:// or https://" + expected;
    auto slash = rest.find('/');
    if (slash == 0 || slash == std::string_view::npos)
        return "URL " + quote_value(s) + " has no host or no path" + expected;
    if (s.starts_with("http://")) {
        std::string_view authority = rest.substr(0, slash);
        std::string_view host = authority.starts_with('[')
                                    ? authority.substr(0, authority.find(']') + 1)
                                    : authority.substr(0, authority.find(':'));
        if (!is_loopback_host(host))
            return "URL " + quote_value(s) +
                   " is plain http to another host: use https (http is accepted for a loopback "
                   "host only, as for package indexes)" +
                   expected;
    }
    for (char c : rest) {
        if (is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '%' || c == '+' ||
            c == '/' || c == ':' || c == '=')
            continue;
        return "character " + quote_value(std::string(1, c)) + " is not accepted in URL " +
               quote_value(s) + " (no credentials, query, fragment, spaces or quotes)" + expected;
    }
    for (std::string_view suffix : suffixes)
        if (s.ends_with(suffix) && s.size() > suffix.size() &&
            s[s.size() - suffix.size() - 1] != '/')
            return {};
    return "URL " + quote_value(s) + " does not name " + what + expected;
}

}  // namespace

std::string check_wheel_url(std::string_view s) {
    return check_file_url(s, {".whl"}, "a .whl file",
                          "https://example.org/wheels/pkg-1.0-cp311-cp311-linux_x86_64.whl");
}

std::string check_sdist_url(std::string_view s) {
    return check_file_url(s, {".tar.gz", ".zip"}, "a source archive (.tar.gz or .zip)",
                          "https://example.org/src/pkg-1.0.tar.gz");
}

std::string check_sha256_hex(std::string_view s) {
    if (s.size() != 64 || !std::all_of(s.begin(), s.end(), is_hex))
        return "SHA-256 " + quote_value(s) + " is not 64 lowercase hex digits";
    return {};
}

std::string check_version_specifier(std::string_view s) {
    if (s.empty() || s.size() > 200) return "empty or longer than 200 characters";
    for (char c : s)
        if (!is_alnum(c) && std::string_view("=<>!~*.,+ ").find(c) == std::string_view::npos)
            return "character " + quote_value(std::string(1, c)) + " in specifier " +
                   quote_value(s) + " (expected clauses like \"==2.9.1\" or \">=2.3,<3\")";
    if (std::string_view("=<>!~").find(s.front()) == std::string_view::npos)
        return "specifier " + quote_value(s) + " does not start with an operator";
    return {};
}

std::string check_python_minor(std::string_view s) {
    auto v = Version::parse(s);
    return v && v->parts().size() == 2 && v->major() == 3 && v->str() == s
               ? std::string()
               : "Python version " + quote_value(s) + " is not 3.N (like \"3.10\")";
}

std::string check_pep440_version(std::string_view s) {
    if (s.empty()) return "empty version";
    if (s.size() > 64) return "version longer than 64 characters";
    auto plus = s.find('+');
    std::string_view pub = s.substr(0, plus);
    if (!pep440_public(pub))
        return "version " + quote_value(s) +
               " is not an exact PEP 440 version (like 1.26.4, 2.0rc1, 1.0.post1, or 2.4.1+cu121)";
    if (plus != std::string_view::npos && !local_label(s.substr(plus + 1)))
        return "local version label in " + quote_value(s) + " must be lowercase letters and digits";
    return {};
}

std::string check_pip_requirement(std::string_view s) {
    const std::string expected = "expected NAME==VERSION, for example \"numpy==1.26.4\"";
    auto eq = s.find("==");
    if (eq == std::string_view::npos) {
        for (std::string_view op : {">=", "<=", "~=", "!=", ">", "<", "@"})
            if (s.find(op) != std::string_view::npos)
                return "only exact pins are accepted, found " + std::string(op) + " in " +
                       quote_value(s) + "; " + expected;
        return "missing exact version pin in " + quote_value(s) + "; " + expected;
    }
    std::string_view name = s.substr(0, eq);
    std::string_view version = s.substr(eq + 2);
    if (!version.empty() && version.front() == '=')
        return "arbitrary equality (===) is not accepted in " + quote_value(s) + "; " + expected;
    auto bracket = name.find('[');
    if (bracket != std::string_view::npos) {
        if (name.back() != ']') return "malformed extras in " + quote_value(s);
        for (const auto& extra : split(name.substr(bracket + 1, name.size() - bracket - 2), ',')) {
            if (auto e = check_pip_name(extra); !e.empty())
                return "bad extra " + quote_value(extra) + " in " + quote_value(s) + ": " + e;
        }
        name = name.substr(0, bracket);
    }
    if (auto e = check_pip_name(name); !e.empty())
        return e + " in " + quote_value(s) + "; " + expected;
    if (auto e = check_pep440_version(version); !e.empty()) return e + "; " + expected;
    return {};
}

std::string check_debian_version(std::string_view s) {
    const std::string expected =
        " (a Debian version: [epoch:]upstream[-revision], like 2.34.1-1ubuntu1.11 or "
        "1:2.39.5-0+deb12u1)";
    if (s.empty()) return "empty version" + expected;
    if (s.size() > 100) return "version longer than 100 characters";
    std::string_view rest = s;
    auto colon = rest.find(':');
    if (colon != std::string_view::npos) {
        if (!all_digits(rest.substr(0, colon))) return "bad epoch in " + quote_value(s) + expected;
        rest = rest.substr(colon + 1);
    }
    std::string_view upstream = rest, revision;
    auto dash = rest.rfind('-');
    if (dash != std::string_view::npos) {
        upstream = rest.substr(0, dash);
        revision = rest.substr(dash + 1);
        if (revision.empty()) return "empty Debian revision in " + quote_value(s) + expected;
    }
    if (upstream.empty() || !is_digit(upstream.front()))
        return "upstream version must start with a digit in " + quote_value(s) + expected;
    for (char c : upstream)
        if (!is_alnum(c) && c != '.' && c != '+' && c != '~' && c != '-')
            return "character " + quote_value(std::string(1, c)) + " not allowed in " +
                   quote_value(s) + expected;
    for (char c : revision)
        if (!is_alnum(c) && c != '.' && c != '+' && c != '~')
            return "character " + quote_value(std::string(1, c)) + " not allowed in " +
                   quote_value(s) + expected;
    return {};
}

std::string check_apt_package(std::string_view s) {
    if (s.find('=') != std::string_view::npos) return check_apt_requirement(s);
    // The name rules of check_apt_requirement, checked through it with a placeholder version.
    std::string probe = std::string(s) + "=0";
    if (auto e = check_apt_requirement(probe); !e.empty())
        return "bad Debian package name " + quote_value(s) +
               "; expected NAME (locked by `torchdock lock`) or NAME=VERSION, like \"curl\" or "
               "\"git=1:2.39.5-0+deb12u1\"";
    return {};
}

std::string check_apt_requirement(std::string_view s) {
    const std::string expected = "; expected NAME=VERSION, for example \"git=1:2.39.5-0+deb12u1\"";
    auto eq = s.find('=');
    if (eq == std::string_view::npos)
        return "missing exact version in " + quote_value(s) + expected;
    std::string_view name = s.substr(0, eq);
    if (name.size() < 2 || name.size() > 100)
        return "bad package name in " + quote_value(s) + expected;
    if (!is_lower(name.front()) && !is_digit(name.front()))
        return "a Debian package name starts with a lowercase letter or digit: " + quote_value(s) +
               expected;
    for (char c : name)
        if (!is_lower(c) && !is_digit(c) && c != '+' && c != '-' && c != '.')
            return "character " + quote_value(std::string(1, c)) +
                   " not allowed in a Debian package name in " + quote_value(s) + expected;
    if (auto e = check_debian_version(s.substr(eq + 1)); !e.empty()) return e;
    return {};
}

std::string check_digest(std::string_view s) {
    if (!s.starts_with("sha256:") || s.size() != 7 + 64)
        return "digest " + quote_value(s) + " is not sha256: followed by 64 hex digits";
    for (char c : s.substr(7))
        if (!is_hex(c)) return "digest " + quote_value(s) + " has a non-lowercase-hex character";
    return {};
}

std::string check_image_repository(std::string_view s) {
    const std::string expected =
        " (expected [registry[:port]/]path, lowercase, like nvidia/cuda or 127.0.0.1:5000/debian)";
    if (s.empty() || s.size() > 255) return "image repository must be 1 to 255 characters";
    auto parts = split(s, '/');
    std::size_t first = 0;
    if (parts.size() > 1 &&
        (parts[0].find_first_of(".:") != std::string::npos || parts[0] == "localhost")) {
        if (auto e = registry_host_problem(parts[0]); !e.empty())
            return "bad registry host " + quote_value(parts[0]) + " in " + quote_value(s) + ": " +
                   e + expected;
        first = 1;
    }
    for (std::size_t i = first; i < parts.size(); ++i)
        if (!path_component(parts[i]))
            return "bad path component " + quote_value(parts[i]) + " in " + quote_value(s) +
                   expected;
    return {};
}

std::string check_registry_host(std::string_view s) {
    if (auto e = registry_host_problem(s); !e.empty())
        return quote_value(s) + " is not a registry host: " + e +
               " (expected host[:port], like docker.io or 127.0.0.1:5000)";
    return {};
}

std::string check_image_reference(std::string_view s) {
    std::string_view rest = s;
    auto at = rest.find('@');
    if (at != std::string_view::npos) {
        if (auto e = check_digest(rest.substr(at + 1)); !e.empty()) return e;
        rest = rest.substr(0, at);
    }
    auto slash = rest.rfind('/');
    auto colon = rest.rfind(':');
    if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
        std::string_view tag = rest.substr(colon + 1);
        if (tag.empty() || tag.size() > 128 || tag.front() == '.' || tag.front() == '-')
            return "bad tag " + quote_value(tag) + " in " + quote_value(s);
        for (char c : tag)
            if (!is_alnum(c) && c != '_' && c != '.' && c != '-')
                return "character " + quote_value(std::string(1, c)) + " not allowed in tag of " +
                       quote_value(s);
        rest = rest.substr(0, colon);
    }
    return check_image_repository(rest);
}

std::string check_env_name(std::string_view s) {
    if (s.empty() || s.size() > 128) return "environment name must be 1 to 128 characters";
    if (is_digit(s.front()))
        return "environment name " + quote_value(s) +
               " starts with a digit ([A-Za-z_][A-Za-z0-9_]*)";
    for (char c : s)
        if (!is_alnum(c) && c != '_')
            return "character " + quote_value(std::string(1, c)) +
                   " not allowed in environment name " + quote_value(s) +
                   " ([A-Za-z_][A-Za-z0-9_]*)";
    return {};
}

namespace {

// The code point of one well-formed UTF-8 sequence.
char32_t code_point(std::string_view seq) {
    auto b = [&](std::size_t i) {
        return static_cast<char32_t>(static_cast<unsigned char>(seq[i]));
    };
    switch (seq.size()) {
        case 1:
            return b(0);
        case 2:
            return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
        case 3:
            return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
        default:
            return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) |
                   (b(3) & 0x3F);
    }
}

// U+061C ARABIC LETTER MARK, U+200E/U+200F LRM/RLM, U+202A..U+202E embeddings and overrides,
// U+2066..U+2069 isolates; and the invisible U+200B ZERO WIDTH SPACE, U+2060 WORD JOINER and
// U+FEFF ZERO WIDTH NO-BREAK SPACE.
bool is_invisible_format_control(char32_t c) {
    return c == 0x061C || c == 0x200B || c == 0x200E || c == 0x200F ||
           (c >= 0x202A && c <= 0x202E) || c == 0x2060 || (c >= 0x2066 && c <= 0x2069) ||
           c == 0xFEFF;
}

}  // namespace

std::string check_plain_text(std::string_view s, std::size_t max) {
    if (s.size() > max) return "longer than " + std::to_string(max) + " bytes";
    auto bad = first_bad_char(s, [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u != 0x7f;
    });
    if (!bad.empty())
        return "control character " + bad + " in " + quote_value(s) +
               " (only printable text on one line is accepted)";
    for (std::size_t i = 0; i < s.size();) {
        std::size_t n = utf8_sequence_length(s.substr(i));
        if (n == 0)
            return "bytes that are not UTF-8 in " + quote_value(s) +
                   " (only printable UTF-8 text is accepted)";
        // C1 controls (U+0080..U+009F) and line/paragraph separators end or move a line too.
        std::string_view seq = s.substr(i, n);
        if (seq == "\u2028" || seq == "\u2029" ||
            (n == 2 && static_cast<unsigned char>(seq[0]) == 0xC2 &&
             static_cast<unsigned char>(seq[1]) < 0xA0))
            return "control character " + quote_value(seq) + " in " + quote_value(s) +
                   " (only printable text on one line is accepted)";
        // Bidirectional and invisible format controls reorder or hide what a reviewer reads
        // (a Dockerfile label, a waiver reason): "Trojan Source", CVE-2021-42574.
        if (is_invisible_format_control(code_point(seq)))
            return "invisible or bidirectional format character " + quote_value(seq) + " in " +
                   quote_value(s) +
                   " (it changes how the text reads without being seen; only printable text "
                   "is accepted)";
        i += n;
    }
    return {};
}

std::string check_manifest_path(std::string_view path) {
    if (auto bad = check_plain_text(path, 4096); !bad.empty()) return "manifest path: " + bad;
    std::string_view base = path.substr(path.find_last_of('/') + 1);
    if (base.size() < 6 || base.substr(base.size() - 5) != ".json")
        return "manifest file " + quote_value(base) + " does not end in .json";
    if (auto bad = check_family_name(base.substr(0, base.size() - 5)); !bad.empty())
        return "manifest file name " + quote_value(base) +
               " is not a family name followed by .json: " + bad;
    return {};
}

std::string check_user_name(std::string_view s) {
    const std::string expected = " (expected [a-z_][a-z0-9_-]{0,31}, like \"trainer\")";
    if (s.empty() || s.size() > 32) return "user name must be 1 to 32 characters" + expected;
    if (!is_lower(s.front()) && s.front() != '_')
        return "bad user name " + quote_value(s) + expected;
    for (char c : s)
        if (!is_lower(c) && !is_digit(c) && c != '_' && c != '-')
            return "bad user name " + quote_value(s) + expected;
    if (s == "root") return "user \"root\" is not a non-root user; leave \"user\" out instead";
    return {};
}

std::string check_variant_name(std::string_view s) {
    if (s.empty() || s.size() > 200) return "variant name must be 1 to 200 characters";
    if (!is_lower(s.front()) && !is_digit(s.front())) return "bad variant name " + quote_value(s);
    for (char c : s)
        if (!is_lower(c) && !is_digit(c) && c != '.' && c != '-')
            return "bad variant name " + quote_value(s);
    if (s.find("..") != std::string_view::npos) return "bad variant name " + quote_value(s);
    return {};
}

std::string check_family_name(std::string_view s) {
    const std::string expected = " (expected [a-z0-9][a-z0-9-]{0,39}, like \"cuda-pip\")";
    if (s.empty() || s.size() > 40) return "name must be 1 to 40 characters" + expected;
    if (!is_lower(s.front()) && !is_digit(s.front()))
        return "bad name " + quote_value(s) + expected;
    for (char c : s)
        if (!is_lower(c) && !is_digit(c) && c != '-')
            return "bad name " + quote_value(s) + expected;
    if (s.back() == '-' || s.find("--") != std::string_view::npos)
        return "bad name " + quote_value(s) + expected;
    return {};
}

}  // namespace td::grammar
