#pragma once
// A point on the monotonic clock by which a command must be done, with a reserve kept back
// for what follows the bounded work (node-check: the verdict, its report and `--drain`).
// Every call made under it asks `cap` for its time-out: what it would wait anyway, cut to the
// time left before the reserve. A Deadline made with the default constructor bounds nothing.
#include <chrono>

namespace td {

class Deadline {
  public:
    using Clock = std::chrono::steady_clock;
    using ms = std::chrono::milliseconds;

    Deadline() = default;  // no bound
    // `total` from `now`, of which the last `reserve` is not handed to the work.
    static Deadline after(ms total, ms reserve, Clock::time_point now = Clock::now());

    bool bounded() const { return m_bounded; }
    ms reserve() const { return m_reserve; }
    // Time left for the work (before the reserve), never negative; ms::max() when unbounded.
    ms left(Clock::time_point now = Clock::now()) const;
    // The work's time is spent (left() is 0). Never true when unbounded.
    bool passed(Clock::time_point now = Clock::now()) const;
    // The time-out of one call that would wait `wanted` (0: no limit of its own): `wanted`
    // cut to left(); 0 when no time is left (the call must not start). Unbounded: `wanted`.
    ms cap(ms wanted, Clock::time_point now = Clock::now()) const;
    // The same for a cleanup call (removing a container): it may also take half the reserve.
    ms cap_cleanup(ms wanted, Clock::time_point now = Clock::now()) const;

  private:
    bool m_bounded = false;
    Clock::time_point m_work_end{};  // the end less the reserve
    ms m_reserve{0};
};

// node-check's reserve for a deadline of `total`: 5 s, or a quarter of a shorter deadline
// under 20 s (a 10 s deadline keeps 2.5 s).
std::chrono::milliseconds deadline_reserve(std::chrono::milliseconds total);

}  // namespace td
