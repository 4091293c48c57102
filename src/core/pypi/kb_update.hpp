#pragma once
// Applies index facts (release_facts) to the text of data/torch.json: sets each fact at
// its path in the release's entry, records its source under the entry's "evidence"
// (keyed by the same path), and adds releases the file does not have. Reports each
// fact that differs from the file. Pure: text in, text out.
#include <string>
#include <vector>

#include "core/pypi/release_facts.hpp"
#include "util/result.hpp"

namespace td::pypi {

struct FactChange {
    std::string release, path;
    std::string before, after;  // rendered values; before is "(absent)" for a new fact
    std::string source;
    bool new_release = false;
};

struct TorchDataUpdate {
    std::string text;  // the new torch.json (same layout: 2-space JSON, trailing newline)
    std::vector<FactChange> changes;
};

// `torch_json` is the current data/torch.json. Facts missing from a release's entry are
// changes too (a release the index has and the file lacks is added with its facts).
// The releases data/torch.json lists, in file order.
Result<std::vector<std::string>> torch_data_versions(const std::string& torch_json);

Result<TorchDataUpdate> update_torch_data(const std::string& torch_json,
                                          const std::vector<ReleaseFacts>& releases);

}  // namespace td::pypi
