#include "core/pypi/pep440.hpp"

#include <algorithm>
#include <cctype>

#include "util/strings.hpp"

namespace td::pypi {
namespace {

bool ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool lower_alnum(char c) { return ascii_digit(c) || (c >= 'a' && c <= 'z'); }

// Reads digits at `i` (at most 18, so the value fits a long); -1 when there are none.
long read_number(const std::string& s, std::size_t& i) {
    std::size_t start = i;
    long v = 0;
    while (i < s.size() && ascii_digit(s[i]) && i - start < 18) v = v * 10 + (s[i++] - '0');
    if (i < s.size() && ascii_digit(s[i])) return -2;  // absurdly long
    return i == start ? -1 : v;
}

bool eat_word(const std::string& s, std::size_t& i, std::string_view word) {
    if (s.compare(i, word.size(), word) != 0) return false;
    i += word.size();
    return true;
}

void skip_sep(const std::string& s, std::size_t& i) {
    if (i < s.size() && (s[i] == '.' || s[i] == '-' || s[i] == '_')) ++i;
}

int compare_local(const std::string& a, const std::string& b) {
    auto pa = split(a, '.'), pb = split(b, '.');
    for (std::size_t k = 0; k < std::max(pa.size(), pb.size()); ++k) {
        if (k >= pa.size()) return -1;
        if (k >= pb.size()) return 1;
        bool na = std::all_of(pa[k].begin(), pa[k].end(), ascii_digit) && !pa[k].empty();
        bool nb = std::all_of(pb[k].begin(), pb[k].end(), ascii_digit) && !pb[k].empty();
        if (na && nb) {
            long x = std::stol(pa[k]), y = std::stol(pb[k]);
            if (x != y) return x < y ? -1 : 1;
        } else if (na != nb) {
            return na ? 1 : -1;  // numeric segments sort after alphanumeric ones
        } else if (pa[k] != pb[k]) {
            return pa[k] < pb[k] ? -1 : 1;
        }
    }
    return 0;
}

int cmp(long a, long b) { return a < b ? -1 : (a > b ? 1 : 0); }

}  // namespace

std::optional<Pep440Version> Pep440Version::parse(std::string_view text) {
    std::string s = to_lower(text);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i < s.size() && s[i] == 'v') ++i;
    if (s.size() - i > 256) return std::nullopt;
    Pep440Version v;
    std::size_t save = i;
    long first = read_number(s, i);
    if (first < 0) return std::nullopt;
    if (i < s.size() && s[i] == '!') {
        v.m_epoch = first;
        ++i;
    } else {
        i = save;
    }
    while (true) {
        long part = read_number(s, i);
        if (part < 0) return std::nullopt;
        v.m_release.push_back(part);
        if (i + 1 < s.size() && s[i] == '.' && ascii_digit(s[i + 1]))
            ++i;
        else
            break;
    }
    // pre-release
    save = i;
    skip_sep(s, i);
    int kind = -1;
    if (eat_word(s, i, "alpha") || eat_word(s, i, "a"))
        kind = 0;
    else if (eat_word(s, i, "beta") || eat_word(s, i, "b"))
        kind = 1;
    else if (eat_word(s, i, "preview") || eat_word(s, i, "pre") || eat_word(s, i, "rc") ||
             eat_word(s, i, "c"))
        kind = 2;
    if (kind >= 0) {
        v.m_pre_kind = kind;
        std::size_t before = i;
        skip_sep(s, i);
        long n = read_number(s, i);
        if (n == -2) return std::nullopt;
        if (n < 0) i = before;
        v.m_pre = std::max(n, 0L);
    } else {
        i = save;
    }
    // post-release
    save = i;
    if (i < s.size() && s[i] == '-' && i + 1 < s.size() && ascii_digit(s[i + 1])) {
        ++i;
        v.m_post = read_number(s, i);
    } else {
        skip_sep(s, i);
        if (eat_word(s, i, "post") || eat_word(s, i, "rev") || eat_word(s, i, "r")) {
            std::size_t before = i;
            skip_sep(s, i);
            long n = read_number(s, i);
            if (n == -2) return std::nullopt;
            if (n < 0) i = before;
            v.m_post = std::max(n, 0L);
        } else {
            i = save;
        }
    }
    // dev release
    save = i;
    skip_sep(s, i);
    if (eat_word(s, i, "dev")) {
        std::size_t before = i;
        skip_sep(s, i);
        long n = read_number(s, i);
        if (n == -2) return std::nullopt;
        if (n < 0) i = before;
        v.m_dev = std::max(n, 0L);
    } else {
        i = save;
    }
    if (i < s.size() && s[i] == '+') {
        ++i;
        std::string local;
        while (i < s.size()) {
            char c = s[i++];
            if (lower_alnum(c))
                local += c;
            else if ((c == '.' || c == '-' || c == '_') && !local.empty() && local.back() != '.')
                local += '.';
            else
                return std::nullopt;
        }
        if (local.empty() || local.back() == '.') return std::nullopt;
        v.m_local = local;
    }
    if (i != s.size()) return std::nullopt;
    return v;
}

std::string Pep440Version::str() const {
    std::string out = m_epoch ? std::to_string(m_epoch) + "!" : "";
    for (std::size_t k = 0; k < m_release.size(); ++k)
        out += (k ? "." : "") + std::to_string(m_release[k]);
    if (m_pre_kind >= 0)
        out += std::string(m_pre_kind == 0   ? "a"
                           : m_pre_kind == 1 ? "b"
                                             : "rc") +
               std::to_string(m_pre);
    if (m_post >= 0) out += ".post" + std::to_string(m_post);
    if (m_dev >= 0) out += ".dev" + std::to_string(m_dev);
    if (!m_local.empty()) out += "+" + m_local;
    return out;
}

Pep440Version Pep440Version::public_version() const {
    Pep440Version v = *this;
    v.m_local.clear();
    return v;
}

int compare(const Pep440Version& a, const Pep440Version& b) {
    if (int c = cmp(a.m_epoch, b.m_epoch)) return c;
    for (std::size_t k = 0; k < std::max(a.m_release.size(), b.m_release.size()); ++k) {
        long x = k < a.m_release.size() ? a.m_release[k] : 0;
        long y = k < b.m_release.size() ? b.m_release[k] : 0;
        if (int c = cmp(x, y)) return c;
    }
    // A dev release of a final version sorts before its pre-releases.
    auto pre_key = [](const Pep440Version& v) -> std::pair<long, long> {
        if (v.m_pre_kind < 0 && v.m_post < 0 && v.m_dev >= 0) return {-1, 0};
        if (v.m_pre_kind < 0) return {3, 0};
        return {v.m_pre_kind, v.m_pre};
    };
    auto pa = pre_key(a), pb = pre_key(b);
    if (int c = cmp(pa.first, pb.first)) return c;
    if (int c = cmp(pa.second, pb.second)) return c;
    if (int c = cmp(a.m_post, b.m_post)) return c;
    long da = a.m_dev < 0 ? (1L << 62) : a.m_dev, db = b.m_dev < 0 ? (1L << 62) : b.m_dev;
    if (int c = cmp(da, db)) return c;
    if (a.m_local.empty() != b.m_local.empty()) return a.m_local.empty() ? -1 : 1;
    return compare_local(a.m_local, b.m_local);
}

std::optional<SpecifierSet> SpecifierSet::parse(std::string_view text) {
    std::string s(text);
    s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t'; }),
            s.end());
    if (!s.empty() && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
    SpecifierSet out;
    if (s.empty()) return out;
    for (const auto& part : split(s, ',')) {
        SpecifierClause c;
        for (const char* op : {"===", "~=", "==", "!=", "<=", ">=", "<", ">"})
            if (starts_with(part, op)) {
                c.op = op;
                break;
            }
        if (c.op.empty()) return std::nullopt;
        c.version = part.substr(c.op.size());
        if (ends_with(c.version, ".*")) {
            if (c.op != "==" && c.op != "!=") return std::nullopt;
            c.prefix = true;
            c.version.resize(c.version.size() - 2);
        }
        if (c.op != "===" && !Pep440Version::parse(c.version)) return std::nullopt;
        if (c.op == "~=" && Pep440Version::parse(c.version)->release().size() < 2)
            return std::nullopt;
        out.m_clauses.push_back(std::move(c));
    }
    return out;
}

namespace {

bool prefix_match(const Pep440Version& v, const Pep440Version& spec) {
    const auto& want = spec.release();
    for (std::size_t k = 0; k < want.size(); ++k) {
        long have = k < v.release().size() ? v.release()[k] : 0;
        if (have != want[k]) return false;
    }
    return true;
}

bool clause_matches(const SpecifierClause& c, const Pep440Version& v) {
    if (c.op == "===") return v.str() == c.version;
    Pep440Version spec = *Pep440Version::parse(c.version);
    Pep440Version pub = v.public_version();
    if (c.op == "==" || c.op == "!=") {
        bool eq =
            c.prefix ? prefix_match(pub, spec) : compare(spec.local().empty() ? pub : v, spec) == 0;
        return c.op == "==" ? eq : !eq;
    }
    int k = compare(pub, spec);
    if (c.op == "<=") return k <= 0;
    if (c.op == ">=") return k >= 0;
    if (c.op == "<")
        return k < 0 && !(pub.is_prerelease() && !spec.is_prerelease() && prefix_match(pub, spec));
    if (c.op == ">")
        return k > 0 && !(prefix_match(pub, spec) && pub.str().find(".post") != std::string::npos &&
                          spec.str().find(".post") == std::string::npos);
    // ~=: >= spec and == spec's release without its last part, as a prefix
    std::vector<long> head(spec.release().begin(), spec.release().end() - 1);
    std::string prefix;
    for (std::size_t i = 0; i < head.size(); ++i)
        prefix += (i ? "." : "") + std::to_string(head[i]);
    return k >= 0 && prefix_match(pub, *Pep440Version::parse(prefix));
}

}  // namespace

bool SpecifierSet::contains(const Pep440Version& v) const {
    if (v.is_prerelease()) {
        bool allowed = false;
        for (const auto& c : m_clauses)
            if (auto p = Pep440Version::parse(c.version); p && p->is_prerelease()) allowed = true;
        if (!allowed) return false;
    }
    for (const auto& c : m_clauses)
        if (!clause_matches(c, v)) return false;
    return true;
}

std::string SpecifierSet::pinned() const {
    if (m_clauses.size() != 1 || m_clauses[0].op != "==") return {};
    return m_clauses[0].version;
}

std::string SpecifierSet::str() const {
    std::vector<std::string> parts;
    for (const auto& c : m_clauses) parts.push_back(c.op + c.version + (c.prefix ? ".*" : ""));
    return join(parts, ",");
}

}  // namespace td::pypi
