#include "test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <csignal>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/files.hpp"
#include "engine/project_loader.hpp"

namespace td::test {

std::string source_path(const std::string& rel) {
    return std::string(TORCHDOCK_SOURCE_DIR) + "/" + rel;
}

const KnowledgeBase& real_kb() {
    static const KnowledgeBase kb = [] {
        auto loaded = engine::load_knowledge_base(source_path("data"));
        if (!loaded) throw std::runtime_error(loaded.error().message);
        return loaded.value();
    }();
    return kb;
}

const ErrorSignatures& real_signatures() {
    static const ErrorSignatures s = [] {
        auto parsed = engine::load_error_signatures(source_path("data"));
        if (!parsed) throw std::runtime_error(parsed.error().message);
        return parsed.value();
    }();
    return s;
}

RenderPlan plan_one(const std::string& manifest_text, const std::string& file) {
    return plan_render({ManifestSource{file, manifest_text, std::nullopt, std::nullopt}},
                       real_kb());
}

RenderPlan golden_plan(bool python_lock) {
    auto text = engine::read_text_file(source_path("tests/data/golden.json"));
    auto lock = engine::read_text_file(source_path("tests/data/golden.lock.json"));
    if (!text || !lock) throw std::runtime_error("tests/data/golden.json or its lock is missing");
    auto doc = nlohmann::json::parse(lock.value());
    if (!python_lock) doc.erase("python");
    return plan_render({ManifestSource{"tests/data/golden.json", text.value(),
                                       "tests/data/golden.lock.json", doc.dump()}},
                       real_kb());
}

std::string problems_text(const RenderPlan& plan) {
    std::string out;
    for (const auto& d : plan.problems) out += format_diagnostic(d) + "\n";
    return out;
}

std::string refusal(const std::string& manifest_text) {
    auto plan = plan_one(manifest_text);
    CHECK_FALSE(plan.problems.empty());
    CHECK(plan.files.empty());
    return problems_text(plan);
}

ProbeRun ran(const std::string& name, const nlohmann::json& data, const std::string& status) {
    nlohmann::json line = {
        {"probe", name}, {"schema", 1}, {"status", status}, {"reason", ""}, {"data", data}};
    int code = status == "pass" ? 0 : status == "fail" ? 1 : status == "waived" ? 2 : 3;
    return parse_probe_output(name, line.dump() + "\n", code);
}

const CheckResult& check_of(const std::vector<CheckResult>& all, const std::string& id) {
    for (const auto& c : all)
        if (c.id == id) return c;
    FAIL("no check " << id);
    return all.front();
}

CheckResult check_of(std::vector<CheckResult>&& all, const std::string& id) {
    return check_of(static_cast<const std::vector<CheckResult>&>(all), id);
}

const std::string k_fake_hash = "sha256:" + std::string(64, 'a');

std::string source_text(const std::string& rel) {
    auto text = engine::read_text_file(source_path(rel));
    REQUIRE(text);
    return text.value();
}

nlohmann::json node_check_report(const std::string& node) {
    return nlohmann::json::parse(source_text("tests/data/fleet/node-check-" + node + ".json"));
}

std::string all_messages(const Diagnostics& d) {
    std::string out;
    for (const auto& item : d.items()) out += format_diagnostic(item) + "\n";
    return out;
}

// Runs `fn` in a forked copy of this process.
bool runs_without_crash(const std::function<void()>& fn) {
    pid_t child = ::fork();
    if (child < 0) return false;
    if (child == 0) {
        // Let a crash kill the child instead of Catch2's handlers reporting it a second time.
        for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) ::signal(sig, SIG_DFL);
        fn();
        ::_exit(0);
    }
    int status = 0;
    if (::waitpid(child, &status, 0) != child) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

const FingerprintDifference* difference_at(const std::vector<FingerprintDifference>& d,
                                           const std::string& path) {
    for (const auto& x : d)
        if (x.path == path) return &x;
    return nullptr;
}

const LockedPackage* package_named(const std::vector<LockedPackage>& ps, const std::string& name) {
    for (const auto& p : ps)
        if (p.name == name) return &p;
    return nullptr;
}

std::string matrix_manifest(const std::string& base, const std::string& matrix,
                            const std::string& extra) {
    return R"({"schema": 1, "name": "t", "image": "torchdock/t", "base": ")" + base +
           R"(", "matrix": )" + matrix + extra + "}";
}

}  // namespace td::test
