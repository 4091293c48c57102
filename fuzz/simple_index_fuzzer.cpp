// libFuzzer target: any bytes as a PEP 691 JSON project page (what `kb refresh` reads from a
// package index) must give the page or an error, never a crash; every query over a parsed
// page is answered.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/pypi/simple_index.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    auto page = td::pypi::parse_project_index(text, "https://index.example/simple/torch/");
    if (!page) {
        if (page.error().message.empty()) std::abort();
        return 0;
    }
    const auto& p = page.value();
    std::size_t wheels = 0;
    for (const auto& v : p.release_versions()) wheels += p.linux_wheels(v).size();
    for (const auto& v : p.versions) (void)p.linux_wheels(v);
    for (const auto& f : p.files) {
        (void)p.linux_wheels(f.filename);
        (void)td::pypi::resolve_url("https://index.example/simple/torch/", f.url);
    }
    if (wheels > p.files.size() * (p.release_versions().size() + 1)) std::abort();
    return 0;
}
