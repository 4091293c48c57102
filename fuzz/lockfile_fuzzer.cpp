// libFuzzer target: any bytes as a lock file (manifests/<family>.lock.json) must give a lock
// or diagnostics, never a crash (adversarial-2 N8: a Python entry without a required key
// crashed render, list and lock --check). The same bytes go through plan_render as the lock
// of two manifests (one hash-lockable, one not), and through uv's output parser.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/render/lockfile.hpp"
#include "core/render/python_lock.hpp"
#include "core/render/render_plan.hpp"
#include "engine/files.hpp"
#include "fuzz_support.hpp"

namespace {

const char* const k_pypi_manifest = R"({"schema": 1, "name": "pypi", "image": "t/pypi",
  "base": "os-pip", "wheel_index": "pypi",
  "matrix": {"torch": ["2.9.1"], "cuda": ["cu128"], "os": ["debian12"]},
  "pip": ["tqdm==4.67.1"], "jupyter": "4.3.4"})";
// The golden manifest (tests/data/golden.json), whose lock is one of the seeds.
const std::string& golden_manifest() {
    static const std::string text = [] {
        auto r = td::engine::read_text_file(std::string(TORCHDOCK_SOURCE_DIR) +
                                            "/tests/data/golden.json");
        if (!r) std::abort();
        return r.value();
    }();
    return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    td::Diagnostics diags("fuzz.lock.json");
    td::LockFile lock = td::parse_lockfile(text, diags);
    for (const auto& d : diags.items())
        if (d.message.empty()) std::abort();
    if (diags.empty()) {
        // A lock that parses renders back to a lock that parses to the same thing.
        std::map<std::string, td::LockEntry> entries;
        for (const auto& [ref, digest] : lock.images) entries[ref] = {digest, ""};
        td::Diagnostics again("again.lock.json");
        td::LockFile back = td::parse_lockfile(td::render_lockfile(entries, lock.python), again);
        if (!again.empty() || back.images != lock.images ||
            back.python.size() != lock.python.size())
            std::abort();
    }
    for (const std::string& manifest : {std::string(k_pypi_manifest), golden_manifest()}) {
        td::RenderPlan plan = td::plan_render(
            {td::ManifestSource{"m.json", manifest, "m.lock.json", text}}, td::fuzz::kb());
        if (!plan.problems.empty() && !plan.files.empty()) std::abort();
        if (!diags.empty() && plan.problems.empty()) std::abort();  // a bad lock is never used
    }
    auto uv = td::parse_uv_requirements(text);
    if (uv) {
        td::PythonLockInputs in{{"torch==2.9.1"}, "3.11", "x86_64-manylinux_2_36", ""};
        for (const auto& o : td::check_lock_closure(in, uv.value()))
            if (o.why.empty()) std::abort();
    } else if (uv.error().message.empty()) {
        std::abort();
    }
    return 0;
}
