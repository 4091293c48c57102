#pragma once
// PEP 440 versions and version specifiers, as far as package indexes use them:
// release segments, pre/post/dev releases, local labels ("2.0.0+cu117"), and the
// operators ==, !=, <, <=, >, >=, ~=, === with "==X.*" prefix matching. Pure.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace td::pypi {

class Pep440Version {
  public:
    // Normalises case and the usual spellings ("1.0RC1", "1.0.post2", "v1.0"); nullopt
    // for text that is not a PEP 440 version.
    static std::optional<Pep440Version> parse(std::string_view text);

    const std::vector<long>& release() const { return m_release; }
    bool is_prerelease() const { return m_pre_kind >= 0 || m_dev >= 0; }
    const std::string& local() const { return m_local; }
    std::string str() const;  // normalised form
    // The version without its local label.
    Pep440Version public_version() const;

    friend int compare(const Pep440Version& a, const Pep440Version& b);
    friend bool operator==(const Pep440Version& a, const Pep440Version& b) {
        return compare(a, b) == 0;
    }
    friend bool operator<(const Pep440Version& a, const Pep440Version& b) {
        return compare(a, b) < 0;
    }

  private:
    long m_epoch = 0;
    std::vector<long> m_release;
    int m_pre_kind = -1;  // 0 a, 1 b, 2 rc; -1 none
    long m_pre = 0;
    long m_post = -1;
    long m_dev = -1;
    std::string m_local;
};

struct SpecifierClause {
    std::string op;       // "==", "!=", "<", "<=", ">", ">=", "~=", "==="
    std::string version;  // as written, without a trailing ".*"
    bool prefix = false;  // "==2.1.*" / "!=2.1.*"
};

class SpecifierSet {
  public:
    // "==2.0.0", ">=2.14.0", "<=13.1.1.3,>=13.1.0.3", "(==1.13.0)", "" (anything).
    static std::optional<SpecifierSet> parse(std::string_view text);

    // Whether `v` satisfies every clause. Pre-releases only match when a clause names one.
    bool contains(const Pep440Version& v) const;
    bool empty() const { return m_clauses.empty(); }
    const std::vector<SpecifierClause>& clauses() const { return m_clauses; }
    // The pinned version of a single "==V" or "==V.*" clause (what a lock pins), else "".
    std::string pinned() const;
    std::string str() const;  // clauses joined by ","

  private:
    std::vector<SpecifierClause> m_clauses;
};

}  // namespace td::pypi
