#include "app/version.hpp"

#include "core/knowledge/kb_stamp.hpp"
#include "engine/files.hpp"
#include "engine/install_layout.hpp"

namespace td::app {

// Generated at build time by cmake/commit_stamp.cmake.
extern const char* const k_build_version;
extern const char* const k_build_commit;

std::string version_text() {
    auto data = engine::locate_data_dir(std::nullopt);
    auto text = engine::read_text_file(data.path / k_kb_stamp_file);
    std::string kb;
    if (!text) {
        kb = "knowledge base not found: " + text.error().message;
    } else if (auto date = parse_kb_date(text.value()); !date) {
        kb = "knowledge base of unknown date: " + date.error().message;
    } else {
        kb = "knowledge base " + date.value();
    }
    return std::string("torchdock ") + k_build_version + " (commit " + k_build_commit + ", " + kb +
           ")";
}

}  // namespace td::app
