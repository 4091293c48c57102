#pragma once
// `torchdock kb refresh`: reads torch releases from a package index (PyPI by default) and
// computes the update of data/torch.json (pure: core/pypi/release_facts, kb_update).
// Only this command uses the network; render, validate and the rest never do.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/pypi/kb_update.hpp"
#include "engine/pypi_client.hpp"
#include "util/result.hpp"

namespace td::engine {

// The lock file in the data directory that a writing `kb refresh` holds (flock) while it
// reads, updates and replaces torch.json.
inline constexpr const char* k_data_lock_file = ".torchdock-kb.lock";

struct RefreshOptions {
    std::string index_url;  // required: the caller asks pip_default_index() when none is named
    // How sources name the index: "PyPI" for pip's default; never a host name.
    std::string index_label = "PyPI";
    // Releases to read; empty: every final release on the index from the oldest release
    // data/torch.json lists on (newer ones are added).
    std::vector<std::string> releases;
    int jobs = 8;  // requests in flight at once
    // Told what is being read ("torch 2.9.1 (3 of 12)"), for progress lines; may be empty.
    std::function<void(const std::string&)> on_progress;
};

// The CUDA targets compiled into a wheel, in the knowledge base's form ("8.0", "9.0+PTX").
struct WheelArchList {
    std::vector<std::string> entries;
    std::string source;  // wheel file name, sha256 and the member the list was read from
};

// The seam for reading arch lists from the binaries (the SASS/PTX targets of the CUDA
// fatbin containers in torch/lib/libtorch_cuda.so, streamed with range requests):
// FatbinArchReader (wheel_arch_reader.hpp) is the real one. Without a reader refresh leaves
// arch lists as the data file has them.
class WheelArchReader {
  public:
    virtual ~WheelArchReader() = default;
    // Called for the default build of each release read, unless it is a CPU build.
    // nullopt: the wheel has no CUDA code (a CPU build); Error: it could not be read.
    virtual Result<std::optional<WheelArchList>> read(PypiClient& client,
                                                      const pypi::IndexFile& wheel) = 0;
};

struct RefreshResult {
    // The update of the torch.json text refresh was given. A writer applies `facts` again
    // (pypi::update_torch_data) to the file as it is once it holds the data directory's lock.
    pypi::TorchDataUpdate update;
    std::vector<pypi::ReleaseFacts> facts;
    std::vector<std::string> releases;  // read from the index, in order
    // Releases the file lacks and the index has no CPython 3 Linux wheel for: not added
    // (the knowledge base needs a Python range), with the reason.
    std::vector<std::string> skipped;
    long requests = 0;
    long long bytes = 0;
};

// `torch_json` is the current data/torch.json text.
Result<RefreshResult> refresh_torch_data(const std::string& torch_json, const RefreshOptions& opts,
                                         WheelArchReader* arch_reader = nullptr);

}  // namespace td::engine
