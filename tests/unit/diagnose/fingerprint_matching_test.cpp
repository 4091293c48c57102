// diff matches list elements by what they are (a finding by its ID, a kernel object by its
// path), never by where they sit in the list.
#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/diagnose/fingerprint_diff.hpp"
#include "core/diagnose/fingerprint_flatten.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;
using json = nlohmann::json;

namespace {

json fingerprint() {
    return json::parse(R"({
      "schema": 1, "kind": "image", "subject": "team/train:1",
      "torch": {"version": "2.9.1+cu128", "arch_list": ["sm_80", "sm_90"],
                "loaded_libraries": ["/v/nvidia/cudnn/lib/libcudnn.so.9", "/v/torch/lib/libc10.so"]},
      "findings": [
        {"id": "DR110", "severity": "warning", "title": "small /dev/shm", "detail": "64 MiB", "fix": "--shm-size=8g"},
        {"id": "DR113", "severity": "info", "title": "no GPU", "detail": "no driver", "fix": ""},
        {"id": "DR117", "severity": "warning", "title": "newer runtime", "detail": "12.9 over 12.8", "fix": "pin it"}],
      "kernels": [
        {"path": "/v/torch/lib/libtorch_cuda.so", "sass": ["sm_80", "sm_90"], "ptx": ["compute_90"]},
        {"path": "/v/nvidia/cudnn/lib/libcudnn_engines.so.9", "sass": ["sm_80", "sm_86", "sm_90"], "ptx": []}],
      "python": {"version": "3.11.2", "interpreters_tried": ["/app/.venv/bin/python", "/usr/bin/python3"]}
    })");
}

template <typename F>
json reversed(json list, F&& each) {
    std::reverse(list.begin(), list.end());
    for (auto& e : list) each(e);
    return list;
}

}  // namespace

TEST_CASE("reordered lists are no difference") {
    json a = fingerprint(), b = fingerprint();
    b["findings"] = reversed(b["findings"], [](json&) {});
    b["kernels"] =
        reversed(b["kernels"], [](json& k) { std::reverse(k["sass"].begin(), k["sass"].end()); });
    b["torch"]["loaded_libraries"] = reversed(b["torch"]["loaded_libraries"], [](json&) {});
    b["python"]["interpreters_tried"] = reversed(b["python"]["interpreters_tried"], [](json&) {});
    CHECK(diff_fingerprints(a, b).empty());
}

TEST_CASE("a finding that changed severity is one difference, named by its ID") {
    json a = fingerprint(), b = fingerprint();
    b["findings"] = reversed(b["findings"], [](json& f) {
        if (f["id"] == "DR117") f["severity"] = "error";
    });
    auto d = diff_fingerprints(a, b);
    REQUIRE(d.size() == 1);
    CHECK(d[0].path == "findings[DR117].severity");
    CHECK(d[0].a == "warning");
    CHECK(d[0].b == "error");
    CHECK(d[0].category == "findings");
}

TEST_CASE("an element on one side only is one difference, not one per field") {
    json a = fingerprint(), b = fingerprint();
    b["findings"].erase(0);  // DR110 gone; DR113 and DR117 move up one place
    b["kernels"].erase(1);
    auto d = diff_fingerprints(a, b);
    REQUIRE(d.size() == 2);
    const auto* finding = test::difference_at(d, "findings[DR110]");
    REQUIRE(finding);
    CHECK_THAT(finding->a, ContainsSubstring("severity: warning; title: small /dev/shm"));
    CHECK(finding->b == "(absent)");
    CHECK(finding->category == "findings");
    const auto* kernel =
        test::difference_at(d, "kernels[/v/nvidia/cudnn/lib/libcudnn_engines.so.9]");
    REQUIRE(kernel);
    CHECK_THAT(kernel->a, ContainsSubstring("sass: sm_80 sm_86 sm_90"));
    CHECK(kernel->category == "kernels");
    // A warning present on one side only outranks the info finding that appears on one
    // side only.
    json c = fingerprint();
    c["findings"].erase(1);
    auto info = diff_fingerprints(a, c);
    REQUIRE(info.size() == 1);
    CHECK(finding->weight > info[0].weight);
}

TEST_CASE("a kernel object that gained an architecture is one arch difference at its path") {
    json a = fingerprint(), b = fingerprint();
    b["kernels"][0]["sass"].push_back("sm_100");
    auto d = diff_fingerprints(a, b);
    REQUIRE(d.size() == 1);
    CHECK(d[0].path == "kernels[/v/torch/lib/libtorch_cuda.so].sass");
    CHECK(d[0].a == "sm_80 sm_90");
    CHECK(d[0].b == "sm_100 sm_80 sm_90");
    CHECK(d[0].category == "arch");
}

TEST_CASE("plain-value lists are sets: a changed entry is one difference of the list") {
    json a = fingerprint(), b = fingerprint();
    b["torch"]["loaded_libraries"][0] = "/opt/cudnn/libcudnn.so.9";
    auto d = diff_fingerprints(a, b);
    REQUIRE(d.size() == 1);
    CHECK(d[0].path == "torch.loaded_libraries");
}

TEST_CASE("torch's arch list keeps its order") {
    json a = fingerprint(), b = fingerprint();
    b["torch"]["arch_list"] = {"sm_90", "sm_80"};
    CHECK(test::difference_at(diff_fingerprints(a, b), "torch.arch_list"));
}

TEST_CASE("objects that nothing names are compared as a set of their summaries") {
    json list = json::parse(R"([{"kind": "y", "n": 2}, {"kind": "x"}])");
    auto flat = flatten_fingerprint({{"things", list}});
    CHECK(flat.elements.empty());
    CHECK(flat.leaves.at("things").value == "kind: x | kind: y; n: 2");
    json reordered = {{"things", {list[1], list[0]}}};
    CHECK(diff_fingerprints({{"things", list}}, reordered).empty());
}

TEST_CASE("ptx entries are named by their arch, two copies of a library by their place") {
    json a = fingerprint(), b = fingerprint();
    a["kernels"][0]["ptx"] = json::parse(
        R"([{"arch": "compute_90", "isa": "8.4"}, {"arch": "compute_52", "isa": "7.0"}])");
    b["kernels"][0]["ptx"] = {a["kernels"][0]["ptx"][1], a["kernels"][0]["ptx"][0]};
    a["libraries"] = json::parse(R"([{"soname": "libtorch_cpu.so", "path": "/b/libtorch_cpu.so"},
                                     {"soname": "libtorch_cpu.so", "path": "/a/libtorch_cpu.so"}])");
    b["libraries"] = {a["libraries"][1], a["libraries"][0]};
    CHECK(diff_fingerprints(a, b).empty());
    b["kernels"][0]["ptx"][0]["isa"] = "7.1";
    auto d = diff_fingerprints(a, b);
    REQUIRE(d.size() == 1);
    CHECK(d[0].path == "kernels[/v/torch/lib/libtorch_cuda.so].ptx[compute_52].isa");
    // An object on one side only is one row, the ptx entries in it included.
    b["kernels"].erase(0);
    d = diff_fingerprints(a, b);
    REQUIRE(d.size() == 1);
    CHECK(d[0].path == "kernels[/v/torch/lib/libtorch_cuda.so]");
    CHECK(d[0].category == "kernels");
    CHECK_THAT(d[0].a, !ContainsSubstring("path:"));
}

TEST_CASE("two elements with one identity stay apart") {
    json list = json::parse(R"([{"id": "DR104", "detail": "a"}, {"id": "DR104", "detail": "b"}])");
    auto flat = flatten_fingerprint({{"findings", list}});
    CHECK(flat.leaves.at("findings[DR104].detail").value == "a");
    CHECK(flat.leaves.at("findings[DR104#2].detail").value == "b");
}

TEST_CASE("libraries outside the CUDA and torch stack rank below every CUDA library") {
    json a = fingerprint(), b = fingerprint();
    b["libraries"] = json::parse(R"([
      {"soname": "libX11.so.6", "path": "/usr/lib/libX11.so.6"},
      {"soname": "libcudnn_ops.so.9", "path": "/v/libcudnn_ops.so.9"},
      {"soname": "libtorch_cuda.so", "path": "/v/libtorch_cuda.so"}])");
    auto d = diff_fingerprints(a, b);
    const auto *x11 = test::difference_at(d, "libraries[X11]"),
               *cudnn = test::difference_at(d, "libraries[cudnn_ops]"),
               *torch = test::difference_at(d, "libraries[torch_cuda]");
    REQUIRE(x11);
    REQUIRE(cudnn);
    REQUIRE(torch);
    CHECK(x11->weight < cudnn->weight);
    CHECK(x11->weight < torch->weight);
    CHECK(x11->category == "libraries");
}
