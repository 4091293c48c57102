// `torchdock init`: scaffold a manifest from a few flags; it is planned like any manifest
// before it is written, so what init writes renders as written.
#include <filesystem>
#include <iostream>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "core/render/manifest_scaffold.hpp"
#include "core/render/render_plan.hpp"
#include "engine/files.hpp"
#include "engine/project_loader.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace fs = std::filesystem;

namespace {

// "A100,H100" and repeated flags alike.
std::vector<std::string> comma_list(const std::vector<std::string>& values) {
    std::vector<std::string> out;
    for (const auto& v : values)
        for (auto& part : split(v, ','))
            if (!part.empty()) out.push_back(part);
    return out;
}

}  // namespace

int run_init(const CommonOptions& common, const InitOptions& opts) {
    ScaffoldRequest r;
    r.name = opts.name;
    r.torch = comma_list(opts.torch);
    r.cuda = comma_list(opts.cuda);
    r.os = comma_list(opts.os);
    r.gpus = comma_list(opts.gpus);
    r.flavor = comma_list(opts.flavor);
    r.base = opts.base;
    r.python = opts.python;
    r.wheel_index = opts.wheel_index;
    r.image = opts.image;
    r.command_line = "torchdock init " + opts.name;
    for (const auto& [flag, values] :
         {std::pair{"--torch", &r.torch}, std::pair{"--cuda", &r.cuda}, std::pair{"--os", &r.os},
          std::pair{"--gpus", &r.gpus}, std::pair{"--flavor", &r.flavor}})
        if (!values->empty()) r.command_line += std::string(" ") + flag + " " + join(*values, ",");
    if (opts.name.empty() || opts.name.find('/') != std::string::npos || opts.name[0] == '.') {
        print_error("family name " + quote_value(opts.name) +
                    " cannot be a file name in the manifest directory");
        return k_exit_config;
    }
    fs::path path = fs::path(common.manifests_dir) / (opts.name + ".json");
    std::error_code ec;
    if (fs::exists(path, ec) || fs::is_symlink(path, ec)) {
        print_error(path.string() +
                    " exists; init never overwrites a manifest (pick another name, "
                    "or edit that one)");
        return k_exit_config;
    }
    auto kb = engine::load_knowledge_base(engine::find_data_dir(common.data_dir));
    if (!kb) return fail(kb.error());
    std::string text = scaffold_manifest(r);
    RenderPlan plan = plan_render({ManifestSource{path.string(), text, {}, {}}}, kb.value());
    if (!plan.problems.empty()) {
        for (const auto& d : plan.problems) std::cerr << format_diagnostic(d) << "\n";
        print_error("these choices do not make a manifest that renders; nothing was written");
        return k_exit_config;
    }
    auto st = engine::write_files(common.manifests_dir, {{path.filename().string(), text}},
                                  engine::MissingDir::Create);
    if (!st) return fail(st.error());
    std::cout << "wrote " << path.string() << " (" << plan.variants.size() << " variant"
              << (plan.variants.size() == 1 ? "" : "s") << ")\n";
    for (const auto& v : plan.variants) std::cout << "  " << v.name << "\n";
    std::cout << "next: torchdock render --only '" << opts.name << "-*'\n";
    return k_exit_ok;
}

}  // namespace td::app
