#include "engine/project_loader.hpp"

#include <algorithm>
#include <cstdlib>

#include "engine/files.hpp"
#include "engine/install_layout.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;

namespace {
// How to point torchdock at its knowledge base, for errors that cannot read it.
const char* const k_data_fix =
    " (set --data DIR or $TORCHDOCK_DATA; without them the data is looked for in "
    "../share/torchdock/data from the binary's directory)";
}  // namespace

fs::path find_data_dir(const std::optional<std::string>& flag) {
    return locate_data_dir(flag).path;
}

Result<KnowledgeBase> load_knowledge_base(const fs::path& data_dir) {
    return load_knowledge_base_with(data_dir, "", "");
}

Result<KnowledgeBase> load_knowledge_base_with(const fs::path& data_dir, const std::string& file,
                                               const std::string& replacement) {
    std::map<std::string, std::string> texts;
    for (const auto& name : KnowledgeBase::file_names()) {
        if (name == file) {
            texts[name] = replacement;
            continue;
        }
        auto text = read_text_file(data_dir / name);
        if (!text)
            return Error{ErrorKind::Config, "knowledge base: " + text.error().message + k_data_fix};
        texts[name] = std::move(text.value());
    }
    return KnowledgeBase::parse(texts);
}

Result<ForwardCompat> load_forward_compat(const fs::path& data_dir) {
    auto text = read_text_file(data_dir / "forward_compat.json");
    if (!text) return Error{ErrorKind::Config, text.error().message};
    return ForwardCompat::parse(text.value());
}

Result<ErrorSignatures> load_error_signatures(const fs::path& data_dir) {
    fs::path dir = data_dir / "error_signatures";
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return Error{ErrorKind::Config,
                     "error signatures: " + dir.string() + " is not a directory" + k_data_fix};
    // The signatures, then the vocabularies (data/vocabularies/, optional): what codes and
    // messages mean by their definitions, and what provides a missing file; then the
    // catalogs (data/catalogs/, optional): every error message of the pipeline's tools.
    std::vector<std::pair<std::string, std::string>> files;
    for (const fs::path& d : {dir, data_dir / "vocabularies", data_dir / "catalogs"}) {
        if (d != dir && !fs::is_directory(d, ec)) continue;
        std::vector<fs::path> paths;
        for (const auto& entry : fs::directory_iterator(d, ec)) {
            std::string name = entry.path().filename().string();
            if (entry.is_regular_file() && ends_with(name, ".json") && name[0] != '.')
                paths.push_back(entry.path());
        }
        if (ec) return Error{ErrorKind::Io, "cannot list " + d.string() + ": " + ec.message()};
        std::sort(paths.begin(), paths.end());
        if (d == dir && paths.empty())
            return Error{ErrorKind::Config, "error signatures: no *.json in " + dir.string()};
        for (const auto& p : paths) {
            auto text = read_text_file(p);
            if (!text) return Error{ErrorKind::Config, text.error().message};
            files.emplace_back(p.string(), std::move(text.value()));
        }
    }
    return ErrorSignatures::parse_files(files);
}

fs::path lock_path_for(const fs::path& manifest) {
    return manifest.parent_path() / (manifest.stem().string() + ".lock.json");
}

Result<std::vector<ManifestSource>> load_manifests(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec))
        return Error{ErrorKind::Config, "manifest directory " + dir.string() + " does not exist"};
    if (!fs::is_directory(dir, ec))
        return Error{ErrorKind::Config, "--manifests " + dir.string() +
                                            " is not a directory (name the directory "
                                            "that holds the *.json manifests)"};
    std::vector<fs::path> paths;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        std::string name = entry.path().filename().string();
        if (!ends_with(name, ".json") || ends_with(name, ".lock.json") || name[0] == '.') continue;
        // Every *.json is a manifest: one that cannot be read is an error, never skipped
        // (its family would silently vanish from the rendered tree).
        std::error_code kind_ec;
        if (!entry.is_regular_file(kind_ec)) {
            auto st = entry.symlink_status(kind_ec);
            std::string what = fs::is_symlink(st)     ? "a symlink to nothing or to a non-file"
                               : fs::is_directory(st) ? "a directory"
                               : fs::is_fifo(st)      ? "a FIFO"
                               : fs::is_character_file(st) || fs::is_block_file(st)
                                   ? "a device"
                                   : "not a regular file";
            return Error{ErrorKind::Config, "manifest " + terminal_text(entry.path().string()) +
                                                " is " + what +
                                                "; every *.json in the manifest directory must "
                                                "be a manifest file"};
        }
        paths.push_back(entry.path());
    }
    if (ec) return Error{ErrorKind::Io, "cannot list " + dir.string() + ": " + ec.message()};
    if (paths.empty()) return Error{ErrorKind::Config, "no manifests (*.json) in " + dir.string()};
    std::sort(paths.begin(), paths.end());
    std::vector<ManifestSource> out;
    for (const auto& p : paths) {
        ManifestSource src;
        src.path = p.lexically_normal().generic_string();
        auto text = read_text_file(p);
        if (!text) return text.error();
        src.text = std::move(text.value());
        fs::path lock = lock_path_for(p);
        if (fs::exists(fs::symlink_status(lock, ec))) {
            auto lock_text = read_text_file(lock);
            if (!lock_text) return lock_text.error();
            src.lock_path = lock.lexically_normal().generic_string();
            src.lock_text = std::move(lock_text.value());
        }
        out.push_back(std::move(src));
    }
    return out;
}

}  // namespace td::engine
