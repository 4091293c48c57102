#include "core/render/manifest_scaffold.hpp"

#include <nlohmann/json.hpp>

#include "util/strings.hpp"

namespace td {
namespace {

// Objects one key a line, arrays on one line, as the bundled manifests are written.
std::string pretty(const nlohmann::ordered_json& j, const std::string& indent) {
    if (j.is_object()) {
        std::string out = "{\n";
        std::size_t i = 0;
        for (const auto& [key, value] : j.items())
            out += indent + "  " + nlohmann::json(key).dump() + ": " +
                   pretty(value, indent + "  ") + (++i < j.size() ? ",\n" : "\n");
        return out + indent + "}";
    }
    if (j.is_array()) {
        std::string out = "[";
        for (std::size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + j[i].dump();
        return out + "]";
    }
    return j.dump();
}

}  // namespace

std::string scaffold_manifest(const ScaffoldRequest& r) {
    bool ubuntu = !r.os.empty() && starts_with(r.os.front(), "ubuntu");
    std::string base = r.base ? *r.base : ubuntu ? "nvidia-cuda" : "os-pip";
    bool has_flavor = base == "nvidia-cuda" || base == "nvidia-cuda-cudnn" || base == "pytorch";
    nlohmann::ordered_json m;
    m["schema"] = 1;
    m["name"] = r.name;
    m["description"] =
        "torch " + join(r.torch, ", ") + " (" + join(r.cuda, ", ") + ") on " + join(r.os, ", ");
    m["image"] = r.image ? *r.image : "torchdock/" + r.name;
    m["base"] = base;
    if (r.wheel_index) m["wheel_index"] = *r.wheel_index;
    nlohmann::ordered_json matrix;
    matrix["torch"] = r.torch;
    matrix["cuda"] = r.cuda;
    if (has_flavor)
        matrix["flavor"] = r.flavor.empty() ? std::vector<std::string>{"runtime"} : r.flavor;
    if (base != "pytorch") matrix["os"] = r.os;
    m["matrix"] = matrix;
    if (r.python) m["python"] = *r.python;
    m["pip"] = nlohmann::json::array();
    if (!r.gpus.empty()) m["target_gpus"] = r.gpus;
    std::string text = "// Written by `" + r.command_line +
                       "`; edit freely (the keys: schema/manifest.schema.json, README).\n";
    return text + pretty(m, "") + "\n";
}

}  // namespace td
