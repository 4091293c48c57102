#pragma once
// A fingerprint (core/doctor's schema 1) as flat leaves for `torchdock diff`, with list
// elements named by what they are, never by where they sit in the list. Pure.
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace td {

struct FlatLeaf {
    std::string value;    // as shown
    std::string version;  // what version comparison uses (libraries: version or soname number)
};

struct FlatFingerprint {
    // "torch.version", "findings[DR110].severity", "kernels[/x/libtorch_cuda.so].sass",
    // "libraries[cudnn]", "env.LD_LIBRARY_PATH"
    std::map<std::string, FlatLeaf> leaves;
    // Each list element that is an object, by its identity path ("findings[DR110]",
    // "kernels[/x/libtorch_cuda.so]") with a one-line summary of the whole element: an
    // element on one side only is one difference, not one per field.
    std::map<std::string, std::string> elements;
};

// Objects flatten to "a.b". Lists of objects are keyed by the first of id, path, name,
// soname or arch that every element has ("findings[DR110]", two elements with one key get
// "#2" in the order of their content); libraries by name (or the soname's name), duplicates
// by name, unresolved by soname, gpus by index (GPU i is device i), kernel objects by their
// path below site-packages (or the whole path elsewhere), so a moved venv is no difference. Lists
// of plain values, and lists of objects that nothing names, are compared as sets: one leaf, sorted,
// without repeats ("sm_80 sm_90"). torch.arch_list keeps its order. Null and missing are the same;
// so is an empty list.
FlatFingerprint flatten_fingerprint(const nlohmann::json& fingerprint);

}  // namespace td
