#pragma once
// A build's arch list from its fatbin containers: how many containers carry each target,
// and the list in the knowledge base's form ("7.0", "8.6", "12.0+PTX", as
// TORCH_CUDA_ARCH_LIST and data/torch.json write it).
//
// Which targets make the list: those without an a/f suffix that more than half of the
// containers carry. A torch build compiles every CUDA source for its arch list, and a few
// sources for more (torch 2.9.1+cu128's libtorch_cuda.so: 393 of 397 containers hold
// exactly sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120; 4 add sm_90a, 2 sm_100a, 1 sm_89 and
// sm_120a for kernels that need those GPUs); the extra ones are named in describe(), not
// listed. Arch-specific targets (sm_90a) are never listed: "9.0" promises forward
// compatibility within the major that sm_90a does not give.
// Part of the kernels domain: pure, C++17, standard library only (see arch.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/kernels/arch.hpp"
#include "core/kernels/fatbin.hpp"

namespace td::kernels {

class ArchCensus {
  public:
    struct Target {
        Arch arch;
        bool ptx = false;  // compute_XY; else SASS sm_XY
        std::uint64_t containers = 0;
    };

    // Counts each distinct target of the container once.
    void add(const FatbinContainer& container);

    std::uint64_t containers() const { return m_containers; }
    // Sorted by arch, SASS before PTX.
    const std::vector<Target>& targets() const { return m_targets; }
    // The build's arch list, ascending; empty when no target reaches a majority.
    std::vector<std::string> arch_list() const;
    // "SASS sm_70 sm_75 and PTX compute_75, each in at least 393 of 397 fatbin containers;
    // also, in fewer: sm_89 (1), sm_90a (4)"; "no fatbin containers" when none were seen.
    std::string describe() const;

  private:
    bool listed(const Target& t) const;

    std::uint64_t m_containers = 0;
    std::vector<Target> m_targets;
};

}  // namespace td::kernels
