#include "test_support.hpp"

#include <catch2/catch_test_macros.hpp>
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

}  // namespace td::test
