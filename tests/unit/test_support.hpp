#pragma once
// Shared helpers for unit tests: the real knowledge base from the source tree, and
// one-call manifest parsing/expansion.
#include <functional>
#include <string>
#include <vector>

#include "core/diagnose/explain.hpp"
#include "core/diagnose/fingerprint_diff.hpp"
#include "core/json/diagnostics.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "core/render/python_lock.hpp"
#include "core/render/render_plan.hpp"
#include "core/validate/checks.hpp"
#include "core/validate/probe_run.hpp"

namespace td::test {

const KnowledgeBase& real_kb();
// The error signatures and vocabularies of the source tree's data/.
const ErrorSignatures& real_signatures();
std::string source_path(const std::string& rel);

// Plans a single manifest text; returns the plan (problems or files).
RenderPlan plan_one(const std::string& manifest_text, const std::string& file = "manifests/t.json");

// tests/data/golden.json planned with its lock file; `python_lock` false drops the lock's
// Python set.
RenderPlan golden_plan(bool python_lock = true);

// All problem messages of a plan joined by newlines (for CHECK_THAT(..., ContainsSubstring)).
std::string problems_text(const RenderPlan& plan);

// Plans a manifest text that must be refused: checks that it has problems and renders no
// file, and returns problems_text.
std::string refusal(const std::string& manifest_text);

// A probe's answer as its program would print it ({"probe", "schema": 1, "status", "data"}),
// parsed the way validate parses probe output.
ProbeRun ran(const std::string& name, const nlohmann::json& data,
             const std::string& status = "pass");

// The text of a file of the source tree (a test failure when it cannot be read).
std::string source_text(const std::string& rel);

// tests/data/fleet/node-check-NODE.json: node-check's report of NODE, parsed.
nlohmann::json node_check_report(const std::string& node);

// Every diagnostic of `d` formatted, one a line.
std::string all_messages(const Diagnostics& d);

// True when `fn` returns in a child process instead of crashing it (SIGSEGV, SIGABRT...).
bool runs_without_crash(const std::function<void()>& fn);

// The difference at `path`, or nullptr.
const FingerprintDifference* difference_at(const std::vector<FingerprintDifference>& d,
                                           const std::string& path);

// The locked package `name`, or nullptr.
const LockedPackage* package_named(const std::vector<LockedPackage>& ps, const std::string& name);

// A manifest text with this base (its JSON) and matrix (its JSON), `extra` members after it.
std::string matrix_manifest(const std::string& base, const std::string& matrix,
                            const std::string& extra = "");

// A sha256 hash that has the right form ("sha256:aaaa...").
extern const std::string k_fake_hash;

// The result of check `id` among `all` (a test failure when there is none).
const CheckResult& check_of(const std::vector<CheckResult>& all, const std::string& id);
// Of a temporary (check_of(evaluate(...), id)): a copy, which a reference then keeps alive.
CheckResult check_of(std::vector<CheckResult>&& all, const std::string& id);

}  // namespace td::test
