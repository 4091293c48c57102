#include "app/commands.hpp"

#include <iostream>

#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "core/json/json_text.hpp"
#include "core/render/render_plan.hpp"
#include "engine/files.hpp"
#include "engine/project_loader.hpp"
#include "report/sarif_report.hpp"
#include "report/variant_list.hpp"
#include "util/strings.hpp"

namespace td::app {
namespace {

std::vector<ReportFlag> report_flags(const RenderOptions& opts) {
    return {{"--json", &opts.json}, {"--sarif", &opts.sarif}};
}

// render --check: what differs, as lines or (--json) as lists of paths.
int print_diff(const TreeDiff& diff, const RenderOptions& opts, std::size_t variants) {
    std::size_t n = diff.missing.size() + diff.changed.size() + diff.extra.size();
    if (opts.json) {
        auto paths = [&](const std::vector<std::string>& files) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& f : files) list.push_back(opts.out_dir + "/" + f);
            return list;
        };
        nlohmann::json doc{{"schema", 1},
                           {"out", opts.out_dir},
                           {"variants", variants},
                           {"up_to_date", n == 0},
                           {"missing", paths(diff.missing)},
                           {"stale", paths(diff.changed)},
                           {"extra", paths(diff.extra)}};
        if (auto st = emit_report(opts.json, json_text(doc)); !st) return fail(st.error());
    }
    if (!any_to_stdout(report_flags(opts))) {
        for (const auto& f : diff.missing)
            std::cout << "missing: " << opts.out_dir << "/" << f << "\n";
        for (const auto& f : diff.changed)
            std::cout << "stale:   " << opts.out_dir << "/" << f << "\n";
        for (const auto& f : diff.extra)
            std::cout << "extra:   " << opts.out_dir << "/" << f << "\n";
        if (n == 0) std::cout << opts.out_dir << " is up to date (" << variants << " variants)\n";
    }
    if (n == 0) return k_exit_ok;
    std::cerr << "torchdock: " << opts.out_dir << " is out of date (" << n << " file"
              << (n == 1 ? "" : "s") << "); run `torchdock render`\n";
    return k_exit_check_failed;
}

}  // namespace

// Loads the knowledge base and manifests and plans the whole matrix. On failure prints
// every problem and returns the exit code in `code`. With `sarif`, the problems and
// warnings are written there too, whether or not the plan stands.
std::optional<RenderPlan> plan_project(const CommonOptions& common, int& code, bool writes,
                                       const std::optional<std::string>& sarif) {
    auto kb = engine::load_knowledge_base(engine::find_data_dir(common.data_dir));
    if (!kb) {
        code = fail(kb.error());
        return std::nullopt;
    }
    auto sources = engine::load_manifests(common.manifests_dir);
    if (!sources) {
        code = fail(sources.error());
        return std::nullopt;
    }
    RenderPlan p = plan_render(sources.value(), kb.value());
    if (sarif)
        if (auto st = emit_report(sarif, report::render_sarif(p.problems, p.warnings)); !st) {
            code = fail(st.error());
            return std::nullopt;
        }
    for (const auto& w : p.warnings)
        std::cerr << "torchdock: warning: " << format_diagnostic(w) << "\n";
    if (!p.problems.empty()) {
        for (const auto& d : p.problems) std::cerr << format_diagnostic(d) << "\n";
        print_error(std::to_string(p.problem_count) + " problem" +
                    (p.problem_count == 1 ? "" : "s") + " in the manifests" +
                    (writes ? "; nothing was written" : ""));
        code = k_exit_config;
        return std::nullopt;
    }
    return p;
}

int run_render(const CommonOptions& common, const RenderOptions& opts) {
    // An empty path would mean the current directory to some calls and nothing to others.
    for (const auto& [flag, value] :
         {std::pair{"--out", opts.out_dir}, std::pair{"--manifests", common.manifests_dir}})
        if (value.empty()) {
            print_error(std::string(flag) + " needs a directory");
            return k_exit_config;
        }
    if (auto st = check_report_flags(report_flags(opts)); !st) return fail(st.error());
    int code = 0;
    auto p = plan_project(common, code, !opts.check && !opts.stdout_variant, opts.sarif);
    if (!p) return code;

    if (opts.stdout_variant) {
        auto it = p->files.find(*opts.stdout_variant + "/Dockerfile");
        if (it == p->files.end()) {
            std::vector<std::string> names;
            for (const auto& v : p->variants) names.push_back(v.name);
            std::string msg = "no variant named " + quote_value(*opts.stdout_variant);
            if (auto near = closest_match(*opts.stdout_variant, names))
                msg += "; did you mean " + *near + "?";
            else
                msg += " (see `torchdock list`)";
            print_error(msg);
            return k_exit_config;
        }
        std::cout << it->second;
        return k_exit_ok;
    }
    if (opts.only) {
        restrict_plan(*p, *opts.only);
        if (p->variants.empty()) {
            print_error("no variant matches " + quote_value(*opts.only) +
                        " (see `torchdock list`)");
            return k_exit_config;
        }
    }
    if (opts.check) {
        auto have = engine::read_tree(opts.out_dir);
        if (!have) return fail(have.error());
        if (opts.only) {  // compare only the selected files
            std::map<std::string, std::string> subset;
            for (const auto& [path, text] : p->files)
                if (auto it = have->find(path); it != have->end()) subset[path] = it->second;
            have.value() = subset;
        }
        return print_diff(diff_tree(p->files, have.value()), opts, p->variants.size());
    }
    auto written = opts.only ? engine::write_into_rendered_tree(opts.out_dir, p->files)
                             : engine::write_tree_atomically(opts.out_dir, p->files);
    if (!written) return fail(written.error());
    if (opts.json) {
        nlohmann::json files = nlohmann::json::array();
        for (const auto& [path, text] : p->files) files.push_back(opts.out_dir + "/" + path);
        nlohmann::json doc{{"schema", 1},
                           {"out", opts.out_dir},
                           {"variants", nlohmann::json::parse(report::variants_json(p->variants))},
                           {"files", files}};
        if (auto st = emit_report(opts.json, json_text(doc)); !st) return fail(st.error());
    }
    if (!any_to_stdout(report_flags(opts)))
        std::cout << "rendered " << p->variants.size() << " variant"
                  << (p->variants.size() == 1 ? "" : "s") << " into " << opts.out_dir << "\n";
    return k_exit_ok;
}

int run_list(const CommonOptions& common, const ListOptions& opts) {
    if (auto st = check_report_flags({{"--json", &opts.json}}); !st) return fail(st.error());
    int code = 0;
    auto p = plan_project(common, code, false);
    if (!p) return code;
    if (opts.json) {
        if (auto st = emit_report(opts.json, report::variants_json(p->variants)); !st)
            return fail(st.error());
    }
    if (!to_stdout(opts.json))
        std::cout << (opts.wide ? report::variants_table(p->variants)
                                : report::variants_narrow_table(p->variants));
    return k_exit_ok;
}

}  // namespace td::app
