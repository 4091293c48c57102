#pragma once
// `torchdock explain`: reads a failure log (a Python traceback, a container start failure,
// NCCL warnings) and names the root cause and the fix, with the versions taken from the log.
// The error signatures are data (data/error_signatures/*.json, one file per family); this
// file matches them. Pure: the log, the signatures, an optional fingerprint and the
// knowledge base are handed in; the log arrives in pieces (LogScanner), so a log of any
// size is read in bounded memory.
//
// Line templates (signature "patterns", "context", "unless", "requires" and the top-level
// "facts") are
// literal text with captures; no regular expressions, so matching is bounded on any input:
//   {name}          a run of [A-Za-z0-9._+-] (a version, a soname, a file name)
//   {name#}         such a run that starts with a digit (a version)
//   {name=prefix}   such a run that starts with `prefix` (which is part of the value)
//   {name*}         any text, as short as possible up to the next literal (or line end)
//   {{ and }}       literal braces
// Runs of blanks in a template match any run of blanks in the line. A template matches
// anywhere in a line, so prefixes (timestamps, "[rank3]:", Kubernetes and Slurm labels)
// do not matter. Lines end at "\n", "\r\n" or a lone "\r" (progress bars); only their first
// 4096 bytes are kept; they are stripped of ANSI escape sequences and control characters,
// and their blanks collapsed, before matching. Each line is first run through one
// Aho-Corasick pass over every template's longest literal (AnchorIndex), so the cost per
// line does not grow with the number of signatures.
//
// A signature triggers on a line that matches one of its patterns, unless that line also
// matches one of its "unless" templates; it is reported only when each of its "requires"
// templates matched some line of the log; "context" templates add facts and evidence. A
// signature that triggered folds the ones it "supersedes" into itself; the rest are listed
// by rank (higher first: the root cause before what follows from it), then by first line.
//
// Cause and fix templates use {name} for facts (captures, facts of the whole log,
// knowledge-base derivations); text inside [[ ... ]] (nestable) is dropped when a fact it
// names is unknown. A {name} outside [[ ]] must be captured by every trigger pattern.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnose/anchor_index.hpp"
#include "core/diagnose/log_template.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "util/result.hpp"

namespace td {

// How a fingerprint confirms or rules out a signature (closed set of kinds).
struct SignatureCheck {
    enum class Kind {
        UnresolvedSoname,  // `soname` (template) in fingerprint.unresolved[].soname
        DriverSupports,    // fingerprint driver's CUDA vs the first known of `from`
        ShmMin,            // fingerprint.shm_bytes vs `min_bytes`
        GpuArch,           // fingerprint gpus[].cc vs the first known arch list of `from`
        NoDriver,          // fingerprint has no driver
        DatacenterGpu,     // fingerprint GPUs the knowledge base knows as not data-center
        CudnnRuntime,      // fingerprint torch.cudnn vs the compiled cuDNN (`from`: major, minor)
        MajorDiffers,      // major of the first known of `from` vs of `against`
    };
    Kind kind = Kind::NoDriver;
    std::string soname;                // UnresolvedSoname
    std::vector<std::string> from;     // fact names, or "fp:a.b" for fingerprint paths
    std::vector<std::string> against;  // MajorDiffers
    bool compare_minor = false;        // DriverSupports: major.minor (true) or major only
    bool absent_confirms = false;      // DriverSupports / NoDriver: no driver -> confirmed
    bool present_rules_out = true;     // NoDriver: a driver -> ruled out
    std::int64_t min_bytes = 0;        // ShmMin
    std::string confirmed_note, ruled_out_note;  // appended to the verdict
};

// A knowledge-base lookup that adds facts (closed set of kinds; outputs are fixed names).
struct Derivation {
    enum class Kind {
        SonameMajor,           // from soname "libcudart.so.11.0" -> major "11"
        MinDriverForCuda,      // -> need_cuda, min_driver, compat_driver
        CudaFromDriverApi,     // 12040 -> found_cuda "12.4"
        TorchVariantsForSm,    // sm "120" or cc "12.0" -> sm_cc, fits
        TorchForCudnnMajor,    // cuDNN major -> cudnn_torch
        TorchVariantsForCuda,  // CUDA version -> cuda_variants (same x.y, else same major)
        NewestTorchForDriver,  // driver CUDA x.y -> fitting_torch "2.6.0+cu124"
        OomSplit,              // from: requested, reserved-but-unallocated (sizes "2.00 GiB")
                               // -> fragmented (the cache could hold it) or too_big
        CudnnDotted,           // from: compiled, runtime ints (7102) -> compiled_dotted, ...
        NvccForArch,           // arch "86" -> arch_cuda: the CUDA releases whose nvcc has it
        Provider,              // a soname, header or command -> provider: what provides it
                               // (ErrorSignatures::providers, from wheel RECORDs and dpkg)
        GlibcDistros,          // "GLIBC_2.34" or "2.34" -> glibc_distros: the knowledge base's
                               // OSes whose glibc is at least that
    };
    Kind kind = Kind::SonameMajor;
    std::vector<std::string> from;  // fact names, first known wins
};

struct ErrorSignature {
    std::string id, title;
    // A vocabulary entry (data/vocabularies/*.json: what a code or message means by its
    // definition) rather than a signature of a root cause: it answers only when no signature
    // does, and its cause says it is the meaning of the code.
    bool vocabulary = false;
    // A catalog entry (data/catalogs/*.json, generated from a tool's own sources by
    // scripts/catalogs/): one message the tool prints and its meaning; a vocabulary entry too.
    bool catalog = false;
    // A catalog entry ranked below this restates its tool's words only (a message no meaning
    // rule names) or wraps the error beneath it (Go's "failed to solve: ...").
    static constexpr int k_generic_catalog_rank = 15;
    bool generic() const { return catalog && rank < k_generic_catalog_rank; }
    std::string family;                   // the file's "family": import, driver, nccl, ...
    int rank = 0;                         // higher = more specific / more root-cause-like
    std::vector<LineTemplate> patterns;   // any of these lines triggers the signature
    std::vector<LineTemplate> unless;     // ...unless that line also matches one of these
    std::vector<LineTemplate> required;   // "requires": each must match some line of the log
    std::vector<LineTemplate> context;    // once triggered, these lines add evidence and facts
    std::vector<std::string> supersedes;  // ids dropped (merged into this one) when both match
    std::vector<Derivation> derive;
    std::string cause, fix;
    std::vector<SignatureCheck> checks;
    std::vector<std::string> source;
};

struct ErrorSignatures {
    // Parses the signature files: (name, text) pairs, e.g. "data/error_signatures/nccl.json".
    // Each file is an object {"schema": 1, "family": ..., "facts": [...], "signatures": [...]};
    // ids are unique across files and "supersedes" may name a signature of another file.
    // Errors name the file and the JSON path.
    static Result<ErrorSignatures> parse_files(
        const std::vector<std::pair<std::string, std::string>>& files);
    // One file holding everything (named "error_signatures.json" in errors).
    static Result<ErrorSignatures> parse(const std::string& text);

    std::vector<LineTemplate> facts;  // captured anywhere in the log, first value wins
    std::vector<ErrorSignature> signatures;
    // What provides a missing thing: soname, header or command -> "PyPI <wheel> <version>",
    // "Debian <package> <version>", ... (files whose "tier" is "providers").
    std::map<std::string, std::vector<std::string>> providers;

    const ErrorSignature* find(std::string_view id) const;

    // Every fact, pattern, context and required template, numbered in that order (facts
    // first, then each signature's patterns, context and required), and the anchor index
    // over their literals.
    struct TemplateRef {
        enum class Kind { Fact, Pattern, Context, Required } kind = Kind::Fact;
        std::uint32_t signature = 0, index = 0;
    };
    std::vector<TemplateRef> templates;
    AnchorIndex anchors;
    void build_index();  // parse() calls it; again after editing `facts` or `signatures`
};

struct Explanation {
    std::string id, title, family, cause, fix;
    bool vocabulary = false;  // the meaning of a code or message, not a signature's cause
    bool catalog = false;     // ...from a tool's message catalog
    bool generic = false;     // ...that only restates the tool's words (ErrorSignature::generic)
    // "root cause" (a signature with its evidence) or "meaning" (a vocabulary or catalog
    // entry: what the tool says happened and what usually causes it).
    const char* grade() const { return vocabulary ? "meaning" : "root cause"; }
    std::vector<std::string> evidence;         // the log lines that matched, "L12: ..."
    std::map<std::string, std::string> facts;  // captured and derived values
    std::string verdict;                       // "" | "confirmed: ..." | "ruled out: ..."
};

// A line the scanner took for a failure (an exception, an error or fatal line, a failed
// command), for the honest answer when nothing is recognised: shown, with its class, not
// explained. Shell-trace lines ("+ cmd") and quoted text ("> ...") are never failures.
struct FailureLine {
    std::uint64_t line = 0;
    std::string kind;  // "python exception", "compiler error", "error", "fatal", ...
    std::string text;
};

// Scans a log handed in pieces of any size (blocks of a file, a pipe, one string) and keeps
// only what an explanation needs: the first lines that matched each signature (bounded),
// the values captured, and the line count. Memory does not grow with the log's size.
// `signatures` must outlive the scanner.
class LogScanner {
  public:
    explicit LogScanner(const ErrorSignatures& signatures);
    ~LogScanner();
    LogScanner(const LogScanner&) = delete;
    LogScanner& operator=(const LogScanner&) = delete;

    // The next bytes of the log. A line's bytes past k_max_log_line are skipped unread.
    void feed(std::string_view bytes);
    // The end of the log: a last line without a line end is scanned. Idempotent.
    void finish();
    // Lines seen so far ("a\nb" is 2 lines, "a\n" is 1, "" is 0; a lone CR ends a line).
    std::uint64_t lines() const;

    // Most specific first; one entry per signature; empty when nothing is recognised.
    // Call after finish().
    // Signatures answer first; vocabulary entries only when no signature matched.
    std::vector<Explanation> explanations(const nlohmann::json* fingerprint,
                                          const KnowledgeBase& kb) const;
    // The first and the last lines taken for failures (at most k_max_failure_lines each
    // side, in log order), whatever was recognised.
    std::vector<FailureLine> failure_lines() const;
    static constexpr std::size_t k_max_failure_lines = 6;

  private:
    struct State;
    std::unique_ptr<State> m_state;
};

// The whole log at once (a LogScanner fed one piece).
std::vector<Explanation> explain_log(std::string_view log, const ErrorSignatures& signatures,
                                     const nlohmann::json* fingerprint, const KnowledgeBase& kb);

// The best explanation of one error text, for other commands that hold an error message
// rather than a log: a Python exception line from an import, a probe's failure reason. The
// same signatures, cause and fix as `explain`; nullopt when nothing knows the text, or only
// a generic catalog entry (the tool's words, which the text already is).
std::optional<Explanation> explain_error_text(std::string_view text,
                                              const ErrorSignatures& signatures,
                                              const KnowledgeBase& kb);

}  // namespace td
