// libFuzzer target: any bytes as torchdock.json (settings: mirrors, package indexes, netrc)
// must give settings or diagnostics, never a crash; accepted index URLs pass their own check.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/build/settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    td::Diagnostics diags("torchdock.json");
    td::Settings s = td::parse_settings(text, diags);
    for (const auto& d : diags.items())
        if (d.message.empty()) std::abort();
    if (diags.empty()) {
        if (!s.indexes.pypi.empty() && !td::check_index_url(s.indexes.pypi).empty()) std::abort();
        if (!s.indexes.pytorch.empty() && !td::check_index_url(s.indexes.pytorch).empty())
            std::abort();
    }
    (void)td::check_url_without_credentials(text);
    (void)td::check_secret_file_path(text);
    return 0;
}
