// `explain`: scans a log line by line against the signatures, folds superseded ones into
// the signature that explains them, and assembles each explanation (facts, cause, fix,
// evidence, the fingerprint's verdict). Facts are explain_facts.cpp, verdicts
// explain_verdict.cpp.
#include "core/diagnose/explain.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

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

// ---- log scanning -------------------------------------------------------------------------

struct Hit {
    std::size_t line = 0;
    std::string text;
};

struct SignatureState {
    bool triggered = false;
    std::size_t first_line = 0;
    std::vector<Hit> hits;          // trigger lines (up to k_max_hits)
    std::vector<Hit> context_hits;  // context lines (up to k_max_hits)
    std::map<std::string, std::string> captures, context_captures, merged_captures;
};

}  // namespace

// ---- explain_log ----------------------------------------------------------------------------

std::vector<Explanation> explain_log(std::string_view log, const ErrorSignatures& signatures,
                                     const nlohmann::json* fingerprint, const KnowledgeBase& kb) {
    const auto& sigs = signatures.signatures;
    std::vector<SignatureState> state(sigs.size());
    std::map<std::string, std::string> global;
    std::vector<bool> fact_done(signatures.facts.size(), false);

    std::size_t line_no = 0;
    for (std::size_t start = 0; start < log.size();) {
        std::size_t nl = log.find('\n', start);
        std::size_t stop = nl == std::string_view::npos ? log.size() : nl;
        ++line_no;
        std::string_view raw = log.substr(start, stop - start);
        start = nl == std::string_view::npos ? log.size() : nl + 1;
        std::string line = normalize_log_line(raw);
        if (line.empty()) continue;

        for (std::size_t f = 0; f < signatures.facts.size(); ++f) {
            if (fact_done[f]) continue;
            if (auto m = signatures.facts[f].match(line)) {
                for (auto& [k, v] : *m) global.emplace(k, v);
                bool all = true;
                for (const auto& n : signatures.facts[f].names()) all = all && global.count(n);
                fact_done[f] = all;
            }
        }
        for (std::size_t s = 0; s < sigs.size(); ++s) {
            SignatureState& st = state[s];
            bool triggered_here = false;
            for (const auto& p : sigs[s].patterns) {
                auto m = p.match(line);
                if (!m) continue;
                if (!st.triggered) st.first_line = line_no;
                st.triggered = triggered_here = true;
                if (st.hits.size() < k_max_hits) st.hits.push_back({line_no, line});
                for (auto& [k, v] : *m) st.captures.emplace(k, v);
                break;
            }
            bool context_here = false;
            for (const auto& c : sigs[s].context) {
                auto m = c.match(line);
                if (!m) continue;
                if (!triggered_here && !context_here && st.context_hits.size() < k_max_hits)
                    st.context_hits.push_back({line_no, line});
                context_here = true;
                for (auto& [k, v] : *m) st.context_captures.emplace(k, v);
            }
        }
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
        e.facts = st.captures;
        for (const auto& [k, v] : st.context_captures) e.facts.emplace(k, v);
        for (const auto& [k, v] : st.merged_captures) e.facts.emplace(k, v);
        for (const auto& [k, v] : global) e.facts.emplace(k, v);
        derive_common(e.facts);
        for (const auto& d : sig.derive) derive(d, e.facts, kb);
        e.cause = render_template(sig.cause, e.facts).value_or(sig.title);
        e.fix = render_template(sig.fix, e.facts).value_or(std::string());

        std::vector<Hit> hits = st.hits;
        hits.insert(hits.end(), st.context_hits.begin(), st.context_hits.end());
        std::stable_sort(hits.begin(), hits.end(),
                         [](const Hit& a, const Hit& b) { return a.line < b.line; });
        std::size_t last = 0;
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
    std::vector<Explanation> out;
    for (auto& [s, e] : found) out.push_back(std::move(e));
    return out;
}

}  // namespace td
