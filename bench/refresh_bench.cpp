// kb refresh benchmark: prints figures, asserts nothing. Reads one torch release from the
// package index (PyPI unless --index-url) against the committed data/torch.json, the way
// `torchdock kb refresh --check --release V` does, three times, and prints each run's wall
// time, requests and bytes, then the median. The first run starts with cold connections
// and caches on the index's side; all runs start with an empty client.
// Usage: refresh_bench [--release 2.11.0] [--index-url URL]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/files.hpp"
#include "engine/kb_refresh.hpp"

int main(int argc, char** argv) {
    std::string release = "2.11.0";
    td::engine::RefreshOptions opts;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--release") == 0) release = argv[i + 1];
        if (std::strcmp(argv[i], "--index-url") == 0) {
            opts.index_url = argv[i + 1];
            opts.index_label = "the package index";
        }
    }
    if (opts.index_url.empty()) {
        auto index = td::engine::pip_default_index("pass --index-url");
        if (!index) {
            std::printf("refresh_bench: skipped, %s\n", index.error().message.c_str());
            return 0;
        }
        opts.index_url = index.value();
    }
    opts.releases = {release};
    auto text = td::engine::read_text_file(std::string(TORCHDOCK_SOURCE_DIR) + "/data/torch.json");
    if (!text) {
        std::fprintf(stderr, "refresh_bench: %s\n", text.error().message.c_str());
        return 2;
    }
    std::vector<double> seconds;
    for (int run = 0; run < 3; ++run) {
        auto start = std::chrono::steady_clock::now();
        auto result = td::engine::refresh_torch_data(text.value(), opts);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!result) {
            std::printf("refresh_bench: skipped, the index could not be read: %s\n",
                        result.error().message.c_str());
            return 0;
        }
        seconds.push_back(s);
        std::printf(
            "run %d: torch %s from %s in %.2f s (%ld requests, %lld KiB, %zu facts differ)\n",
            run + 1, release.c_str(), opts.index_label.c_str(), s, result->requests,
            result->bytes / 1024, result->update.changes.size());
    }
    std::sort(seconds.begin(), seconds.end());
    std::printf("median: %.2f s for one release (target: under 10 s)\n", seconds[1]);
    return 0;
}
