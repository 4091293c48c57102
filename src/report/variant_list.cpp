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

std::string variants_narrow_table(const std::vector<Variant>& variants) {
    std::vector<std::vector<std::string>> rows;
    std::size_t need_index = 0, unconfirmed = 0;
    for (const auto& v : variants) {
        bool needs = v.torch_source == Variant::TorchSource::PytorchIndex;
        need_index += needs ? 1 : 0;
        unconfirmed += v.min_driver_unconfirmed ? 1 : 0;
        rows.push_back(
            {v.name, v.python, or_dash(v.torch) + (needs ? " *" : ""), or_dash(v.cuda),
             or_dash(v.cudnn),
             v.min_driver.empty() ? "-" : v.min_driver + (v.min_driver_unconfirmed ? "?" : "")});
    }
    std::string out =
        format_table({"VARIANT", "PY", "TORCH", "CUDA", "CUDNN", "MIN DRIVER"}, rows) +
        std::to_string(variants.size()) + " variants";
    out += " (image, base and NCCL: torchdock list --wide)\n";
    if (need_index > 0)
        out +=
            "* torch from the PyTorch wheel index: build needs indexes.pytorch or "
            "--torch-index (" +
            std::to_string(need_index) + " variants)\n";
    if (unconfirmed > 0)
        out += "? driver floor not confirmed by a source in the knowledge base (" +
               std::to_string(unconfirmed) + " variants)\n";
    return out;
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
             {"min_driver_unconfirmed", v.min_driver_unconfirmed},
             // settings `build` needs for this variant
             {"build_needs", v.torch_source == Variant::TorchSource::PytorchIndex
                                 ? nlohmann::json::array({"indexes.pytorch"})
                                 : nlohmann::json::array()}});
    return json_text(list);
}

}  // namespace td::report
