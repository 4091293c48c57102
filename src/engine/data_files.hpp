#pragma once
// One loader for the data files a command reads (data/): the knowledge base always, and as
// the command asks, explain's signatures, vocabularies and catalogs, and preflight's
// forward-compatibility table. explain, doctor, preflight, node-check and validate all load
// through it, so a data file is found, read and refused the same way everywhere.
#include <filesystem>
#include <optional>
#include <string>

#include "core/diagnose/explain.hpp"
#include "core/diagnose/preflight.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "util/result.hpp"

namespace td::engine {

struct DataNeeds {
    bool signatures = false;      // error_signatures/, vocabularies/, catalogs/
    bool forward_compat = false;  // forward_compat.json
};

struct DataFiles {
    std::filesystem::path dir;
    KnowledgeBase kb;
    std::optional<ErrorSignatures> signatures;    // when asked for
    std::optional<ForwardCompat> forward_compat;  // when asked for
};

// The data directory is `flag` if given, else $TORCHDOCK_DATA, else the one installed beside
// the binary (find_data_dir). The error is the first file's that does not load.
Result<DataFiles> load_data_files(const std::optional<std::string>& flag, DataNeeds needs);

}  // namespace td::engine
