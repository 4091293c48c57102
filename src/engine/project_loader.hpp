#pragma once
// Loads the inputs of rendering from disk: the knowledge base (data/*.json) and the
// manifests with their lock files.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/explain.hpp"
#include "core/diagnose/preflight.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "core/render/render_plan.hpp"
#include "util/result.hpp"

namespace td::engine {

// The knowledge base directory: `flag` if given, else $TORCHDOCK_DATA, else relative to the
// binary (engine/install_layout.hpp).
std::filesystem::path find_data_dir(const std::optional<std::string>& flag);

Result<KnowledgeBase> load_knowledge_base(const std::filesystem::path& data_dir);

// The knowledge base of `data_dir` as load_knowledge_base would read it once `file` (one of
// KnowledgeBase::file_names()) holds `text`: the gate `kb refresh` passes before it writes, so
// it never writes a file that every command would then refuse. The error is the loader's.
Result<KnowledgeBase> load_knowledge_base_with(const std::filesystem::path& data_dir,
                                               const std::string& file, const std::string& text);

// The error signatures of `explain`: every <data_dir>/error_signatures/*.json (one file per
// family), read in file-name order. Errors name the file and the JSON path.
Result<ErrorSignatures> load_error_signatures(const std::filesystem::path& data_dir);

// <data_dir>/forward_compat.json: which GPUs take CUDA forward compatibility (preflight's).
Result<ForwardCompat> load_forward_compat(const std::filesystem::path& data_dir);

// Every manifests/*.json (not *.lock.json), sorted by file name, with its lock file
// <stem>.lock.json when present. An empty or missing directory is an error.
Result<std::vector<ManifestSource>> load_manifests(const std::filesystem::path& dir);

// manifests/<stem>.json -> manifests/<stem>.lock.json
std::filesystem::path lock_path_for(const std::filesystem::path& manifest);

}  // namespace td::engine
