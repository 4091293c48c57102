#include "core/kernels/kernel_audit.hpp"

#include <algorithm>

#include "core/kernels/elf_sections.hpp"

namespace td::kernels {

namespace {

const char* const kExecutableSection = ".nv_fatbin";
const char* const kRelocatableSection = "__nv_relfatbin";

template <typename T>
void sort_unique(std::vector<T>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

KernelImages images_of(const FatbinContainer& c) {
    KernelImages out;
    for (const auto& e : c.entries) {
        if (e.kind == EntryKind::sass) out.sass.push_back(e.arch);
        if (e.kind == EntryKind::ptx) out.ptx.push_back(PtxTarget{e.arch, e.version});
    }
    sort_unique(out.sass);
    sort_unique(out.ptx);
    return out;
}

void add_problem(ObjectKernels& out, const std::string& where, const std::string& what) {
    if (out.problems.size() < kMaxProblems) out.problems.push_back(where + ": " + what);
}

class Collector {
  public:
    Collector(const ByteSource& src, ObjectKernels& out, const AuditLimits& limits)
        : m_src(src), m_out(out), m_limits(limits) {}

    void scan(const std::string& where, std::uint64_t offset, std::uint64_t size, RegionMode mode,
              FatbinGroup& group, bool profiled) {
        FatbinLimits fl = m_limits.fatbin;
        const std::uint64_t budget = m_limits.max_search_bytes > m_out.bytes_searched
                                         ? m_limits.max_search_bytes - m_out.bytes_searched
                                         : 0;
        fl.max_search_bytes = std::min(fl.max_search_bytes, budget);
        const std::uint64_t before = group.containers;
        RegionScan scan = scan_region(m_src, offset, size, mode, fl,
                                      [&](const FatbinContainer& c) { add(c, group, profiled); });
        m_out.bytes_searched += scan.bytes_searched;
        if (scan.truncated) m_out.truncated = true;
        for (const auto& p : scan.problems) add_problem(m_out, where, p);
        if (group.containers > before &&
            std::find(group.sections.begin(), group.sections.end(), where) == group.sections.end())
            group.sections.push_back(where);
        if (mode == RegionMode::sequence && group.containers == before && size > 0)
            add_problem(m_out, where,
                        "section of " + std::to_string(size) + " bytes holds no fatbin container");
    }

  private:
    void add(const FatbinContainer& c, FatbinGroup& group, bool profiled) {
        ++group.containers;
        for (const auto& e : c.entries) {
            ++group.entries;
            if (e.kind == EntryKind::sass) ++group.sass_entries;
            if (e.kind == EntryKind::ptx) ++group.ptx_entries;
            if (e.kind == EntryKind::ltoir || e.kind == EntryKind::other) ++group.other_entries;
            if (e.compressed) ++group.compressed_entries;
        }
        if (c.entries_truncated) {
            m_out.truncated = true;
            add_problem(m_out, "container at offset " + std::to_string(c.offset),
                        "more entries than the limit; the rest were not read");
        }
        KernelImages images = images_of(c);
        merge_images(group.images, images);
        if (!profiled) return;
        for (auto& p : m_out.profiles) {
            if (p.images == images) {
                ++p.containers;
                return;
            }
        }
        if (m_out.profiles.size() < m_limits.max_profiles)
            m_out.profiles.push_back(ContainerProfile{std::move(images), 1});
        else
            m_out.profiles_truncated = true;
    }

    const ByteSource& m_src;
    ObjectKernels& m_out;
    const AuditLimits& m_limits;
};

}  // namespace

void merge_images(KernelImages& into, const KernelImages& more) {
    into.sass.insert(into.sass.end(), more.sass.begin(), more.sass.end());
    into.ptx.insert(into.ptx.end(), more.ptx.begin(), more.ptx.end());
    sort_unique(into.sass);
    sort_unique(into.ptx);
}

KernelImages ObjectKernels::runnable() const {
    KernelImages out = executable.images;
    merge_images(out, embedded.images);
    return out;
}

ObjectKernels audit_object(const ByteSource& src, const AuditLimits& limits) {
    ObjectKernels out;
    out.size = src.size();
    ElfSections elf = read_elf_sections(src);
    out.is_elf = elf.is_elf;
    if (!elf.is_elf || !elf.error.empty()) {
        out.error = elf.error;
        return out;
    }
    Collector collect(src, out, limits);
    if (elf.sections.empty()) {
        // No section table (stripped by hand): every 8-aligned offset may hold a container.
        collect.scan("(whole file)", 0, src.size(), RegionMode::search, out.embedded, true);
        return out;
    }
    // What to read, in file order. Sections of a sound object do not overlap; in a
    // damaged one they may (thousands of headers naming the same bytes), so bytes already
    // read for one section are not read again for another: the work stays within the file.
    struct Region {
        const ElfSection* section;
        RegionMode mode;
        FatbinGroup* group;
        bool profiled;
    };
    std::vector<Region> regions;
    for (const auto& s : elf.sections) {
        const bool executable = s.name == kExecutableSection;
        const bool relocatable = s.name == kRelocatableSection;
        if ((executable || relocatable) && s.outside_file)
            add_problem(out, s.name, "section lies past the end of the file (truncated copy?)");
        if (executable)
            regions.push_back({&s, RegionMode::sequence, &out.executable, true});
        else if (relocatable)
            regions.push_back({&s, RegionMode::sequence, &out.relocatable, false});
        else if (s.type == kShtProgbits && (s.flags & kShfAlloc) && !(s.flags & kShfExecinstr) &&
                 s.size >= 16)
            regions.push_back({&s, RegionMode::search, &out.embedded, true});
    }
    std::stable_sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) {
        return a.section->offset < b.section->offset;
    });
    std::uint64_t read_up_to = 0;
    for (const auto& r : regions) {
        const ElfSection& s = *r.section;
        if (s.size == 0) continue;
        if (s.offset < read_up_to) {
            add_problem(out, s.name, "overlaps a section read before; not read again");
            continue;
        }
        collect.scan(s.name, s.offset, s.size, r.mode, *r.group, r.profiled);
        read_up_to = s.offset + s.size;
    }
    return out;
}

}  // namespace td::kernels
