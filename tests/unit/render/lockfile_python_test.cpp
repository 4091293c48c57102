// The Python section of lock files: every missing key and wrong type is a diagnostic with its
// JSON path (adversarial-2 N8: these crashed render, list and lock --check with SIGSEGV), and
// the dependency graph a lock records (item 9: a package outside the resolved closure is
// refused, naming it).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <csignal>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/render/lockfile.hpp"
#include "core/render/python_lock.hpp"
#include "core/render/render_plan.hpp"
#include "engine/files.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

// A valid lock with one variant "v" locking one package "a" (asked for by the inputs).
nlohmann::json valid_lock() {
    return nlohmann::json::parse(R"({"schema": 1, "images": {}, "python": {"v": {
      "inputs": {"requirements": ["a==1"], "python": "3.11", "platform": "x86_64-manylinux_2_36",
                 "torch_index": ""},
      "packages": {"a": {"version": "1", "hashes": [")" +
                                 test::k_fake_hash + R"("], "required_by": []}}}}})");
}

struct Parsed {
    std::string messages;
    std::vector<Diagnostic> items;
    bool locked = false;  // variant "v" came out with a lock
};

// Parses `text` in a child first (a crash fails the test instead of killing the run), then
// here.
Parsed parse_safely(const std::string& text) {
    Parsed out;
    bool survived = test::runs_without_crash([&] {
        Diagnostics diags("m/f.lock.json");
        (void)parse_lockfile(text, diags);
    });
    INFO(text);
    REQUIRE(survived);
    Diagnostics diags("m/f.lock.json");
    LockFile lock = parse_lockfile(text, diags);
    out.messages = test::all_messages(diags);
    out.items = diags.items();
    out.locked = lock.python.count("v") != 0;
    return out;
}

PythonLockInputs real_inputs() {
    return {{"torch==2.9.1", "torchvision==0.24.1", "torchaudio==2.9.1", "jupyterlab==4.3.4"},
            "3.11",
            "x86_64-manylinux_2_36",
            ""};
}

std::vector<std::string> outside_names(const std::vector<OutsideClosure>& o) {
    std::vector<std::string> names;
    for (const auto& x : o) names.push_back(x.name);
    return names;
}

}  // namespace

TEST_CASE("lock file N8: the valid base lock parses (so the cases below test one change each)") {
    auto p = parse_safely(valid_lock().dump());
    INFO(p.messages);
    CHECK(p.messages.empty());
    CHECK(p.locked);
}

TEST_CASE("lock file N8: each missing required key of a Python entry is named with its path",
          "[regression]") {
    struct Case {
        std::string pointer;  // the key removed
        std::string path;     // where the diagnostic points
        std::string key;
    };
    const std::vector<Case> cases = {
        {"/python/v/inputs", "$.python.v", "inputs"},
        {"/python/v/packages", "$.python.v", "packages"},
        {"/python/v/inputs/requirements", "$.python.v.inputs", "requirements"},
        {"/python/v/inputs/python", "$.python.v.inputs", "python"},
        {"/python/v/inputs/platform", "$.python.v.inputs", "platform"},
        {"/python/v/inputs/torch_index", "$.python.v.inputs", "torch_index"},
        {"/python/v/packages/a/version", "$.python.v.packages.a", "version"},
        {"/python/v/packages/a/hashes", "$.python.v.packages.a", "hashes"},
    };
    for (const auto& c : cases) {
        auto doc = valid_lock();
        nlohmann::json::json_pointer ptr(c.pointer);
        doc[ptr.parent_pointer()].erase(ptr.back());
        auto p = parse_safely(doc.dump(2));
        INFO(c.pointer << "\n" << p.messages);
        CHECK_THAT(p.messages,
                   ContainsSubstring(c.path + ": missing required key \"" + c.key + "\""));
        CHECK_THAT(p.messages, ContainsSubstring("(required here: "));
        CHECK(p.messages.starts_with("m/f.lock.json:"));  // file and line
        CHECK_FALSE(p.locked);
    }
    // The report's own repro: an entry with empty inputs and packages.
    auto p = parse_safely(
        R"({"schema":1,"images":{},"python":{"debian-cpu-debian12":{"inputs":{},"packages":{}}}})");
    INFO(p.messages);
    for (const char* key : {"requirements", "python", "platform", "torch_index"})
        CHECK_THAT(p.messages, ContainsSubstring("$.python[\"debian-cpu-debian12\"].inputs: "
                                                 "missing required key \"" +
                                                 std::string(key) + "\""));
}

TEST_CASE("lock file N8: a value of the wrong type anywhere in a Python entry is named",
          "[regression]") {
    const std::vector<std::pair<std::string, std::string>> places = {
        {"/python", "$.python"},
        {"/python/v", "$.python.v"},
        {"/python/v/inputs", "$.python.v.inputs"},
        {"/python/v/packages", "$.python.v.packages"},
        {"/python/v/inputs/requirements", "$.python.v.inputs.requirements"},
        {"/python/v/inputs/python", "$.python.v.inputs.python"},
        {"/python/v/inputs/platform", "$.python.v.inputs.platform"},
        {"/python/v/inputs/torch_index", "$.python.v.inputs.torch_index"},
        {"/python/v/packages/a", "$.python.v.packages.a"},
        {"/python/v/packages/a/version", "$.python.v.packages.a.version"},
        {"/python/v/packages/a/hashes", "$.python.v.packages.a.hashes"},
        {"/python/v/packages/a/required_by", "$.python.v.packages.a.required_by"},
    };
    const std::vector<nlohmann::json> flips = {
        "x", 1, nlohmann::json::array(), nlohmann::json::object(), nullptr, true};
    int judged = 0;
    for (const auto& [pointer, path] : places)
        for (const auto& flip : flips) {
            if ((pointer.ends_with("required_by") && flip == nlohmann::json::array()) ||
                (pointer == "/python" && flip == nlohmann::json::object()))
                continue;  // valid: an empty required_by, an empty Python section
            auto doc = valid_lock();
            doc[nlohmann::json::json_pointer(pointer)] = flip;
            auto p = parse_safely(doc.dump(2));
            INFO(pointer << " = " << flip.dump() << "\n" << p.messages);
            bool at_path = false;
            for (const auto& d : p.items) at_path = at_path || d.path.starts_with(path);
            CHECK(at_path);
            CHECK(p.items.front().pos.line > 0);
            CHECK_FALSE(p.locked);
            ++judged;
        }
    CHECK(judged == 70);
    // The messages say what was found and what is accepted.
    auto doc = valid_lock();
    doc["python"]["v"]["packages"] = "x";
    CHECK_THAT(parse_safely(doc.dump()).messages,
               ContainsSubstring("$.python.v.packages: expected an object of package -> "
                                 "{\"version\": ..., \"hashes\": [...], \"required_by\": [...]}, "
                                 "found a string"));
    doc = valid_lock();
    doc["python"]["v"]["inputs"]["platform"] = "x";
    CHECK_THAT(parse_safely(doc.dump()).messages,
               ContainsSubstring("$.python.v.inputs.platform: platform \"x\" is not like "
                                 "\"x86_64-manylinux_2_36\""));
}

TEST_CASE("lock file: hostile Python sections never crash render or lock --check's parser",
          "[regression]") {
    // Every way the report's row 30 named, through plan_render as `render` and `list` run it.
    const char* manifest = R"({"schema": 1, "name": "pypi", "image": "t/pypi",
      "base": "os-pip", "wheel_index": "pypi",
      "matrix": {"torch": ["2.9.1"], "cuda": ["cu128"], "os": ["debian12"]}})";
    for (
        const char* python :
        {R"({"pypi-2.9.1-cu128-debian12": {}})",
         R"({"pypi-2.9.1-cu128-debian12": {"inputs": {}, "packages": {}}})",
         R"({"pypi-2.9.1-cu128-debian12": {"packages": {}}})",
         R"({"pypi-2.9.1-cu128-debian12": {"inputs": {"requirements": ["torch==2.9.1"],
              "python": "3.11", "platform": "x86_64-manylinux_2_36"}, "packages": {}}})",
         R"({"pypi-2.9.1-cu128-debian12": {"inputs": 5, "packages": {"torch": {}}}})",
         R"({"pypi-2.9.1-cu128-debian12": {"inputs": null, "packages": {"torch": {"hashes": []}}}})"}) {
        std::string lock = R"({"schema": 1, "images": {}, "python": )" + std::string(python) + "}";
        INFO(lock);
        ManifestSource src{"m/pypi.json", manifest, "m/pypi.lock.json", lock};
        REQUIRE(test::runs_without_crash([&] { (void)plan_render({src}, test::real_kb()); }));
        RenderPlan plan = plan_render({src}, test::real_kb());
        CHECK_FALSE(plan.problems.empty());
        CHECK(plan.files.empty());
        CHECK_THAT(test::problems_text(plan), ContainsSubstring("$.python"));
    }
}

// ---------------------------------------------------------------- the dependency graph

TEST_CASE("uv's # via annotations become each package's required_by") {
    auto parsed =
        parse_uv_requirements(test::source_text("tests/data/uv/torch-2.9.1-jupyterlab-4.3.4.txt"));
    REQUIRE(parsed);
    const auto& ps = parsed.value();
    const LockedPackage* anyio = test::package_named(ps, "anyio");
    REQUIRE(anyio);
    CHECK(anyio->required_by == std::vector<std::string>{"httpx", "jupyter-server"});
    const LockedPackage* torch = test::package_named(ps, "torch");
    REQUIRE(torch);  // "-r req.in" is the inputs: not recorded
    CHECK(torch->required_by == std::vector<std::string>{"torchaudio", "torchvision"});
    const LockedPackage* cudnn = test::package_named(ps, "nvidia-cudnn-cu12");
    REQUIRE(cudnn);
    CHECK(cudnn->required_by == std::vector<std::string>{"torch"});
    CHECK(test::package_named(ps, "jupyterlab")->required_by.empty());
    // uv's real answer is exactly the closure of what was asked.
    CHECK(check_lock_closure(real_inputs(), ps).empty());
}

TEST_CASE("uv annotations that name no package are refused, naming the line") {
    const std::string pkg = "a==1 \\\n    --hash=" + test::k_fake_hash + "\n";
    auto bad = [](const std::string& text) {
        auto r = parse_uv_requirements(text);
        REQUIRE_FALSE(r);
        return r.error().message;
    };
    CHECK_THAT(bad(pkg + "    # via $(id)\n"), ContainsSubstring("line 3: a \"# via\" item"));
    CHECK_THAT(bad(pkg + "    # via\n    #   b;c\n"), ContainsSubstring("line 4"));
    // Line style, extras and sources are read as the package they name.
    auto ok =
        parse_uv_requirements(pkg + "    # via\n    #   B_c[x]\n    #   d (pyproject.toml)\n" +
                              "    #   -r requirements.in\n# unrelated comment\n");
    REQUIRE(ok);
    CHECK(ok.value()[0].required_by == std::vector<std::string>{"b-c", "d"});
}

TEST_CASE("a package outside the resolved closure is named") {
    auto ps =
        parse_uv_requirements(test::source_text("tests/data/uv/torch-2.9.1-jupyterlab-4.3.4.txt"))
            .value();
    auto in = real_inputs();
    // Added by hand: nothing requires it.
    ps.push_back({"evil", "1.0", {test::k_fake_hash}});
    auto o = check_lock_closure(in, ps);
    REQUIRE(o.size() == 1);
    CHECK(o[0].name == "evil");
    CHECK_THAT(o[0].why, ContainsSubstring("package \"evil\" 1.0 is outside the resolved closure: "
                                           "nothing the inputs ask for requires it"));
    // "Required" by a package the lock does not hold, or by each other in a ring.
    ps.back().required_by = {"ghost"};
    ps.push_back({"evil2", "1.0", {test::k_fake_hash}, {"evil3"}});
    ps.push_back({"evil3", "1.0", {test::k_fake_hash}, {"evil2"}});
    o = check_lock_closure(in, ps);
    CHECK(outside_names(o) == std::vector<std::string>{"evil", "evil2", "evil3"});
    CHECK_THAT(o[0].why, ContainsSubstring("says \"ghost\" required it, but the lock holds no "
                                           "such package"));
    // An input the manifest dropped leaves its own dependencies unrequested too.
    ps.resize(ps.size() - 3);
    in.requirements = {"torch==2.9.1"};
    auto names = outside_names(check_lock_closure(in, ps));
    CHECK(std::find(names.begin(), names.end(), "jupyterlab") != names.end());
    CHECK(std::find(names.begin(), names.end(), "torch") == names.end());
    CHECK(std::find(names.begin(), names.end(), "nvidia-cudnn-cu12") == names.end());
}

TEST_CASE("a lock file with a package nothing requested is refused at its position") {
    PythonLock lock;
    lock.inputs = real_inputs();
    lock.packages =
        parse_uv_requirements(test::source_text("tests/data/uv/torch-2.9.1-jupyterlab-4.3.4.txt"))
            .value();
    lock.graph = true;
    std::string text = render_lockfile({}, {{"v", lock}});
    {
        Diagnostics diags("m/f.lock.json");
        LockFile back = parse_lockfile(text, diags);
        INFO(test::all_messages(diags));
        CHECK(diags.empty());
        REQUIRE(back.python.count("v"));
        CHECK(back.python.at("v").graph);
        CHECK(back.python.at("v").packages == lock.packages);
        CHECK(render_lockfile({}, back.python) == text);
    }
    auto doc = nlohmann::json::parse(text);
    doc["python"]["v"]["packages"]["evil"] = {{"version", "6.6.6"},
                                              {"hashes", {test::k_fake_hash}},
                                              {"required_by", nlohmann::json::array()}};
    auto p = parse_safely(doc.dump(2));
    INFO(p.messages);
    CHECK_FALSE(p.locked);
    REQUIRE(p.items.size() == 1);
    CHECK(p.items[0].path == "$.python.v.packages.evil");
    CHECK(p.items[0].pos.line > 0);
    CHECK_THAT(p.items[0].message, ContainsSubstring("package \"evil\" 6.6.6 is outside the "
                                                     "resolved closure"));
    // A graph on some packages only: the others are named.
    doc = nlohmann::json::parse(text);
    doc["python"]["v"]["packages"]["anyio"].erase("required_by");
    p = parse_safely(doc.dump(2));
    CHECK_FALSE(p.locked);
    CHECK_THAT(p.messages, ContainsSubstring("$.python.v.packages.anyio: missing key "
                                             "\"required_by\""));
    // required_by naming something that is not a package name.
    doc = nlohmann::json::parse(text);
    doc["python"]["v"]["packages"]["anyio"]["required_by"] = {"Httpx"};
    p = parse_safely(doc.dump(2));
    CHECK_THAT(p.messages, ContainsSubstring("$.python.v.packages.anyio.required_by[0]"));
    CHECK_THAT(p.messages, ContainsSubstring("not in its normalized form"));
}

TEST_CASE("a lock written before the graph parses (lock can re-lock it) and render refuses it") {
    const char* manifest = R"({"schema": 1, "name": "pypi", "image": "t/pypi",
      "base": "os-pip", "wheel_index": "pypi",
      "matrix": {"torch": ["2.9.1"], "cuda": ["cu128"], "os": ["debian12"]}})";
    auto plan = test::plan_one(manifest);
    REQUIRE(test::problems_text(plan).empty());
    PythonLock lock;
    lock.inputs = *python_lock_plan(plan.variants[0], test::real_kb()).inputs;
    lock.packages =
        parse_uv_requirements(test::source_text("tests/data/uv/torch-2.9.1-jupyterlab-4.3.4.txt"))
            .value();
    // The manifest has no jupyterlab: drop it and what only it required.
    REQUIRE(lock.inputs.requirements.size() == 3);
    auto outside = outside_names(check_lock_closure(lock.inputs, lock.packages));
    auto dropped = [&](const std::string& name) {
        return std::find(outside.begin(), outside.end(), name) != outside.end();
    };
    std::erase_if(lock.packages, [&](const LockedPackage& p) { return dropped(p.name); });
    for (auto& p : lock.packages) std::erase_if(p.required_by, dropped);  // as uv would write it
    REQUIRE(check_lock_closure(lock.inputs, lock.packages).empty());

    lock.graph = true;
    ManifestSource src{"m/pypi.json", manifest, "m/pypi.lock.json",
                       render_lockfile({}, {{"pypi-2.9.1-cu128-debian12", lock}})};
    RenderPlan with_graph = plan_render({src}, test::real_kb());
    INFO(test::problems_text(with_graph));
    CHECK(test::problems_text(with_graph).empty());
    CHECK(with_graph.files.count("pypi-2.9.1-cu128-debian12/requirements.lock.txt"));

    lock.graph = false;  // as an older torchdock wrote it: no required_by anywhere
    src.lock_text = render_lockfile({}, {{"pypi-2.9.1-cu128-debian12", lock}});
    CHECK(src.lock_text->find("required_by") == std::string::npos);
    Diagnostics diags("m/pypi.lock.json");
    LockFile old = parse_lockfile(*src.lock_text, diags);
    CHECK(diags.empty());
    REQUIRE(old.python.count("pypi-2.9.1-cu128-debian12"));
    CHECK_FALSE(old.python.at("pypi-2.9.1-cu128-debian12").graph);
    RenderPlan refused = plan_render({src}, test::real_kb());
    CHECK(refused.files.empty());
    CHECK_THAT(test::problems_text(refused),
               ContainsSubstring("records no dependency graph (no \"required_by\" on its "
                                 "packages: it was written by an older torchdock)"));
    CHECK_THAT(test::problems_text(refused), ContainsSubstring("run `torchdock lock` to re-lock"));
}
