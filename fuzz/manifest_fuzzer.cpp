// libFuzzer target: any bytes as a manifest must yield either variants or diagnostics,
// never a crash, hang or sanitizer report; a refused manifest renders nothing.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/render/render_plan.hpp"
#include "engine/project_loader.hpp"

namespace {
const td::KnowledgeBase& kb() {
    static const td::KnowledgeBase loaded = [] {
        auto r = td::engine::load_knowledge_base(std::string(TORCHDOCK_SOURCE_DIR) + "/data");
        if (!r) std::abort();
        return r.value();
    }();
    return loaded;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    td::RenderPlan plan =
        td::plan_render({td::ManifestSource{"fuzz.json", text, std::nullopt, std::nullopt}}, kb());
    if (!plan.problems.empty() && !plan.files.empty()) std::abort();
    for (const auto& d : plan.problems)
        if (d.message.empty()) std::abort();
    return 0;
}
