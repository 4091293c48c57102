#include "core/kernels/arch_census.hpp"

#include <algorithm>

namespace td::kernels {

namespace {

bool before(const ArchCensus::Target& a, const ArchCensus::Target& b) {
    if (a.arch != b.arch) return a.arch < b.arch;
    return !a.ptx && b.ptx;
}

std::string name_of(const ArchCensus::Target& t) { return t.arch.name(t.ptx ? "compute_" : "sm_"); }

}  // namespace

void ArchCensus::add(const FatbinContainer& container) {
    ++m_containers;
    std::vector<Target> seen;
    for (const auto& e : container.entries) {
        if (e.kind != EntryKind::sass && e.kind != EntryKind::ptx) continue;
        Target t{e.arch, e.kind == EntryKind::ptx, 0};
        if (std::none_of(seen.begin(), seen.end(),
                         [&](const Target& s) { return s.arch == t.arch && s.ptx == t.ptx; }))
            seen.push_back(t);
    }
    for (const auto& t : seen) {
        auto it = std::lower_bound(m_targets.begin(), m_targets.end(), t, before);
        if (it == m_targets.end() || it->arch != t.arch || it->ptx != t.ptx)
            it = m_targets.insert(it, t);
        ++it->containers;
    }
}

bool ArchCensus::listed(const Target& t) const {
    return t.arch.suffix == ArchSuffix::none && t.containers * 2 > m_containers;
}

std::vector<std::string> ArchCensus::arch_list() const {
    std::vector<std::string> out;
    std::vector<int> numbers;
    for (const auto& t : m_targets)
        if (listed(t) && std::find(numbers.begin(), numbers.end(), t.arch.number) == numbers.end())
            numbers.push_back(t.arch.number);
    for (int n : numbers) {
        bool ptx = std::any_of(m_targets.begin(), m_targets.end(), [&](const Target& t) {
            return listed(t) && t.ptx && t.arch.number == n;
        });
        ComputeCapability cc{n / 10, n % 10};
        out.push_back(cc.text() + (ptx ? "+PTX" : ""));
    }
    return out;
}

std::string ArchCensus::describe() const {
    if (m_containers == 0) return "no fatbin containers";
    std::string sass, ptx, fewer;
    std::uint64_t least = m_containers;
    for (const auto& t : m_targets) {
        if (listed(t)) {
            (t.ptx ? ptx : sass) += " " + name_of(t);
            least = std::min(least, t.containers);
        } else {
            fewer += (fewer.empty() ? "" : ", ") + name_of(t) + " (" +
                     std::to_string(t.containers) + ")";
        }
    }
    std::string out = sass.empty() ? "no SASS" : "SASS" + sass;
    out += ptx.empty() ? " and no PTX" : " and PTX" + ptx;
    if (!sass.empty() || !ptx.empty())
        out += m_containers == 1 ? std::string(", in the only fatbin container")
               : least == m_containers
                   ? ", in all " + std::to_string(m_containers) + " fatbin containers"
                   : ", each in at least " + std::to_string(least) + " of " +
                         std::to_string(m_containers) + " fatbin containers";
    else
        out += " in more than half of " + std::to_string(m_containers) + " fatbin containers";
    if (!fewer.empty()) out += "; also, in fewer: " + fewer;
    return out;
}

}  // namespace td::kernels
