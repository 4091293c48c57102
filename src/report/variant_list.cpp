#include "report/variant_list.hpp"

#include <nlohmann/json.hpp>

#include "core/json/json_text.hpp"
#include "report/table.hpp"

namespace td::report {
namespace {
std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }
}  // namespace

std::string variants_table(const std::vector<Variant>& variants) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& v : variants)
        rows.push_back({v.name, v.manifest->image + ":" + v.tag,
                        v.base_ref + (v.base_digest ? " (locked)" : ""), v.python, or_dash(v.torch),
                        or_dash(v.cuda), or_dash(v.cudnn), or_dash(v.nccl),
                        v.min_driver.empty()       ? "-"
                        : v.min_driver_unconfirmed ? v.min_driver + " (unconfirmed)"
                                                   : v.min_driver});
    return format_table({"VARIANT", "IMAGE", "BASE", "PYTHON", "TORCH", "CUDA", "CUDNN", "NCCL",
                         "MIN DRIVER"},
                        rows) +
           std::to_string(variants.size()) + " variants\n";
}

std::string variants_json(const std::vector<Variant>& variants) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& v : variants)
        list.push_back(
            {{"name", v.name},
             {"manifest", v.manifest->file},
             {"image", v.manifest->image + ":" + v.tag},
             {"base", v.base_ref},
             {"base_digest", v.base_digest ? nlohmann::json(*v.base_digest) : nlohmann::json()},
             {"axes", v.axes},
             {"python", v.python},
             {"torch", v.torch},
             {"cuda", v.cuda},
             {"cudnn", v.cudnn},
             {"nccl", v.nccl},
             {"min_driver", v.min_driver},
             {"min_driver_unconfirmed", v.min_driver_unconfirmed}});
    return json_text(list);
}

}  // namespace td::report
