#include "core/validate/python_abi.hpp"

namespace td {
namespace {

using json = nlohmann::json;

// The first torch built for another Python. Where a torch was found and failed to import, only
// that torch counts (its directory is the first of the probe's site_dirs): another version's
// leftover directory is not the cause of its error.
const json* first_mismatch(const json& t) {
    if (!t.is_object() || !t.contains("torch_for_other_python")) return nullptr;
    const json& list = t["torch_for_other_python"];
    if (!list.is_array()) return nullptr;
    std::string failing;
    if (t.contains("import_error") && t.contains("site_dirs") && t["site_dirs"].is_array() &&
        !t["site_dirs"].empty() && t["site_dirs"][0].is_string())
        failing = t["site_dirs"][0].get<std::string>();
    const bool import_failed = t.contains("import_error");
    for (const auto& f : list)
        if (f.is_object() && f.contains("dir") && f["dir"].is_string() && f.contains("python") &&
            f["python"].is_string() && (!import_failed || f["dir"] == failing))
            return &f;
    return nullptr;
}

std::string text(const json& o, const char* key) {
    return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

// "3.13" of "3.13.5".
std::string minor_of(const std::string& v) {
    auto first = v.find('.');
    if (first == std::string::npos) return v;
    return v.substr(0, v.find('.', first + 1));
}

}  // namespace

std::string torch_python_mismatch(const json& t) {
    const json* f = first_mismatch(t);
    if (!f) return {};
    std::string runs = text(*f, "interpreter_python"), exe = text(*f, "interpreter");
    std::string evidence = text(*f, "evidence");
    return "torch in " + text(*f, "dir") + " is built for Python " + text(*f, "python") +
           (evidence.empty() ? "" : " (" + evidence + ")") + ", but the image runs Python " +
           (runs.empty() ? std::string("of another version") : runs) +
           (exe.empty() ? "" : " (" + exe + ")");
}

std::string torch_python_mismatch_fix(const json& t) {
    const json* f = first_mismatch(t);
    if (!f) return {};
    std::string runs = minor_of(text(*f, "interpreter_python"));
    return "copy the venv together with its Python " + text(*f, "python") +
           " interpreter (the same base image in both stages), or install torch for Python " +
           (runs.empty() ? std::string("the image runs") : runs);
}

TorchElsewhere torch_in_other_interpreter(const json& t) {
    if (!t.is_object() || !t.contains("other_interpreters") || !t["other_interpreters"].is_array())
        return {};
    for (const auto& o : t["other_interpreters"])
        if (o.is_object() && o.contains("imports") && o["imports"] == true &&
            !text(o, "torch").empty())
            return {text(o, "path"), text(o, "torch")};
    return {};
}

}  // namespace td
