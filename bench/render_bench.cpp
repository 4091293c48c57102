// Render benchmark: prints figures, asserts nothing.
//  1. In-process: plan and render a synthetic matrix of 1,000 variants (250 manifest
//     families x 4 cells) against the real knowledge base; median of 15 runs. Then the same
//     for 500 variants with a CUDA extension each (250 PyPI families x 2 torch releases,
//     xformers picked per torch and its GPU code judged for 2 target GPUs).
//  2. Whole process (with --binary PATH): `torchdock render` of the bundled matrix into a
//     temporary directory, median of 20 runs.
// Usage: render_bench [--binary PATH]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/render/render_plan.hpp"
#include "engine/project_loader.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    return xs[xs.size() / 2];
}

std::vector<td::ManifestSource> synthetic_manifests(int families) {
    std::vector<td::ManifestSource> out;
    for (int i = 0; i < families; ++i) {
        std::string name = "fam" + std::to_string(i);
        std::string text = R"({"schema": 1, "name": ")" + name + R"(", "image": "bench/)" + name +
                           R"(", "base": "nvidia-cuda-cudnn",
  "matrix": {"torch": ["2.9.1"], "cuda": ["cu128", "cu130"], "flavor": ["runtime", "devel"], "os": ["ubuntu24.04"]},
  "pip": ["numpy==2.3.5", "pkg)" +
                           std::to_string(i) + R"(==1.0.0"],
  "user": {"name": "trainer", "uid": 1000}, "env": {"OMP_NUM_THREADS": "8"},
  "target_gpus": ["H100", "B200"]})";
        out.push_back({"manifests/" + name + ".json", text, std::nullopt, std::nullopt});
    }
    return out;
}

// Families whose variants each carry xformers: the release that fits each torch is looked
// up and its objects' GPU code judged for the target GPUs (render/extensions.cpp).
std::vector<td::ManifestSource> extension_manifests(int families) {
    std::vector<td::ManifestSource> out;
    for (int i = 0; i < families; ++i) {
        std::string name = "ext" + std::to_string(i);
        std::string text = R"({"schema": 1, "name": ")" + name + R"(", "image": "bench/)" + name +
                           R"(", "base": "os-pip", "wheel_index": "pypi",
  "matrix": {"torch": ["2.8.0", "2.9.1"], "cuda": ["cu128"], "os": ["debian12"]},
  "extensions": [{"name": "xformers"}], "target_gpus": ["A100", "H100"]})";
        out.push_back({"manifests/" + name + ".json", text, std::nullopt, std::nullopt});
    }
    return out;
}

// Plans `sources` 15 times and prints the median; false when the matrix is refused.
bool bench_plan(const char* label, const std::vector<td::ManifestSource>& sources,
                const td::KnowledgeBase& kb) {
    std::vector<double> times;
    std::size_t variants = 0, bytes = 0;
    for (int run = 0; run < 15; ++run) {
        auto start = Clock::now();
        td::RenderPlan plan = td::plan_render(sources, kb);
        times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        if (!plan.problems.empty()) {
            std::fprintf(stderr, "render_bench: synthetic matrix refused: %s\n",
                         td::format_diagnostic(plan.problems[0]).c_str());
            return false;
        }
        variants = plan.variants.size();
        bytes = 0;
        for (const auto& [path, text] : plan.files) bytes += text.size();
    }
    std::printf(
        "in-process render%s: %zu variants (%zu bytes of Dockerfiles+index) median %.2f ms, min "
        "%.2f ms, %.1f us/variant\n",
        label, variants, bytes, median(times), *std::min_element(times.begin(), times.end()),
        1000.0 * median(times) / static_cast<double>(variants));
    return true;
}

double run_process(const std::string& binary, const std::string& out_dir) {
    std::vector<std::string> args = {binary, "render", "--out", out_dir};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    auto start = Clock::now();
    pid_t pid = 0;
    if (posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0) return -1;
    int status = 0;
    waitpid(pid, &status, 0);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    posix_spawn_file_actions_destroy(&actions);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ms : -1;
}

}  // namespace

int main(int argc, char** argv) {
    auto kb = td::engine::load_knowledge_base(std::string(TORCHDOCK_SOURCE_DIR) + "/data");
    if (!kb) {
        std::fprintf(stderr, "render_bench: %s\n", kb.error().message.c_str());
        return 2;
    }
    if (!bench_plan("", synthetic_manifests(250), kb.value())) return 1;
    if (!bench_plan(" with a CUDA extension per variant", extension_manifests(250), kb.value()))
        return 1;

    if (argc == 3 && std::string(argv[1]) == "--binary") {
        std::string out =
            std::filesystem::temp_directory_path() / ("render-bench-" + std::to_string(getpid()));
        std::vector<double> proc;
        for (int run = 0; run < 20; ++run) {
            double ms = run_process(argv[2], out);
            if (ms < 0) {
                std::fprintf(stderr,
                             "render_bench: %s render failed (run it from the repository root)\n",
                             argv[2]);
                return 1;
            }
            proc.push_back(ms);
        }
        std::filesystem::remove_all(out);
        std::printf(
            "whole process `torchdock render` of the bundled matrix: median %.2f ms, min %.2f ms "
            "(20 runs)\n",
            median(proc), *std::min_element(proc.begin(), proc.end()));
    }
    return 0;
}
