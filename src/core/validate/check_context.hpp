#pragma once
// Inside `evaluate`: what every check needs to read its evidence and record its verdict.
// The static tier is static_checks.cpp, the GPU tier gpu_checks.cpp. Pure.
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "core/validate/checks.hpp"

namespace td::validate_detail {

class CheckContext {
  public:
    CheckContext(const ValidationInput& in, const KnowledgeBase& kb) : m_in(in), m_kb(kb) {}

    const ValidationInput& input() const { return m_in; }
    const KnowledgeBase& kb() const { return m_kb; }
    std::vector<CheckResult> take_results() { return std::move(m_out); }

    // The run of probe `name`, or nullptr when it was not attempted.
    const ProbeRun* probe(const std::string& name) const;
    // The probe's data when it is evidence (ProbeRun::usable), else an empty object.
    const nlohmann::json& data(const std::string& name) const;
    // The expectation `key`, or "". Each key read is remembered until the next `guarded`
    // check function starts: a failure `add`ed meanwhile that compared a key of the user's own
    // --expect carries it (CheckResult::user_expectations), so no waiver hides it.
    std::string expected(const std::string& key) const;
    // Why a probe gives no data, for messages: its problem, or the reason it reported.
    std::string why_missing(const std::string& name) const;

    // True when torch was found but `import torch` failed (the torch probe says so).
    bool torch_import_failed() const;
    // "torch does not import: <error>" for the checks that need torch.
    std::string torch_import_failure() const;

    void add(const std::string& id, const std::string& status, const std::string& observed,
             const std::string& expect, const std::string& message, const std::string& fix = {},
             const std::string& severity = "error");
    void skip(const std::string& id, const std::string& reason) { add(id, "skip", "", "", reason); }
    // Runs one check function; a probe answer of an unexpected shape (a string where a
    // boolean belongs) that makes it throw is recorded, and `evaluate` turns every check it
    // did not emit into an error naming it. Nothing escapes: the other checks, and the other
    // images of a run, keep their results.
    template <class F>
    void guarded(F&& check) {
        m_keys_read.clear();
        try {
            check(*this);
        } catch (const std::exception& e) {
            if (m_shape_error.empty()) m_shape_error = e.what();
        }
    }
    const std::string& shape_error() const { return m_shape_error; }

  private:
    const ValidationInput& m_in;
    const KnowledgeBase& m_kb;
    std::vector<CheckResult> m_out;
    std::string m_shape_error;
    mutable std::set<std::string> m_keys_read;
};

// A JSON member as text ("" when absent or null; numbers and booleans printed).
std::string str(const nlohmann::json& j, const char* key);

// How an observed version meets an expectation, read as a prefix: "9" and "9.10" match
// 9.10.2.21; "9.10.2.99" does not. Unverifiable: the observed value has fewer parts than the
// expectation and agrees on all of them (a library reports 9.10.2, 9.10.2.21 is expected).
enum class VersionMatch { Equal, Differs, Unverifiable };
VersionMatch match_version(const std::string& have, const std::string& want);

// The version of an installed distribution the torch probe saw ("nvidia-cudnn-cu12"), "".
std::string distribution_version(const CheckContext& ctx, const std::string& name);

// The distribution that installed the files of a library family as torch loads them, with
// its version: ("nvidia-cudnn-cu12", "9.10.2.21") when torch's libcudnn lies in that wheel's
// nvidia/cudnn/lib; empty when torch loads it from elsewhere.
std::pair<std::string, std::string> wheel_of_loaded(const CheckContext& ctx,
                                                    const std::string& family);

// TD119 (torch_import_check.cpp). Returns why the other torch checks cannot run, or "" when
// torch imports.
std::string torch_imports(CheckContext& ctx);
// The torch probe's stage of importing torchvision or torchaudio, after torch imported.
bool companion_stage(const std::string& stage);
// ", found through PYTHONPATH=..." when PYTHONPATH puts `site` ahead of the interpreter's own
// site directories (that variable decides which copy runs); "" otherwise.
std::string through_pythonpath(const CheckContext& ctx, const std::string& site);

void judge_static_tier(CheckContext& ctx);
void judge_torch(CheckContext& ctx);     // TD118-TD124, part of the static tier
void judge_kernels(CheckContext& ctx);   // TD125-TD126, part of the static tier
void judge_platform(CheckContext& ctx);  // TD132-TD133, part of the static tier
void judge_runtime(CheckContext& ctx);   // TD112, TD113, TD127, TD128, TD131, TD134
void judge_gpu_tier(CheckContext& ctx);

}  // namespace td::validate_detail
