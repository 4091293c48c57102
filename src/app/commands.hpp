#pragma once
// The subcommands. Each returns an exit code; errors are printed once, here in app/.
#include <optional>
#include <string>

namespace td::app {

struct CommonOptions {
    std::optional<std::string> data_dir;
    std::string manifests_dir = "manifests";
};

struct RenderOptions {
    std::string out_dir = "dockerfiles";
    std::optional<std::string> only;
    bool check = false;
    std::optional<std::string> stdout_variant;
};

struct ListOptions {
    bool json = false;
};

int run_render(const CommonOptions& common, const RenderOptions& opts);
int run_list(const CommonOptions& common, const ListOptions& opts);

}  // namespace td::app
