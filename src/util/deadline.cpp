#include "util/deadline.hpp"

#include <algorithm>

namespace td {

Deadline Deadline::after(ms total, ms reserve, Clock::time_point now) {
    Deadline d;
    d.m_bounded = true;
    d.m_reserve = std::clamp(reserve, ms{0}, std::max(total, ms{0}));
    d.m_work_end = now + std::max(total, ms{0}) - d.m_reserve;
    return d;
}

Deadline::ms Deadline::left(Clock::time_point now) const {
    if (!m_bounded) return ms::max();
    if (now >= m_work_end) return ms{0};
    return std::chrono::duration_cast<ms>(m_work_end - now);
}

bool Deadline::passed(Clock::time_point now) const { return m_bounded && left(now) == ms{0}; }

Deadline::ms Deadline::cap(ms wanted, Clock::time_point now) const {
    if (!m_bounded) return wanted;
    ms l = left(now);
    if (l == ms{0}) return ms{0};
    return wanted <= ms{0} ? l : std::min(wanted, l);
}

Deadline::ms Deadline::cap_cleanup(ms wanted, Clock::time_point now) const {
    if (!m_bounded) return wanted;
    return cap(wanted, now - m_reserve / 2);
}

std::chrono::milliseconds deadline_reserve(std::chrono::milliseconds total) {
    using namespace std::chrono_literals;
    return std::min<std::chrono::milliseconds>(5000ms, std::max(total, 0ms) / 4);
}

}  // namespace td
