// core/kernels/arch_census: the arch list is what most containers carry, in the knowledge
// base's form; the rest is named with its count.
#include "core/kernels/arch_census.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace td::kernels;

namespace {

FatbinEntry entry(EntryKind kind, int arch, ArchSuffix suffix = ArchSuffix::none) {
    FatbinEntry e;
    e.kind = kind;
    e.arch.number = arch;
    e.arch.suffix = suffix;
    return e;
}

FatbinContainer container(std::vector<FatbinEntry> entries) {
    FatbinContainer c;
    c.entries = std::move(entries);
    return c;
}

const auto S = EntryKind::sass;
const auto P = EntryKind::ptx;

}  // namespace

TEST_CASE("arch_census: torch 2.9.1's shape: the base list, extras named") {
    ArchCensus census;
    std::vector<FatbinEntry> base;
    for (int a : {70, 75, 80, 86, 90, 100, 120}) base.push_back(entry(S, a));
    for (int i = 0; i < 393; ++i) census.add(container(base));
    for (int i = 0; i < 4; ++i) {
        auto more = base;
        more.push_back(entry(S, 90, ArchSuffix::arch_specific));
        if (i == 0) more.push_back(entry(S, 89));
        census.add(container(more));
    }
    CHECK(census.containers() == 397);
    CHECK(census.arch_list() ==
          std::vector<std::string>{"7.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0"});
    CHECK(census.describe() ==
          "SASS sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 and no PTX, in all 397 fatbin "
          "containers; also, in fewer: sm_89 (1), sm_90a (4)");
}

TEST_CASE("arch_census: +PTX on the arch whose PTX most containers carry") {
    ArchCensus census;
    census.add(container({entry(S, 80), entry(S, 90), entry(P, 90), entry(S, 80)}));
    census.add(container({entry(S, 80), entry(S, 90), entry(P, 90)}));
    census.add(container({entry(S, 80), entry(P, 80)}));
    CHECK(census.arch_list() == std::vector<std::string>{"8.0", "9.0+PTX"});
    CHECK(census.describe() ==
          "SASS sm_80 sm_90 and PTX compute_90, each in at least 2 of 3 fatbin containers; "
          "also, in fewer: compute_80 (1)");
    // A container lists a target once however many entries carry it.
    CHECK(census.targets().front().containers == 3);
}

TEST_CASE("arch_census: PTX alone, suffixes never listed, no majority, nothing") {
    ArchCensus ptx;
    ptx.add(container({entry(P, 75)}));
    CHECK(ptx.arch_list() == std::vector<std::string>{"7.5+PTX"});

    ArchCensus family;
    family.add(container({entry(S, 100, ArchSuffix::family_specific), entry(S, 90)}));
    CHECK(family.arch_list() == std::vector<std::string>{"9.0"});
    CHECK(family.describe() ==
          "SASS sm_90 and no PTX, in the only fatbin container; also, in fewer: sm_100f (1)");

    ArchCensus split;
    split.add(container({entry(S, 80)}));
    split.add(container({entry(S, 90)}));
    CHECK(split.arch_list().empty());  // half is not most
    CHECK(split.describe() ==
          "no SASS and no PTX in more than half of 2 fatbin containers; also, in fewer: sm_80 "
          "(1), sm_90 (1)");

    ArchCensus none;
    CHECK(none.arch_list().empty());
    CHECK(none.describe() == "no fatbin containers");
}
