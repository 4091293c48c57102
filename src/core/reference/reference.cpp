#include "core/reference/reference.hpp"

#include <algorithm>

#include "core/diagnose/finding_catalog.hpp"
#include "core/validate/checks.hpp"
#include "core/validate/probe_run.hpp"
#include "core/validate/waivers.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

std::string check_waive_text(const CheckInfo& c) {
    if (!c.not_waivable.empty()) return "not waivable: " + c.not_waivable + ".";
    return "`torchdock validate --waive " + c.id + "=REASON`, or `\"waivers\": {\"" + c.id +
           "\": \"REASON\"}` in the settings file (torchdock.json) or in the manifest (rendered "
           "as the image label `" +
           k_waive_label_prefix + c.id +
           "`). A waived check is reported as `waived` with its outcome and reason, never as "
           "passed, and does not fail the run.";
}

std::string finding_waive_text(const FindingInfo& f) {
    if (!f.not_waivable.empty()) return "not waivable: " + f.not_waivable + ".";
    if (f.severity == "info") return "nothing to waive: an info finding never fails doctor.";
    return "doctor has no waivers yet: fix the environment, or read the finding as accepted.";
}

std::string join_templates(const std::vector<LineTemplate>& ts) {
    std::vector<std::string> out;
    for (const auto& t : ts) out.push_back("`" + t.text() + "`");
    return join(out, "; ");
}

}  // namespace

std::vector<ReferenceEntry> reference_entries(const ErrorSignatures& signatures) {
    std::vector<ReferenceEntry> out;
    for (const auto& c : check_catalog()) {
        std::vector<std::string> programs;
        for (const auto& p : c.evidence) programs.push_back(probe_program(p));
        out.push_back({c.id,
                       "check",
                       c.name,
                       c.meaning,
                       "validate check, " + c.tier + " tier" +
                           (programs.empty() ? "" : "; rests on " + join(programs, ", ")),
                       c.meaning,
                       c.why,
                       c.reads,
                       c.fix,
                       check_waive_text(c),
                       {}});
    }
    for (const auto& f : finding_catalog())
        out.push_back({f.id,
                       "finding",
                       f.title,
                       f.title,
                       "doctor finding, severity " + f.severity,
                       f.what,
                       f.why,
                       f.reads,
                       f.fix,
                       finding_waive_text(f),
                       {}});
    std::vector<const ErrorSignature*> sigs;
    // Signatures only: vocabulary entries (data/vocabularies/) are meanings of codes and
    // messages from their definitions, each with its source there, not causes torchdock names.
    for (const auto& s : signatures.signatures)
        if (!s.vocabulary) sigs.push_back(&s);
    std::sort(sigs.begin(), sigs.end(), [](auto* a, auto* b) { return a->id < b->id; });
    for (const auto* s : sigs) {
        std::string evidence = "a log line matching " + join_templates(s->patterns);
        if (!s->unless.empty()) evidence += ", unless it matches " + join_templates(s->unless);
        if (!s->required.empty())
            evidence += "; the log must also have " + join_templates(s->required);
        out.push_back(
            {s->id, "signature", s->title, s->title,
             "explain signature, family " + s->family + ", rank " + std::to_string(s->rank),
             "`torchdock explain` names this cause when a log line matches one of its "
             "patterns (see evidence)",
             s->cause, evidence, s->fix,
             "nothing to waive: explain names a cause and passes or fails nothing.", s->source});
    }
    return out;
}

const ReferenceEntry* find_reference(const std::vector<ReferenceEntry>& entries,
                                     const std::string& id) {
    std::string want = id;
    for (char& c : want)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    for (const auto& e : entries)
        if (e.id == want) return &e;
    return nullptr;
}

std::string reference_command(const std::string& id) { return "torchdock checks " + id; }
std::string reference_anchor(const std::string& id) { return "docs/checks.md#" + to_lower(id); }

}  // namespace td
