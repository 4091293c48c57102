#pragma once
// Torch built for another Python than the interpreter the image runs: a venv copied from a
// Python 3.11 stage into a 3.13 one, a PYTHONPATH to another version's site directory. The
// torch probe reports what it saw (`torch_for_other_python`: the directory, the python3.X its
// name or torch's _C extension tag says, and the interpreter that runs); this names it as the
// cause, instead of "no PyTorch found" or torch's own misleading "Failed to load PyTorch C
// extensions". Pure.
#include <nlohmann/json.hpp>
#include <string>

namespace td {

// "torch in /app/.venv/lib/python3.11/site-packages is built for Python 3.11
// (lib/python3.11), but the image runs Python 3.13.5 (/app/.venv/bin/python)"; "" when the
// torch probe saw no such torch.
std::string torch_python_mismatch(const nlohmann::json& torch_data);

// The fix for it.
std::string torch_python_mismatch_fix(const nlohmann::json& torch_data);

// The first other interpreter of the image whose torch imports (the torch probe's
// `other_interpreters`): where the image's torch is when the python it runs has none.
struct TorchElsewhere {
    std::string path, torch;  // both empty when there is none
};
TorchElsewhere torch_in_other_interpreter(const nlohmann::json& torch_data);

}  // namespace td
