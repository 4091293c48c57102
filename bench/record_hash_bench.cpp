// How fast probe-record hashes: SHA-256 of a generated 1 GiB buffer with each implementation
// (probes/record/sha256.hpp, sha256_shani.hpp where the CPU has SHA-NI), in MB/s; then, when
// given a probe-record binary and a site directory, the wall time of one probe-record run over
// it (all distributions, default threads) as the probe itself reports it. Prints figures; not
// a test.  Usage: record_hash_bench [PROBE_RECORD SITE_DIR [DISTS]]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sha256_shani.hpp"

using namespace record;

namespace {

double hash_seconds(Sha256BlockFn blocks, const std::vector<unsigned char>& data,
                    std::string* digest) {
    const auto t0 = std::chrono::steady_clock::now();
    Sha256 h(blocks);
    const std::size_t chunk = 1u << 20;  // as the probe reads
    for (std::size_t i = 0; i < data.size(); i += chunk)
        h.update(data.data() + i, std::min(chunk, data.size() - i));
    unsigned char d[32];
    h.finish(d);
    *digest = urlsafe_b64_nopad(d, 32);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<unsigned char> data(1u << 30);
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;  // xorshift: content that no hardware shortcut skips
    for (auto& b : data) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b = static_cast<unsigned char>(x);
    }
    std::string reference;
    for (const bool portable : {true, false}) {
        const char* name = nullptr;
        const Sha256BlockFn blocks = sha256_select(portable, &name);
        if (!portable && std::string(name) == "portable") {
            std::printf("sha-ni: not available on this CPU\n");
            break;
        }
        std::string digest;
        const double s = hash_seconds(blocks, data, &digest);
        if (reference.empty()) reference = digest;
        std::printf("%-8s 1 GiB in %.2f s: %.0f MB/s%s\n", name, s,
                    static_cast<double>(data.size()) / s / 1e6,
                    digest == reference ? "" : "  DIGEST DIFFERS");
    }
    if (argc >= 3) {
        std::string cmd =
            std::string("'") + argv[1] + "' --site-dirs='" + argv[2] + "'" +
            (argc >= 4 ? std::string(" --dists='") + argv[3] + "'" : "") +
            " | tail -n 1 | python3 -c 'import json,sys; d=json.load(sys.stdin)[\"data\"]; "
            "print(\"probe-record: %d files, %.1f MB hashed in %.2f s on %d threads (%s)\" % "
            "(d[\"files\"], d[\"hashed_bytes\"]/1e6, d[\"seconds\"], d[\"threads\"], "
            "d[\"sha_impl\"]))'";
        const auto t0 = std::chrono::steady_clock::now();
        std::fflush(stdout);  // the figures above before the probe's line
        const int rc = std::system(cmd.c_str());
        std::printf("probe-record run: %.2f s wall (rc %d)\n",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                    rc);
    }
    return 0;
}
