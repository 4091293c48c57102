#pragma once
// The NVIDIA container toolkit's admission rule: an image's NVIDIA_REQUIRE_CUDA (set by
// nvidia/cuda, NGC and torchdock's own images) is checked by nvidia-container-cli before the
// container starts, and a driver that does not meet it is refused ("requirement error:
// unsatisfied condition: cuda>=12.8") unless NVIDIA_DISABLE_REQUIRE is set. Pure.
//
// The expression (libnvidia-container src/dsl.c, dsl_evaluate): groups separated by spaces
// are alternatives (any one may hold); within a group, comma-separated conditions must all
// hold. Conditions are NAME OP VALUE with OP one of = != < <= > >=, on the properties cuda
// (the CUDA version the driver supports), driver (its version), arch (the GPU's compute
// capability) and brand (the GPU's brand as NVML names it).
#include <string>

namespace td {

struct RequirementVerdict {
    enum class Outcome { Met, NotMet, Unknown };
    Outcome outcome = Outcome::Unknown;
    std::string detail;  // which condition decided, in words
};

// `driver_cuda` is the CUDA version the driver supports ("12.2"), empty when unknown;
// `driver` its version ("535.104.05"). A group whose outcome rests on arch or brand (not
// known here) is unknown unless another of its conditions already fails it.
RequirementVerdict evaluate_require_cuda(const std::string& expression, const std::string& driver,
                                         const std::string& driver_cuda);

}  // namespace td
