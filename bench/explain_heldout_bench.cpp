// Held-out explain score: prints figures, asserts nothing.
// Runs every log of tests/data/explain_heldout/ (real logs in families nothing in data/ was
// written from; see its README.md) through the real data files, as `torchdock explain` reads
// them, and prints per tool: right, wrong root cause, meaning not right, unknown, and the
// grade of the first answer. Then leave-one-tool-out: each catalog removed in turn, that
// tool's logs scored again (what the catalog adds over the signatures and the other
// catalogs). Last, the time per log.
// Usage: explain_heldout_bench [--dir DIR] [--data DATA_DIR] [--verbose]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/diagnose/explain.hpp"
#include "diagnose/explain_heldout.hpp"
#include "engine/project_loader.hpp"

namespace {

namespace fs = std::filesystem;
using td::test::HeldoutGrade;

struct Tally {
    int right = 0, wrong_root = 0, wrong_meaning = 0, unknown = 0;
    int total() const { return right + wrong_root + wrong_meaning + unknown; }
    void add(HeldoutGrade g) {
        if (g == HeldoutGrade::Right) ++right;
        if (g == HeldoutGrade::WrongRootCause) ++wrong_root;
        if (g == HeldoutGrade::WrongMeaning) ++wrong_meaning;
        if (g == HeldoutGrade::Unknown) ++unknown;
    }
};

void print_row(const std::string& name, const Tally& t) {
    std::printf(
        "  %-16s %3d logs  right %3d (%3.0f%%)  wrong root cause %2d  meaning not right %2d  "
        "unknown %2d\n",
        name.c_str(), t.total(), t.right, t.total() ? 100.0 * t.right / t.total() : 0.0,
        t.wrong_root, t.wrong_meaning, t.unknown);
}

// The catalogs (data/catalogs/<family>.json) that speak for a held-out tool's logs.
std::set<std::string> catalogs_of(const std::string& tool) {
    if (tool == "loader") return {"glibc"};
    if (tool == "python-import") return {"python", "numpy"};
    if (tool == "docker") return {"docker", "buildkit"};
    return {tool};
}

}  // namespace

int main(int argc, char** argv) {
    const fs::path root = TORCHDOCK_SOURCE_DIR;
    fs::path dir = root / "tests/data/explain_heldout";
    fs::path data = root / "data";
    bool verbose = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--dir" && i + 1 < argc)
            dir = argv[++i];
        else if (a == "--data" && i + 1 < argc)
            data = argv[++i];
        else if (a == "--verbose")
            verbose = true;
        else {
            std::fprintf(
                stderr, "usage: explain_heldout_bench [--dir DIR] [--data DATA_DIR] [--verbose]\n");
            return 2;
        }
    }
    auto kb = td::engine::load_knowledge_base(data);
    auto sigs = td::engine::load_error_signatures(data);
    if (!kb || !sigs) {
        std::fprintf(stderr, "explain_heldout_bench: %s\n",
                     (!kb ? kb.error() : sigs.error()).message.c_str());
        return 2;
    }
    auto cases = td::test::load_heldout(dir);
    for (const auto& c : cases)
        if (!c.problem.empty()) {
            std::fprintf(stderr, "explain_heldout_bench: %s\n", c.problem.c_str());
            return 2;
        }
    std::size_t catalog_entries = 0;
    for (const auto& s : sigs->signatures) catalog_entries += s.catalog ? 1 : 0;
    std::printf("%zu held-out logs; %zu signatures and entries (%zu from catalogs)\n\n",
                cases.size(), sigs->signatures.size(), catalog_entries);

    std::map<std::string, Tally> by_tool;
    Tally all;
    std::map<std::string, int> first_grade;
    double slowest = 0, total_s = 0;
    for (const auto& c : cases) {
        auto t0 = std::chrono::steady_clock::now();
        auto found = td::explain_log(c.log, sigs.value(), nullptr, kb.value());
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        total_s += s;
        slowest = std::max(slowest, s);
        auto g = td::test::grade_heldout(c, found);
        by_tool[c.tool].add(g);
        all.add(g);
        ++first_grade[found.empty() ? "unknown" : found.front().grade()];
        if (verbose)
            std::printf("%-60s %-18s %s\n", c.file.c_str(),
                        g == HeldoutGrade::Right            ? "right"
                        : g == HeldoutGrade::WrongRootCause ? "WRONG ROOT CAUSE"
                        : g == HeldoutGrade::WrongMeaning   ? "meaning not right"
                                                            : "unknown",
                        found.empty() ? "-" : found.front().id.c_str());
    }
    std::printf("held-out score, all data files:\n");
    for (const auto& [tool, t] : by_tool) print_row(tool, t);
    print_row("all", all);
    std::printf("  first answer's grade:");
    for (const auto& [g, n] : first_grade) std::printf(" %s %d;", g.c_str(), n);
    std::printf("\n\nleave-one-tool-out (the tool's catalogs removed, its logs scored):\n");
    for (const auto& [tool, with] : by_tool) {
        auto families = catalogs_of(tool);
        td::ErrorSignatures less;
        less.facts = sigs->facts;
        less.providers = sigs->providers;
        std::size_t removed = 0;
        for (const auto& s : sigs->signatures) {
            if (s.catalog && families.count(s.family)) {
                ++removed;
                continue;
            }
            less.signatures.push_back(s);
        }
        less.build_index();
        Tally without;
        for (const auto& c : cases)
            if (c.tool == tool)
                without.add(
                    td::test::grade_heldout(c, td::explain_log(c.log, less, nullptr, kb.value())));
        std::printf("  %-16s without its %zu catalog entries: right %d of %d (with them: %d)\n",
                    tool.c_str(), removed, without.right, without.total(), with.right);
    }
    std::printf("\ntime per log: mean %.2f ms, slowest %.2f ms\n",
                cases.empty() ? 0.0 : 1000.0 * total_s / static_cast<double>(cases.size()),
                1000.0 * slowest);
    return 0;
}
