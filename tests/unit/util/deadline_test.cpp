#include "util/deadline.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace td;
using namespace std::chrono_literals;
using ms = std::chrono::milliseconds;

TEST_CASE("deadline: the work gets the total less the reserve, on the monotonic clock") {
    const auto t0 = Deadline::Clock::time_point{} + 1000s;
    Deadline d = Deadline::after(10s, 2500ms, t0);
    CHECK(d.bounded());
    CHECK(d.reserve() == 2500ms);
    CHECK(d.left(t0) == 7500ms);
    CHECK(d.left(t0 + 7s) == 500ms);
    CHECK(d.left(t0 + 7500ms) == 0ms);
    CHECK(d.left(t0 + 60s) == 0ms);  // never negative
    CHECK_FALSE(d.passed(t0 + 7499ms));
    CHECK(d.passed(t0 + 7500ms));
}

TEST_CASE("deadline: a call's time-out is its own, cut to the time left; none left is 0") {
    const auto t0 = Deadline::Clock::time_point{} + 1000s;
    Deadline d = Deadline::after(50s, 5s, t0);
    CHECK(d.cap(30s, t0) == 30s);                   // room for the call's own time-out
    CHECK(d.cap(30s, t0 + 20s) == 25s);             // cut: 45 s of work, 20 used
    CHECK(d.cap(10s, t0 + 44s) == 1s);              // the ping of a dead socket: what is left
    CHECK(d.cap(0ms, t0 + 40s) == 5s);              // a stream with no limit of its own gets one
    CHECK(d.cap(30s, t0 + 45s) == 0ms);             // spent: the call must not start
    CHECK(d.cap(30s, t0 + 49s) == 0ms);             // in the reserve: still nothing for work
    CHECK(d.cap_cleanup(30s, t0 + 45s) == 2500ms);  // cleanup may take half the reserve
    CHECK(d.cap_cleanup(30s, t0 + 47s) == 500ms);
    CHECK(d.cap_cleanup(30s, t0 + 48s) == 0ms);  // the rest is the verdict's and the drain's
    CHECK(d.cap_cleanup(1s, t0) == 1s);
}

TEST_CASE("deadline: unbounded passes every time-out through") {
    Deadline none;
    CHECK_FALSE(none.bounded());
    CHECK_FALSE(none.passed());
    CHECK(none.cap(30s) == 30s);
    CHECK(none.cap(0ms) == 0ms);
    CHECK(none.cap_cleanup(30s) == 30s);
    CHECK(none.left() == ms::max());
}

TEST_CASE("deadline: odd totals and reserves stay in range") {
    const auto t0 = Deadline::Clock::time_point{} + 1000s;
    CHECK(Deadline::after(0s, 5s, t0).left(t0) == 0ms);
    CHECK(Deadline::after(-3s, 1s, t0).passed(t0));
    CHECK(Deadline::after(4s, 9s, t0).reserve() == 4s);  // never more reserve than total
    CHECK(Deadline::after(4s, -1s, t0).left(t0) == 4s);
}

TEST_CASE("deadline: node-check keeps 5 s, or a quarter of a short deadline") {
    CHECK(deadline_reserve(50s) == 5s);
    CHECK(deadline_reserve(20s) == 5s);
    CHECK(deadline_reserve(10s) == 2500ms);
    CHECK(deadline_reserve(1s) == 250ms);
    CHECK(deadline_reserve(0s) == 0ms);
    CHECK(deadline_reserve(3600s) == 5s);
}
