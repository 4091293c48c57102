// `explain`: scans a log line by line against the signatures (LogScanner), folds superseded
// ones into the signature that explains them, and assembles each explanation (facts, cause,
// fix, evidence, the fingerprint's verdict). Facts are explain_facts.cpp, verdicts
// explain_verdict.cpp.
#include "core/diagnose/explain.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "core/diagnose/explain_facts.hpp"
#include "core/diagnose/explain_verdict.hpp"

namespace td {
namespace {

using namespace explain_detail;

constexpr std::size_t k_max_evidence_text = 300;  // bytes of a line shown as evidence
constexpr std::size_t k_max_hits = 10;            // matched lines kept per signature and kind
constexpr std::size_t k_max_evidence = 12;        // evidence lines per explanation

// Cuts `s` to at most `max` bytes without splitting a UTF-8 sequence.
std::string cut_utf8(std::string_view s, std::size_t max) {
    if (s.size() <= max) return std::string(s);
    std::size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    return std::string(s.substr(0, n)) + "...";
}

}  // namespace

// Named (not anonymous): LogScanner::State, a type with external linkage, holds them.
namespace log_scan {

struct Hit {
    std::uint64_t line = 0;
    std::string text;
};

struct SignatureState {
    bool triggered = false;
    std::uint32_t required_seen = 0;  // bit k: the signature's requires[k] matched a line
    std::uint64_t first_line = 0;
    std::vector<Hit> hits;          // trigger lines (up to k_max_hits)
    std::vector<Hit> context_hits;  // context lines (up to k_max_hits)
    std::map<std::string, std::string> captures, context_captures, merged_captures;
};

}  // namespace log_scan

using log_scan::Hit;
using log_scan::SignatureState;

// ---- LogScanner: lines and matching ---------------------------------------------------------

struct LogScanner::State {
    const ErrorSignatures& sigs;
    std::vector<SignatureState> per_sig;
    std::map<std::string, std::string> global;
    std::vector<bool> fact_done;

    std::string line;           // the current line's first k_max_log_line bytes
    std::size_t line_seen = 0;  // bytes of the current line seen (kept or not)
    bool after_cr = false;      // the last byte fed was a CR (a following LF ends nothing)
    bool finished = false;
    std::uint64_t lines = 0;

    std::vector<FailureLine> first_failures;  // the first k_max_failure_lines failure lines
    std::vector<FailureLine> last_failures;   // a ring of the last ones after those
    std::size_t last_next = 0;                // the ring's oldest entry

    std::string norm;                       // the normalised line (reused buffer)
    std::vector<std::uint64_t> stamp;       // per template: the line it was last hit on
    std::vector<std::uint32_t> candidates;  // templates whose anchor is in this line

    explicit State(const ErrorSignatures& s)
        : sigs(s),
          per_sig(s.signatures.size()),
          fact_done(s.facts.size(), false),
          stamp(s.templates.size(), 0) {
        line.reserve(k_max_log_line);
    }

    void end_line(std::string_view raw) {
        ++lines;
        scan(raw);
    }

    void scan(std::string_view raw);
    void note_failure(std::string_view kind);
};

// A shell's command trace (`set -x`: "+ grep ...", "++ ..."): the command that was run, not
// what it printed, so never a failure nor a fact.
static bool shell_trace(std::string_view line) {
    std::size_t plus = line.find_first_not_of('+');
    return plus > 0 && plus != std::string_view::npos && line[plus] == ' ';
}

// Quoted text (a Markdown quote, "> ..."): documentation or a reply, not what failed.
static bool quoted_text(std::string_view line) { return !line.empty() && line[0] == '>'; }

// The class of a line that reads like a failure, or "" (cheap: a few finds per line).
static std::string_view failure_kind(std::string_view line) {
    auto has = [&](std::string_view s) { return line.find(s) != std::string_view::npos; };
    if (has("Traceback (most recent call last)") || has("arning")) return {};
    if (has("fatal error:") || has(": error:") || has("#error")) return "compiler error";
    if (has("Segmentation fault") || has("core dumped") || has("Bus error") ||
        has("Fatal Python error"))
        return "crash";
    if (has("NCCL WARN")) return "NCCL warning";
    if (has("NVRM: Xid")) return "kernel GPU error (Xid)";
    for (std::string_view marker : {std::string_view("Error: "), std::string_view("Exception: ")}) {
        std::size_t at = line.find(marker);
        if (at != std::string_view::npos && at > 0 &&
            std::isalnum(static_cast<unsigned char>(line[at - 1])))
            return "exception";
    }
    if (has("ERROR") || has("error:") || has("Error:")) return "error";
    if (has("FATAL") || has("fatal:") || has("Fatal")) return "fatal";
    if (has("exit code") || has("exit status") || has("exitcode") || has("failed with"))
        return "failed command";
    return {};
}

void LogScanner::State::note_failure(std::string_view kind) {
    FailureLine f{lines, std::string(kind), cut_utf8(norm, k_max_evidence_text)};
    if (first_failures.size() < k_max_failure_lines) {
        first_failures.push_back(std::move(f));
    } else if (last_failures.size() < k_max_failure_lines) {
        last_failures.push_back(std::move(f));
    } else {
        last_failures[last_next] = std::move(f);
        last_next = (last_next + 1) % k_max_failure_lines;
    }
}

void LogScanner::State::scan(std::string_view raw) {
    normalize_log_line(raw, norm);
    if (norm.empty() || shell_trace(norm)) return;
    const bool is_quoted = quoted_text(norm);
    if (!is_quoted)
        if (auto kind = failure_kind(norm); !kind.empty()) note_failure(kind);
    candidates.clear();
    sigs.anchors.scan(norm, [&](std::uint32_t id) {
        if (stamp[id] == lines) return;
        stamp[id] = lines;
        candidates.push_back(id);
    });
    if (candidates.empty()) return;
    // Template order: facts, then each signature's patterns before its context.
    std::sort(candidates.begin(), candidates.end());
    using Kind = ErrorSignatures::TemplateRef::Kind;
    std::size_t current_sig = sigs.signatures.size();
    bool triggered_here = false, context_here = false;
    for (std::uint32_t id : candidates) {
        const auto& ref = sigs.templates[id];
        if (ref.kind == Kind::Fact) {
            if (fact_done[ref.index]) continue;
            const LineTemplate& t = sigs.facts[ref.index];
            if (auto m = t.match(norm)) {
                for (auto& [k, v] : *m) global.emplace(k, v);
                bool all = true;
                for (const auto& n : t.names()) all = all && global.count(n);
                fact_done[ref.index] = all;
            }
            continue;
        }
        if (ref.signature != current_sig) {
            current_sig = ref.signature;
            triggered_here = context_here = false;
        }
        const ErrorSignature& sig = sigs.signatures[ref.signature];
        SignatureState& st = per_sig[ref.signature];
        if (ref.kind == Kind::Pattern) {
            if (triggered_here) continue;  // the first pattern that matches a line counts
            if (is_quoted && sig.vocabulary) continue;  // quoted text is not a failure
            auto m = sig.patterns[ref.index].match(norm);
            if (!m) continue;
            bool excluded = false;
            for (const auto& u : sig.unless) excluded = excluded || u.match(norm).has_value();
            if (excluded) continue;
            if (!st.triggered) st.first_line = lines;
            st.triggered = triggered_here = true;
            if (st.hits.size() < k_max_hits) st.hits.push_back({lines, norm});
            for (auto& [k, v] : *m) st.captures.emplace(k, v);
            continue;
        }
        if (ref.kind == Kind::Required) {
            auto m = sig.required[ref.index].match(norm);
            if (!m) continue;
            st.required_seen |= std::uint32_t{1} << ref.index;
            if (!triggered_here && !context_here && st.context_hits.size() < k_max_hits)
                st.context_hits.push_back({lines, norm});
            context_here = true;
            for (auto& [k, v] : *m) st.context_captures.emplace(k, v);
            continue;
        }
        auto m = sig.context[ref.index].match(norm);
        if (!m) continue;
        if (!triggered_here && !context_here && st.context_hits.size() < k_max_hits)
            st.context_hits.push_back({lines, norm});
        context_here = true;
        for (auto& [k, v] : *m) st.context_captures.emplace(k, v);
    }
}

LogScanner::LogScanner(const ErrorSignatures& signatures)
    : m_state(std::make_unique<State>(signatures)) {}

LogScanner::~LogScanner() = default;

void LogScanner::feed(std::string_view bytes) {
    State& s = *m_state;
    if (s.finished) return;
    std::size_t i = 0;
    if (s.after_cr && !bytes.empty() && bytes[0] == '\n') i = 1;  // the LF of a CR LF
    s.after_cr = false;
    while (i < bytes.size()) {
        std::size_t end = i;
        while (end < bytes.size() && bytes[end] != '\n' && bytes[end] != '\r') ++end;
        std::string_view piece = bytes.substr(i, end - i);
        if (end == bytes.size()) {  // the line goes on in the next piece
            if (s.line.size() < k_max_log_line)
                s.line.append(piece.substr(0, k_max_log_line - s.line.size()));
            s.line_seen += piece.size();
            return;
        }
        if (s.line_seen == 0) {
            s.end_line(piece);  // the whole line is in this piece: no copy
        } else {
            if (s.line.size() < k_max_log_line)
                s.line.append(piece.substr(0, k_max_log_line - s.line.size()));
            s.end_line(s.line);
            s.line.clear();
            s.line_seen = 0;
        }
        i = end + 1;
        if (bytes[end] == '\r') {
            if (i < bytes.size() && bytes[i] == '\n')
                ++i;
            else if (i == bytes.size())
                s.after_cr = true;
        }
    }
}

void LogScanner::finish() {
    State& s = *m_state;
    if (s.finished) return;
    s.finished = true;
    if (s.line_seen > 0) {
        s.end_line(s.line);
        s.line.clear();
        s.line_seen = 0;
    }
}

std::uint64_t LogScanner::lines() const { return m_state->lines; }

// ---- LogScanner: explanations ---------------------------------------------------------------

std::vector<Explanation> LogScanner::explanations(const nlohmann::json* fingerprint,
                                                  const KnowledgeBase& kb) const {
    const auto& sigs = m_state->sigs.signatures;
    std::vector<SignatureState> state = m_state->per_sig;  // folding edits a copy
    const auto& global = m_state->global;
    // A signature whose required lines did not all appear counts as not triggered.
    for (std::size_t s = 0; s < sigs.size(); ++s) {
        auto all =
            sigs[s].required.empty()
                ? 0u
                : static_cast<std::uint32_t>((std::uint64_t{1} << sigs[s].required.size()) - 1);
        if ((state[s].required_seen & all) != all) state[s].triggered = false;
    }

    // Superseded signatures fold into the highest-ranked signature that supersedes them.
    std::vector<bool> dropped(sigs.size(), false);
    auto index_of = [&](const std::string& id) {
        for (std::size_t k = 0; k < sigs.size(); ++k)
            if (sigs[k].id == id) return k;
        return sigs.size();
    };
    auto superseder = [&](std::size_t d) {
        std::size_t best = sigs.size();
        for (std::size_t t = 0; t < sigs.size(); ++t) {
            if (!state[t].triggered || t == d) continue;
            for (const auto& id : sigs[t].supersedes)
                if (id == sigs[d].id && (best == sigs.size() || sigs[t].rank > sigs[best].rank))
                    best = t;
        }
        return best;
    };
    for (std::size_t t = 0; t < sigs.size(); ++t)
        if (state[t].triggered)
            for (const auto& id : sigs[t].supersedes)
                if (auto d = index_of(id); d < sigs.size() && state[d].triggered) dropped[d] = true;
    for (std::size_t d = 0; d < sigs.size(); ++d) {
        if (!dropped[d]) continue;
        std::size_t target = superseder(d);
        while (target < sigs.size() && dropped[target]) target = superseder(target);
        if (target >= sigs.size()) continue;
        SignatureState& to = state[target];
        const SignatureState& from = state[d];
        to.context_hits.insert(to.context_hits.end(), from.hits.begin(), from.hits.end());
        to.context_hits.insert(to.context_hits.end(), from.context_hits.begin(),
                               from.context_hits.end());
        for (const auto& [k, v] : from.captures) to.merged_captures.emplace(k, v);
        for (const auto& [k, v] : from.context_captures) to.merged_captures.emplace(k, v);
        to.first_line = std::min(to.first_line, from.first_line);
    }

    std::vector<std::pair<std::size_t, Explanation>> found;  // signature index, explanation
    for (std::size_t s = 0; s < sigs.size(); ++s) {
        const SignatureState& st = state[s];
        if (!st.triggered || dropped[s]) continue;
        const ErrorSignature& sig = sigs[s];
        Explanation e;
        e.id = sig.id;
        e.title = sig.title;
        e.family = sig.family;
        e.vocabulary = sig.vocabulary;
        e.catalog = sig.catalog;
        e.generic = sig.generic();
        e.facts = st.captures;
        for (const auto& [k, v] : st.context_captures) e.facts.emplace(k, v);
        for (const auto& [k, v] : st.merged_captures) e.facts.emplace(k, v);
        for (const auto& [k, v] : global) e.facts.emplace(k, v);
        derive_common(e.facts);
        for (const auto& d : sig.derive) {
            if (d.kind != Derivation::Kind::Provider) {
                derive(d, e.facts, kb);
                continue;
            }
            std::string key = resolve(d.from, e.facts, nullptr);
            auto p = m_state->sigs.providers.find(key);
            if (p == m_state->sigs.providers.end()) continue;
            std::string text;
            for (const auto& v : p->second) text += (text.empty() ? "" : "; ") + v;
            e.facts.emplace("provider", text);
        }
        e.cause = render_template(sig.cause, e.facts).value_or(sig.title);
        e.fix = render_template(sig.fix, e.facts).value_or(std::string());

        std::vector<Hit> hits = st.hits;
        hits.insert(hits.end(), st.context_hits.begin(), st.context_hits.end());
        std::stable_sort(hits.begin(), hits.end(),
                         [](const Hit& a, const Hit& b) { return a.line < b.line; });
        std::uint64_t last = 0;
        for (const auto& h : hits) {
            if (h.line == last) continue;
            last = h.line;
            if (e.evidence.size() == k_max_evidence) break;
            e.evidence.push_back("L" + std::to_string(h.line) + ": " +
                                 cut_utf8(h.text, k_max_evidence_text));
        }

        if (fingerprint && fingerprint->is_object()) {
            for (const auto& c : sig.checks) {
                Verdict v = run_check(c, e.facts, *fingerprint, kb);
                if (!v.decided) continue;
                const std::string& note = v.confirmed ? c.confirmed_note : c.ruled_out_note;
                e.verdict = (v.confirmed ? "confirmed: " : "ruled out: ") + v.text +
                            (note.empty() ? "" : "; " + note);
                break;
            }
        }
        found.emplace_back(s, std::move(e));
    }

    std::stable_sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
        const auto &sa = sigs[a.first], &sb = sigs[b.first];
        if (sa.rank != sb.rank) return sa.rank > sb.rank;
        if (state[a.first].first_line != state[b.first].first_line)
            return state[a.first].first_line < state[b.first].first_line;
        return sa.id < sb.id;
    });
    // A signature names a cause; the meaning of a code answers only when none does.
    bool any_signature = false;
    for (const auto& f : found) any_signature = any_signature || !sigs[f.first].vocabulary;
    // A generic catalog entry only restates its tool's words (no meaning rule) or wraps the
    // error beneath it: listed only when nothing better answers.
    bool any_meaning = false;
    for (const auto& f : found) any_meaning = any_meaning || !sigs[f.first].generic();
    // One meaning a line: where several entries read the same line (Go's "outer: inner"
    // chains, a message in two catalogs), the highest-ranked one answers for it.
    std::set<std::uint64_t> meant_lines;
    std::vector<Explanation> out;
    for (auto& [s, e] : found) {
        if (any_signature && sigs[s].vocabulary) continue;
        if (any_meaning && sigs[s].generic()) continue;
        if (sigs[s].vocabulary && !meant_lines.insert(state[s].first_line).second) continue;
        out.push_back(std::move(e));
    }
    return out;
}

std::vector<FailureLine> LogScanner::failure_lines() const {
    const State& s = *m_state;
    std::vector<FailureLine> out = s.first_failures;
    for (std::size_t k = 0; k < s.last_failures.size(); ++k)
        out.push_back(s.last_failures[(s.last_next + k) % s.last_failures.size()]);
    return out;
}

// ---- one-shot entry points ------------------------------------------------------------------

std::vector<Explanation> explain_log(std::string_view log, const ErrorSignatures& signatures,
                                     const nlohmann::json* fingerprint, const KnowledgeBase& kb) {
    LogScanner scanner(signatures);
    scanner.feed(log);
    scanner.finish();
    return scanner.explanations(fingerprint, kb);
}

std::optional<Explanation> explain_error_text(std::string_view text,
                                              const ErrorSignatures& signatures,
                                              const KnowledgeBase& kb) {
    auto found = explain_log(text, signatures, nullptr, kb);
    if (found.empty() || found.front().generic) return std::nullopt;
    return std::move(found.front());
}

}  // namespace td
