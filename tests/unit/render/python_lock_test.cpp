#include "core/render/python_lock.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/render/lockfile.hpp"
#include "engine/files.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

// A PyPI-wheel manifest (torch 2.9.1's default build) on Debian 12.
const char* k_pypi_manifest = R"({"schema": 1, "name": "pypi", "image": "t/pypi",
  "base": "os-pip", "wheel_index": "pypi",
  "matrix": {"torch": ["2.9.1"], "cuda": ["cu128"], "os": ["debian12"]},
  "pip": ["tqdm==4.67.1"], "jupyter": "4.3.4"})";

}  // namespace

TEST_CASE("uv's real output parses: every package pinned, with its hashes") {
    auto parsed =
        parse_uv_requirements(test::source_text("tests/data/uv/torch-2.9.1-jupyterlab-4.3.4.txt"));
    REQUIRE(parsed);
    const auto& ps = parsed.value();
    CHECK(ps.size() > 90);
    const LockedPackage* torch = test::package_named(ps, "torch");
    REQUIRE(torch);
    CHECK(torch->version == "2.9.1");
    CHECK(torch->hashes.size() > 5);
    for (const auto& h : torch->hashes) CHECK(h.size() == 71);
    const LockedPackage* cudnn = test::package_named(ps, "nvidia-cudnn-cu12");
    REQUIRE(cudnn);
    CHECK(cudnn->version == "9.10.2.21");
    CHECK(test::package_named(ps, "triton"));
    CHECK(test::package_named(ps, "jupyterlab"));
    CHECK(std::is_sorted(ps.begin(), ps.end(),
                         [](const auto& a, const auto& b) { return a.name < b.name; }));
}

TEST_CASE("uv output that is not plain pins with hashes is refused, naming the line") {
    auto bad = [](const std::string& text) {
        auto r = parse_uv_requirements(text);
        REQUIRE_FALSE(r);
        return r.error().message;
    };
    CHECK_THAT(bad("numpy==1.26.4\n"), ContainsSubstring("numpy has no hashes"));
    CHECK_THAT(
        bad("numpy==1.26.4 ; python_version < '3.12' \\\n    --hash=" + test::k_fake_hash + "\n"),
        ContainsSubstring("line 1: not a NAME==VERSION pin"));
    CHECK_THAT(bad("numpy>=1.26 \\\n    --hash=" + test::k_fake_hash + "\n"),
               ContainsSubstring("line 1: not a NAME==VERSION pin"));
    CHECK_THAT(bad("-e ./src\n"), ContainsSubstring("line 1"));
    CHECK_THAT(bad("numpy==1.26.4 \\\n    --hash=md5:abc\n"),
               ContainsSubstring("line 2: not a sha256"));
    CHECK_THAT(bad("numpy==1.26.4 \\\n"),
               ContainsSubstring("line 2: a continuation line is empty"));
    CHECK_THAT(bad("numpy==1.26.4 \\"), ContainsSubstring("ends inside a continuation"));
    CHECK_THAT(bad("numpy==1.26.4 \\\n    --hash=" + test::k_fake_hash +
                   "\nNumPy==1.26.4 \\\n    --hash=" + test::k_fake_hash + "\n"),
               ContainsSubstring("names numpy twice"));
    CHECK_THAT(bad("num$py==1 \\\n    --hash=" + test::k_fake_hash + "\n"),
               ContainsSubstring("line 1"));
}

TEST_CASE("a lock plan names the variant's whole Python input") {
    auto plan = test::plan_one(k_pypi_manifest);
    REQUIRE(test::problems_text(plan).empty());
    REQUIRE(plan.variants.size() == 1);
    LockPlan lp = python_lock_plan(plan.variants[0], test::real_kb());
    REQUIRE(lp.inputs);
    CHECK(lp.inputs->requirements == std::vector<std::string>{"torch==2.9.1", "torchvision==0.24.1",
                                                              "torchaudio==2.9.1", "tqdm==4.67.1",
                                                              "jupyterlab==4.3.4"});
    CHECK(lp.inputs->python == "3.11");
    CHECK(lp.inputs->platform == "x86_64-manylinux_2_36");
    CHECK(lp.inputs->torch_index.empty());
}

TEST_CASE("bases that bring torch are not hash-locked, and say why") {
    auto plan = test::plan_one(
        R"({"schema":1,"name":"n","image":"a/b","base":"ngc","matrix":{"ngc":["24.05"]},
            "pip":["tqdm==4.67.1"]})");
    REQUIRE(test::problems_text(plan).empty());
    LockPlan lp = python_lock_plan(plan.variants[0], test::real_kb());
    CHECK_FALSE(lp.inputs);
    CHECK_THAT(lp.why_not, ContainsSubstring("base \"ngc\" brings torch and the Python packages "
                                             "around it, which the lock cannot resolve"));
}

TEST_CASE("diff names what moved between two resolutions") {
    std::vector<LockedPackage> a = {{"numpy", "2.4.6", {test::k_fake_hash}},
                                    {"sympy", "1.14.0", {test::k_fake_hash}},
                                    {"gone", "1.0", {test::k_fake_hash}}};
    std::vector<LockedPackage> b = {
        {"numpy", "2.4.6", {test::k_fake_hash, "sha256:" + std::string(64, 'b')}},
        {"sympy", "1.15.0", {test::k_fake_hash}},
        {"fresh", "0.1", {test::k_fake_hash}}};
    std::vector<std::string> d;
    for (const auto& c : diff_locked_packages(a, b)) d.push_back(c.describe());
    CHECK(d == std::vector<std::string>{"gone: gone 1.0",
                                        "numpy 2.4.6: its files changed (1 hashes -> 2)",
                                        "sympy 1.14.0 -> 1.15.0", "new: fresh 0.1"});
    CHECK(diff_locked_packages(a, a).empty());
}

TEST_CASE("a Python lock round-trips through the lock file") {
    PythonLock lock;
    lock.inputs = {
        {"torch==2.9.1", "torchvision==0.24.1", "torchaudio==2.9.1", "jupyterlab==4.3.4"},
        "3.11",
        "x86_64-manylinux_2_36",
        ""};
    lock.packages =
        parse_uv_requirements(test::source_text("tests/data/uv/torch-2.9.1-jupyterlab-4.3.4.txt"))
            .value();  // the closure of those
    lock.graph = true;
    std::string text = render_lockfile({}, {{"pypi-2.9.1-cu128-debian12", lock}});
    Diagnostics diags("t.lock.json");
    LockFile back = parse_lockfile(text, diags);
    INFO(diags.items().size());
    CHECK(diags.empty());
    REQUIRE(back.python.count("pypi-2.9.1-cu128-debian12"));
    CHECK(back.python.at("pypi-2.9.1-cu128-debian12").inputs == lock.inputs);
    CHECK(back.python.at("pypi-2.9.1-cu128-debian12").packages == lock.packages);
    CHECK(back.python.at("pypi-2.9.1-cu128-debian12").graph);
    CHECK(render_lockfile({}, back.python) == text);
}

TEST_CASE("a lock file's Python section is checked: what reaches the build context is a pin") {
    Diagnostics diags("t.lock.json");
    (void)parse_lockfile(R"({"schema": 1, "images": {}, "python": {
      "v": {"inputs": {"requirements": ["torch>=2"], "python": "3", "platform": "linux",
                       "torch_index": "https://x"},
            "packages": {"a b": {"version": "1; rm -rf /", "hashes": ["md5:1"]}}}}})",
                         diags);
    std::string all;
    for (const auto& d : diags.items()) all += format_diagnostic(d) + "\n";
    INFO(all);
    CHECK_THAT(all, ContainsSubstring("$.python.v.inputs.requirements[0]"));
    CHECK_THAT(all, ContainsSubstring("$.python.v.inputs.python"));
    CHECK_THAT(all, ContainsSubstring("$.python.v.inputs.platform"));
    CHECK_THAT(all, ContainsSubstring("$.python.v.inputs.torch_index"));
    CHECK_THAT(all, ContainsSubstring("\"a b\""));
    CHECK_THAT(all, ContainsSubstring(".version"));
    CHECK_THAT(all, ContainsSubstring("md5:1"));
}

TEST_CASE("PyPI wheels: the release's default build, pinned without a local tag") {
    auto plan = test::plan_one(k_pypi_manifest);
    REQUIRE(test::problems_text(plan).empty());
    const std::string& df = plan.files.at("pypi-2.9.1-cu128-debian12/Dockerfile");
    CHECK_THAT(df, ContainsSubstring("      torch==2.9.1 \\\n"));
    CHECK_THAT(df, ContainsSubstring("torchvision==0.24.1"));
    CHECK_THAT(df, ContainsSubstring("cu128 wheels from PyPI: CUDA 12.8"));
    CHECK(df.find("TORCH_INDEX_URL") == std::string::npos);
    CHECK(df.find("+cu128") == std::string::npos);
    // The labels and expectations stay exact.
    CHECK_THAT(df, ContainsSubstring("io.torchdock.cuda=\"12.8\""));
    CHECK_THAT(df, ContainsSubstring("io.torchdock.cudnn=\"9.10.2.21\""));
    CHECK_THAT(df, ContainsSubstring("not hash-locked: no lock file"));
}

TEST_CASE("PyPI wheels: a CUDA build PyPI does not serve is refused, naming what it has") {
    std::string m = k_pypi_manifest;
    m.replace(m.find("\"cu128\""), 7, "\"cu126\", \"cpu\"");
    auto problems = test::problems_text(test::plan_one(m));
    CHECK_THAT(problems,
               ContainsSubstring("$.matrix.cuda[0]: PyPI serves torch 2.9.1 only as its default "
                                 "build, cu128 (torch==2.9.1, no local version tag); cu126 wheels "
                                 "are on the PyTorch wheel index (\"wheel_index\": \"pytorch\")"));
    CHECK_THAT(problems, ContainsSubstring("$.matrix.cuda[1]: PyPI serves torch 2.9.1 only"));
}

TEST_CASE("wheel_index is refused where the base brings torch, and checked where it applies") {
    auto problems = test::problems_text(test::plan_one(
        R"({"schema":1,"name":"n","image":"a/b","base":"ngc","wheel_index":"pypi",
            "matrix":{"ngc":["24.05"]}})"));
    CHECK_THAT(problems, ContainsSubstring("$.wheel_index: base \"ngc\" brings its own torch"));
    std::string m = k_pypi_manifest;
    m.replace(m.find("\"wheel_index\": \"pypi\""), 21, "\"wheel_index\": \"pipy\"");
    CHECK_THAT(test::problems_text(test::plan_one(m)), ContainsSubstring("$.wheel_index"));
}

// uv's recorded answer for the manifest's inputs (the recording had no tqdm; its pin is added).
std::vector<LockedPackage> packages_for_pypi_manifest() {
    auto ps =
        parse_uv_requirements(test::source_text("tests/data/uv/torch-2.9.1-jupyterlab-4.3.4.txt"))
            .value();
    ps.push_back({"tqdm", "4.67.1", {test::k_fake_hash}});
    std::sort(ps.begin(), ps.end(),
              [](const LockedPackage& a, const LockedPackage& b) { return a.name < b.name; });
    return ps;
}

TEST_CASE("a lock must hold every pinned input at its exact version") {
    PythonLockInputs in{{"torch==2.9.1", "jupyterlab==4.3.4", "Typing_Extensions==4.16.0"},
                        "3.11",
                        "x86_64-manylinux_2_36",
                        ""};
    auto ps =
        parse_uv_requirements(test::source_text("tests/data/uv/torch-2.9.1-jupyterlab-4.3.4.txt"))
            .value();
    CHECK(check_lock_covers(in, ps) == "");  // names compared in PEP 503 form
    in.requirements.push_back("tqdm==4.67.1");
    CHECK(check_lock_covers(in, ps) ==
          "the lock has no tqdm, which its inputs ask for (tqdm==4.67.1)");
    in.requirements.back() = "numpy==2.4.6";
    CHECK(check_lock_covers(in, ps) == "");
    // Another version, or a local build of the same, is not what was pinned.
    for (auto& p : ps)
        if (p.name == "torch") p.version = "2.8.0";
    CHECK_THAT(check_lock_covers(in, ps),
               ContainsSubstring("the lock has torch \"2.8.0\", but its inputs pin torch==2.9.1"));
    for (auto& p : ps)
        if (p.name == "torch") p.version = "2.9.1+cu126";
    CHECK_THAT(check_lock_covers(in, ps), ContainsSubstring("\"2.9.1+cu126\""));
    in.requirements = {"torch==2.9.1+cu126"};
    CHECK(check_lock_covers(in, ps) == "");
    ps.push_back({"Torch", "2.9.1+cu126", {test::k_fake_hash}});
    CHECK(check_lock_covers(in, ps) == "package \"Torch\" is locked twice");
}

TEST_CASE("a lock file whose packages contradict its inputs is refused, naming the path") {
    auto plan = test::plan_one(k_pypi_manifest);
    PythonLock lock;
    lock.inputs = *python_lock_plan(plan.variants[0], test::real_kb()).inputs;
    lock.packages = packages_for_pypi_manifest();
    for (auto& p : lock.packages)
        if (p.name == "torch") p.version = "2.8.0";
    ManifestSource src{"manifests/pypi.json", k_pypi_manifest, "manifests/pypi.lock.json",
                       render_lockfile({}, {{"pypi-2.9.1-cu128-debian12", lock}})};
    auto problems = test::problems_text(plan_render({src}, test::real_kb()));
    CHECK_THAT(problems, ContainsSubstring("$.python[\"pypi-2.9.1-cu128-debian12\"].packages: "
                                           "the lock has torch \"2.8.0\", but its inputs pin "
                                           "torch==2.9.1"));
    // A name not in PEP 503 form would give pip two requirements for one package.
    std::string text = render_lockfile({}, {{"pypi-2.9.1-cu128-debian12", lock}});
    text.replace(text.find("\"tqdm\""), 6, "\"TQDM\"");
    Diagnostics diags("t.lock.json");
    (void)parse_lockfile(text, diags);
    REQUIRE_FALSE(diags.empty());
    CHECK_THAT(format_diagnostic(diags.items()[0]),
               ContainsSubstring("package name \"TQDM\" is not in its normalized form (PEP 503): "
                                 "\"tqdm\""));
}

TEST_CASE("hashes in a lock file are compared as a set, whatever order a hand put them in") {
    PythonLock lock;
    lock.inputs = {{"a==1"}, "3.11", "x86_64-manylinux_2_36", ""};
    lock.packages = {{"a", "1", {"sha256:" + std::string(64, 'b'), test::k_fake_hash}}};
    Diagnostics diags("t.lock.json");
    LockFile back = parse_lockfile(render_lockfile({}, {{"v", lock}}), diags);
    REQUIRE(diags.empty());
    CHECK(back.python.at("v").packages[0].hashes ==
          std::vector<std::string>{test::k_fake_hash, "sha256:" + std::string(64, 'b')});
}

TEST_CASE("the lock's platform is one uv accepts, never newer than the OS's glibc") {
    CHECK(uv_platform_for_glibc("2.36") == "x86_64-manylinux_2_36");
    CHECK(uv_platform_for_glibc("2.41") == "x86_64-manylinux_2_40");
    CHECK(uv_platform_for_glibc("2.31") == "x86_64-manylinux_2_31");
    CHECK(uv_platform_for_glibc("2.30") == "x86_64-manylinux_2_28");  // uv has no 2_29, 2_30
    CHECK(uv_platform_for_glibc("2.27") == "x86_64-manylinux_2_17");
    CHECK(uv_platform_for_glibc("2.17") == "x86_64-manylinux_2_17");
    CHECK(uv_platform_for_glibc("2.12") == "");
    CHECK(uv_platform_for_glibc("3.1") == "");
    CHECK(uv_platform_for_glibc("2") == "");
}

TEST_CASE("a locked variant installs its lock; a stale lock is warned about and not used") {
    auto plan = test::plan_one(k_pypi_manifest);
    PythonLock lock;
    lock.inputs = *python_lock_plan(plan.variants[0], test::real_kb()).inputs;
    lock.packages = packages_for_pypi_manifest();
    lock.graph = true;
    ManifestSource src{"manifests/pypi.json", k_pypi_manifest, "manifests/pypi.lock.json",
                       render_lockfile({}, {{"pypi-2.9.1-cu128-debian12", lock}})};
    RenderPlan locked = plan_render({src}, test::real_kb());
    REQUIRE(test::problems_text(locked).empty());
    const std::string& df = locked.files.at("pypi-2.9.1-cu128-debian12/Dockerfile");
    CHECK_THAT(df, ContainsSubstring("pip install --require-hashes --no-deps"));
    CHECK_THAT(df, ContainsSubstring("--mount=type=bind,source=requirements.lock.txt"));
    // Installed only from the requirements file; the Dockerfile names it in the label of
    // the locked set that validate's TD129 compares the installed set with.
    CHECK(df.find(" torch==2.9.1") == std::string::npos);
    CHECK_THAT(df, ContainsSubstring("io.torchdock.python-set=\""));
    CHECK_THAT(df, ContainsSubstring(",torch==2.9.1,"));
    const std::string& req = locked.files.at("pypi-2.9.1-cu128-debian12/requirements.lock.txt");
    CHECK_THAT(req, ContainsSubstring("\ntorch==2.9.1 \\\n    --hash=sha256:"));
    CHECK_THAT(req, ContainsSubstring("\nnvidia-cudnn-cu12==9.10.2.21 \\\n"));
    // (The only warning: the lock pins no base image.)
    REQUIRE(locked.warnings.size() == 1);
    CHECK_THAT(locked.warnings[0].message, ContainsSubstring("does not pin debian:bookworm"));

    // The manifest moves jupyter: the lock no longer fits, and is not used.
    std::string moved = k_pypi_manifest;
    moved.replace(moved.find("4.3.4"), 5, "4.3.5");
    src.text = moved;
    RenderPlan stale = plan_render({src}, test::real_kb());
    REQUIRE(test::problems_text(stale).empty());
    CHECK_FALSE(stale.files.count("pypi-2.9.1-cu128-debian12/requirements.lock.txt"));
    CHECK_THAT(stale.files.at("pypi-2.9.1-cu128-debian12/Dockerfile"),
               ContainsSubstring("not hash-locked: the Python lock in manifests/pypi.lock.json was "
                                 "resolved from other inputs"));
    REQUIRE(stale.warnings.size() == 2);
    CHECK(stale.warnings[1].path == "$.python[\"pypi-2.9.1-cu128-debian12\"]");
    CHECK_THAT(stale.warnings[1].message, ContainsSubstring("renders unlocked"));
}

TEST_CASE("a Python lock for a variant that cannot be hash-locked is named as unused") {
    const char* ngc = R"({"schema":1,"name":"n","image":"a/b","base":"ngc",
                          "matrix":{"ngc":["24.05"]},"pip":["tqdm==4.67.1"]})";
    auto plan = test::plan_one(ngc);
    REQUIRE(test::problems_text(plan).empty());
    PythonLock lock;
    lock.inputs = {{"tqdm==4.67.1"}, "3.10", "x86_64-manylinux_2_35", ""};
    lock.packages = {{"tqdm", "4.67.1", {test::k_fake_hash}}};
    const std::string name = plan.variants[0].name;
    ManifestSource src{"manifests/n.json", ngc, "manifests/n.lock.json",
                       render_lockfile({}, {{name, lock}})};
    RenderPlan with_lock = plan_render({src}, test::real_kb());
    REQUIRE(test::problems_text(with_lock).empty());
    std::string warned;
    for (const auto& w : with_lock.warnings) warned += w.path + ": " + w.message + "\n";
    CHECK_THAT(warned, ContainsSubstring("$.python[\"" + name + "\"]: is not used: variant " +
                                         name + " cannot be hash-locked (base \"ngc\" brings"));
    CHECK(warned.find("no longer renders") == std::string::npos);
}

TEST_CASE(
    "a wheel by URL: torchdock's own hash of the file against the manifest's, never uv's "
    "echo of the fragment",
    "[regression][lock]") {
    PythonLockInputs in;
    const std::string fixed(64, 'a');
    const std::string url = "http://127.0.0.1:5181/tdwheel-0.1-py3-none-any.whl";
    in.requirements = {
        "torch==2.9.1", "tdwheel @ " + url + "#sha256=" + fixed,
        "other @ https://example.org/w/other-2.0-py3-none-any.whl#sha256=" + std::string(64, 'b')};
    auto wheels = wheels_by_url(in);
    REQUIRE(wheels.size() == 2);
    CHECK(wheels[0].name == "tdwheel");
    CHECK(wheels[0].url == url);
    CHECK(wheels[0].sha256 == fixed);
    CHECK(wheel_hash_mismatch(wheels[0], fixed, 1234).empty());
    CHECK(wheel_hash_mismatch(wheels[0], std::string(64, 'A'), 1234).empty());  // hex case
    const std::string real(64, 'c');
    std::string problem = wheel_hash_mismatch(wheels[0], real, 1234);
    CHECK_THAT(problem, ContainsSubstring(url));
    CHECK_THAT(problem, ContainsSubstring("has sha256 " + real));
    CHECK_THAT(problem, ContainsSubstring("the manifest fixes " + fixed));
    CHECK_THAT(problem, ContainsSubstring("1234 bytes"));
    CHECK_FALSE(wheel_hash_mismatch(wheels[0], "", 0).empty());  // nothing computed: no match
    in.requirements = {"torch==2.9.1"};
    CHECK(wheels_by_url(in).empty());
}
