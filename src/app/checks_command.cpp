// `torchdock checks [ID]`: the reference pages of every check, finding and error signature.
#include <iostream>

#include "app/commands.hpp"
#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "core/reference/reference.hpp"
#include "engine/project_loader.hpp"
#include "report/reference_report.hpp"
#include "util/strings.hpp"

namespace td::app {

int run_checks(const CommonOptions& common, const ChecksOptions& opts) {
    if (auto st = check_report_flags({{"--json", &opts.json}, {"--markdown", &opts.markdown}}); !st)
        return fail(st.error());
    auto signatures = engine::load_error_signatures(engine::find_data_dir(common.data_dir));
    if (!signatures) return fail(signatures.error());
    auto entries = reference_entries(signatures.value());
    if (opts.id) {
        const ReferenceEntry* e = find_reference(entries, *opts.id);
        if (!e) {
            std::vector<std::string> ids;
            for (const auto& x : entries) ids.push_back(x.id);
            auto near = closest_match(*opts.id, ids);
            print_error(
                quote_value(*opts.id) + " is not a torchdock check, finding or signature ID" +
                (near ? " (did you mean " + *near + "?)" : "") + "; `torchdock checks` lists them");
            return k_exit_config;
        }
        entries = {*e};
    }
    for (auto st : {emit_report(opts.json, report::reference_json(entries)),
                    emit_report(opts.markdown, report::reference_markdown(entries))})
        if (!st) return fail(st.error());
    if (!to_stdout(opts.json) && !to_stdout(opts.markdown))
        std::cout << (opts.id ? report::reference_page(entries.front())
                              : report::reference_list(entries));
    return k_exit_ok;
}

}  // namespace td::app
