// LogScanner (a log fed in pieces, lines ended by LF, CR LF or a lone CR), the AnchorIndex
// prefilter, and explain_error_text (one error text, for validate and doctor).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/diagnose/anchor_index.hpp"
#include "core/diagnose/explain.hpp"
#include "engine/project_loader.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

struct Scan {
    std::vector<Explanation> found;
    std::uint64_t lines = 0;
};

// Feeds `log` in pieces of `piece` bytes (0: all at once).
Scan scan(const std::string& log, std::size_t piece = 0) {
    LogScanner sc(test::real_signatures());
    if (piece == 0) {
        sc.feed(log);
    } else {
        for (std::size_t i = 0; i < log.size(); i += piece)
            sc.feed(std::string_view(log).substr(i, piece));
    }
    sc.finish();
    return {sc.explanations(nullptr, test::real_kb()), sc.lines()};
}

std::string summary(const Scan& s) {
    std::string out = std::to_string(s.lines) + " lines:";
    for (const auto& e : s.found) {
        out += " " + e.id;
        for (const auto& ev : e.evidence) out += " [" + ev + "]";
        for (const auto& [k, v] : e.facts) out += " " + k + "=" + v;
    }
    return out;
}

}  // namespace

TEST_CASE("line ends: LF, CR LF and a lone CR each end one line") {
    CHECK(scan("").lines == 0);
    CHECK(scan("a").lines == 1);
    CHECK(scan("a\n").lines == 1);
    CHECK(scan("a\r\n").lines == 1);
    CHECK(scan("a\rb").lines == 2);
    CHECK(scan("\r\n\r\n").lines == 2);
    CHECK(scan("a\r\r\nb\n\n").lines == 4);
}

TEST_CASE("a progress-bar log with only CRs: the error after 24 KB is found on its own line") {
    std::string log;
    for (int i = 0; log.size() < 24000; ++i)
        log +=
            "Downloading shards: " + std::to_string(i % 100) + "%|####      | 2/5 [00:03<00:05]\r";
    log +=
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or "
        "directory\r";
    auto s = scan(log);
    REQUIRE(s.found.size() == 1);
    CHECK(s.found[0].id == "EX101");
    CHECK_THAT(s.found[0].evidence[0], ContainsSubstring("L" + std::to_string(s.lines) + ": "));
    CHECK(s.lines > 300);
}

TEST_CASE("any split into pieces gives the same result as the whole log") {
    const std::string log =
        "\x1b[33m2024-05-01 10:00:00\x1b[0m [rank1]: starting\r\n"
        "Driver Version: 535.104.05   CUDA Version: 12.2\r\n"
        "progress 10%\rprogress 20%\rprogress 100%\r\n"
        "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\r\n"
        "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc (size 9637888)\n"
        "torch.distributed.DistBackendError: NCCL error: unhandled system error (run with "
        "NCCL_DEBUG=INFO for details), NCCL version 2.21.5\r";
    std::string whole = summary(scan(log));
    CHECK_THAT(whole, ContainsSubstring("EX120"));
    CHECK_THAT(whole, ContainsSubstring("EX609"));
    CHECK_THAT(whole, ContainsSubstring("driver=535.104.05"));
    for (std::size_t piece : {1u, 2u, 3u, 7u, 64u, 4096u}) {
        INFO("piece " << piece);
        CHECK(summary(scan(log, piece)) == whole);
    }
}

TEST_CASE("a CR at the end of one piece and the LF at the start of the next end one line") {
    std::string a = "first line\r",
                b = "\nImportError: libnccl.so.2: cannot open shared object file\n";
    LogScanner sc(test::real_signatures());
    sc.feed(a);
    sc.feed(b);
    sc.finish();
    CHECK(sc.lines() == 2);
    auto found = sc.explanations(nullptr, test::real_kb());
    REQUIRE(found.size() == 1);
    CHECK_THAT(found[0].evidence[0], ContainsSubstring("L2: "));
}

TEST_CASE("the 4 KiB line cut holds across pieces; the next line is read normally") {
    std::string head = "OSError: libnccl.so.2: cannot open shared object file ";
    std::string filler(1u << 20, 'x');
    std::string tail_error = "ImportError: libcudart.so.12: cannot open shared object file\n";
    // The NCCL error at the start of a 1 MiB line is found; the cuDNN one after 1 MiB is not;
    // the libcudart error on the next line is.
    std::string log =
        head + filler + "libcudnn_ops.so.9: cannot open shared object file\n" + tail_error;
    for (std::size_t piece : {std::size_t{0}, std::size_t{1000}, std::size_t{65536}}) {
        auto s = scan(log, piece);
        std::set<std::string> ids;
        for (const auto& e : s.found) ids.insert(e.id);
        CHECK(ids == std::set<std::string>{"EX101", "EX103"});
        CHECK(s.lines == 2);
    }
}

TEST_CASE("the anchor index finds every occurrence of overlapping literals") {
    AnchorIndex idx;
    std::vector<std::string> lits = {"he", "she", "his", "hers", "s", "ushers!"};
    for (std::uint32_t i = 0; i < lits.size(); ++i) idx.add(lits[i], i);
    idx.build();
    std::multiset<std::uint32_t> got;
    idx.scan("ushers! his", [&](std::uint32_t id) { got.insert(id); });
    // he(1) she(1) his(1) hers(1) s(3) ushers!(1)
    CHECK(got.count(0) == 1);
    CHECK(got.count(1) == 1);
    CHECK(got.count(2) == 1);
    CHECK(got.count(3) == 1);
    CHECK(got.count(4) == 3);
    CHECK(got.count(5) == 1);
}

TEST_CASE("the anchor index agrees with a plain search on random text") {
    std::mt19937 rng(7);
    auto random_string = [&](std::size_t n, int alphabet) {
        std::string s;
        for (std::size_t i = 0; i < n; ++i) s += static_cast<char>('a' + rng() % alphabet);
        return s;
    };
    for (int round = 0; round < 50; ++round) {
        AnchorIndex idx;
        std::vector<std::string> lits;
        for (std::uint32_t i = 0; i < 30; ++i) {
            lits.push_back(random_string(1 + rng() % 5, 3));
            idx.add(lits.back(), i);
        }
        idx.build();
        std::string text = random_string(200, 3);
        std::set<std::uint32_t> got, want;
        idx.scan(text, [&](std::uint32_t id) { got.insert(id); });
        for (std::uint32_t i = 0; i < lits.size(); ++i)
            if (text.find(lits[i]) != std::string::npos) want.insert(i);
        REQUIRE(got == want);
    }
}

TEST_CASE("explain_error_text: an import error gives the same cause and fix as explain") {
    const std::string text =
        "ImportError: libnccl.so.2: cannot open shared object file: No such file or directory";
    auto e = explain_error_text(text, test::real_signatures(), test::real_kb());
    REQUIRE(e);
    CHECK(e->id == "EX103");
    CHECK(e->family == "import");
    CHECK_THAT(e->cause, ContainsSubstring("libnccl.so.2"));
    CHECK_FALSE(e->fix.empty());
    auto full = explain_log(text, test::real_signatures(), nullptr, test::real_kb());
    REQUIRE_FALSE(full.empty());
    CHECK(full.front().cause == e->cause);
    CHECK(full.front().fix == e->fix);
}

TEST_CASE("explain_error_text: a cuDNN version error names both versions") {
    auto e = explain_error_text(
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (9, 8, 0) but "
        "found runtime version (9, 1, 0). PyTorch already comes bundled with cuDNN.",
        test::real_signatures(), test::real_kb());
    REQUIRE(e);
    CHECK(e->id == "EX130");
    CHECK_THAT(e->cause, ContainsSubstring("9.8.0"));
    CHECK_THAT(e->cause, ContainsSubstring("9.1.0"));
}

TEST_CASE("explain_error_text: text no signature knows gives nothing") {
    CHECK_FALSE(explain_error_text("KeyError: 'lr'", test::real_signatures(), test::real_kb()));
    CHECK_FALSE(explain_error_text("", test::real_signatures(), test::real_kb()));
}
