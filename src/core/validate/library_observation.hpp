#pragma once
// What the loader did, weighed against what probe-libs' model of the loader predicts. Pure.
// The torch probe reads /proc/self/maps after `import torch`: every shared object the
// process mapped, whether the loader found it by RPATH, LD_LIBRARY_PATH or ld.so.cache, or
// torch's own Python code preloaded it by path from another sys.path entry. Where torch
// imported, that list is the evidence; the model speaks only for what the process did not
// load (or where no process ran), and where the two disagree both are kept to be named.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace td {

// A soname the model could not resolve for an object the process did load: the process found
// it (`mapped` is the file, "" when no mapped file carries that name).
struct FoundByProcess {
    std::string soname, needed_by, mapped;
};

// A soname the model resolves to one file while the process mapped another copy.
struct LoaderDisagreement {
    std::string soname, model_path, mapped_path;
};

struct LibraryObservation {
    bool observed = false;  // torch imported and its mapped objects were read
    nlohmann::json unresolved = nlohmann::json::array();  // neither model nor process resolves
    std::vector<FoundByProcess> found_by_process;
    std::vector<LoaderDisagreement> disagreements;
};

// libs: probe-libs' data ({libraries, unresolved}); torch: the torch probe's data (its
// `mapped_objects` count only where `torch` is set, i.e. the import succeeded).
LibraryObservation observe_libraries(const nlohmann::json& libs, const nlohmann::json& torch);

// "libcusparse.so.12 (needed by .../libtorch_cuda.so) mapped from .../nvidia/cusparse/lib/...",
// for a report's message.
std::string describe(const FoundByProcess& f);
std::string describe(const LoaderDisagreement& d);

}  // namespace td
