#include "core/diagnose/fingerprint_flatten.hpp"

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

#include "core/json/json_text.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

using json = nlohmann::json;

std::string scalar(const json& j) {
    if (j.is_string()) return j.get<std::string>();
    return j.dump();
}

// "libcudnn_ops.so.9" -> "cudnn_ops"; "/usr/lib/libnccl.so.2" -> "nccl".
std::string library_name_of(std::string file) {
    if (auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
    if (starts_with(file, "lib")) file = file.substr(3);
    if (auto so = file.find(".so"); so != std::string::npos) file = file.substr(0, so);
    return file;
}

// "libcudnn.so.9" -> "9"; "libcudart.so.12.4.127" -> "12.4.127".
std::string soname_version(const std::string& soname) {
    auto so = soname.find(".so.");
    return so == std::string::npos ? std::string() : soname.substr(so + 4);
}

// `prefix[key]`, made unique with "#2", "#3" when two elements share a key.
std::string keyed_path(const std::string& prefix, const std::string& key,
                       const std::set<std::string>& taken) {
    std::string path = prefix + "[" + key + "]";
    for (int n = 2; taken.count(path); ++n)
        path = prefix + "[" + key + "#" + std::to_string(n) + "]";
    return path;
}

void add_keyed(std::map<std::string, FlatLeaf>& out, const std::string& prefix,
               const std::string& key, FlatLeaf leaf) {
    std::string path = prefix + "[" + key + "]";
    for (int n = 2; out.count(path); ++n) path = prefix + "[" + key + "#" + std::to_string(n) + "]";
    out[path] = std::move(leaf);
}

// The field that names every element of a list of objects, or "" when none does.
std::string identity_field(const json& list) {
    for (const char* field : {"id", "path", "name", "soname", "arch"}) {
        bool all = std::all_of(list.begin(), list.end(),
                               [&](const json& e) { return !string_at(e, field).empty(); });
        if (all) return field;
    }
    return {};
}

void flatten(const json& j, const std::string& path, FlatFingerprint& out);

// A one-line summary of an element: its leaves as "field: value", the identity field left
// out (it is in the path), severity and title first.
std::string summary_of(const json& element, const std::string& identity) {
    FlatFingerprint inner;
    flatten(element, "", inner);
    std::vector<std::pair<std::string, std::string>> fields;
    for (const auto& [field, leaf] : inner.leaves)
        if (field != identity) fields.emplace_back(field, leaf.value);
    auto order = [](const std::string& f) { return f == "severity" ? 0 : f == "title" ? 1 : 2; };
    std::stable_sort(fields.begin(), fields.end(),
                     [&](const auto& x, const auto& y) { return order(x.first) < order(y.first); });
    std::vector<std::string> parts;
    for (const auto& [field, value] : fields) parts.push_back(field + ": " + value);
    return parts.empty() ? "present" : join(parts, "; ");
}

void flatten_list(const json& list, const std::string& path, FlatFingerprint& out) {
    if (list.empty()) return;
    bool objects =
        std::all_of(list.begin(), list.end(), [](const json& e) { return e.is_object(); });
    if (!objects) {  // plain values (or a mix): compared as a set
        std::set<std::string> values;
        for (const auto& e : list)
            if (!e.is_null()) values.insert(e.is_structured() ? e.dump() : scalar(e));
        std::string shown = join({values.begin(), values.end()}, " ");
        out.leaves[path] = {shown, shown};
        return;
    }
    std::string identity = identity_field(list);
    if (identity.empty()) {  // nothing names the elements: compared as a set of summaries
        std::set<std::string> summaries;
        for (const auto& e : list) summaries.insert(summary_of(e, ""));
        std::string shown = join({summaries.begin(), summaries.end()}, " | ");
        out.leaves[path] = {shown, shown};
        return;
    }
    // Elements that share a key get "#2", "#3" in the order of their content, not of the list.
    std::vector<std::pair<std::string, std::string>> keyed;  // key, content
    for (const auto& e : list) keyed.emplace_back(string_at(e, identity.c_str()), e.dump());
    std::vector<std::size_t> order(list.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t x, std::size_t y) { return keyed[x] < keyed[y]; });
    std::set<std::string> taken;
    for (std::size_t i : order) {
        std::string element = keyed_path(path, keyed[i].first, taken);
        taken.insert(element);
        out.elements[element] = summary_of(list[i], identity);
        flatten(list[i], element, out);
    }
}

// Generic flattening; null is the same as missing.
void flatten(const json& j, const std::string& path, FlatFingerprint& out) {
    if (j.is_null()) return;
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) flatten(v, path.empty() ? k : path + "." + k, out);
    } else if (j.is_array()) {
        flatten_list(j, path, out);
    } else {
        out.leaves[path] = {scalar(j), scalar(j)};
    }
}

void flatten_libraries(const json& v, FlatFingerprint& out) {
    std::vector<std::pair<std::string, FlatLeaf>> libs;  // key, leaf
    for (std::size_t i = 0; i < v.size(); ++i) {
        const json& lib = v[i];
        std::string name = string_at(lib, "name"), soname = string_at(lib, "soname"),
                    path = string_at(lib, "path");
        std::string version = string_at(lib, "version");
        std::string k = !name.empty()     ? name
                        : !soname.empty() ? library_name_of(soname)
                        : !path.empty()   ? library_name_of(path)
                                          : std::to_string(i);
        std::string shown = soname.empty() ? k : soname;
        if (!version.empty()) shown += " " + version;
        shown += path.empty() ? " (not found)" : " at " + path;
        libs.push_back({k, {shown, version.empty() ? soname_version(soname) : version}});
    }
    // Two copies of one library get "#2" by where they are, not by list order.
    std::sort(libs.begin(), libs.end(), [](const auto& x, const auto& y) {
        return std::tie(x.first, x.second.value) < std::tie(y.first, y.second.value);
    });
    for (auto& [k, leaf] : libs) add_keyed(out.leaves, "libraries", k, std::move(leaf));
}

void flatten_duplicates(const json& v, FlatFingerprint& out) {
    std::vector<std::pair<std::string, std::string>> dups;  // name, copies shown
    for (std::size_t i = 0; i < v.size(); ++i) {
        const json& d = v[i];
        std::string name = string_at(d, "name");
        std::vector<std::string> copies;
        if (d.is_object() && d.contains("copies") && d["copies"].is_array())
            for (const auto& c : d["copies"]) {
                std::string ver = string_at(c, "version");
                copies.push_back(string_at(c, "path") + (ver.empty() ? "" : " (" + ver + ")"));
            }
        std::sort(copies.begin(), copies.end());
        dups.emplace_back(name.empty() ? std::to_string(i) : name, join(copies, ", "));
    }
    std::sort(dups.begin(), dups.end());
    for (const auto& [name, shown] : dups)
        add_keyed(out.leaves, "duplicates", name, {shown, shown});
}

// An object with GPU code by where it sits in its Python environment
// ("torch/lib/libtorch_cuda.so" under any site-packages or dist-packages), else by its path:
// the same wheels in another venv are the same objects.
std::string kernel_identity(const std::string& path) {
    for (const char* dir : {"site-packages/", "dist-packages/"})
        if (auto at = path.rfind(dir); at != std::string::npos)
            return path.substr(at + std::string(dir).size());
    return path;
}

// "sass: sm_80 sm_90; ptx: compute_90": what an object carries code for.
std::string kernel_summary(const json& object) {
    std::vector<std::string> parts;
    for (const char* field : {"sass", "ptx"}) {
        std::set<std::string> archs;
        if (object.contains(field) && object[field].is_array())
            for (const auto& e : object[field])
                archs.insert(e.is_object()   ? string_at(e, "arch")
                             : e.is_string() ? e.get<std::string>()
                                             : e.dump());
        if (!archs.empty())
            parts.push_back(std::string(field) + ": " + join({archs.begin(), archs.end()}, " "));
    }
    return parts.empty() ? "no GPU code listed" : join(parts, "; ");
}

void flatten_kernels(const json& v, FlatFingerprint& out) {
    std::set<std::string> taken;
    std::vector<std::pair<std::string, const json*>> objects;
    for (const auto& o : v)
        if (o.is_object()) objects.emplace_back(kernel_identity(string_at(o, "path")), &o);
    std::sort(objects.begin(), objects.end(), [](const auto& x, const auto& y) {
        return std::tie(x.first, *x.second) < std::tie(y.first, *y.second);
    });
    for (const auto& [key, o] : objects) {
        std::string element = keyed_path("kernels", key, taken);
        taken.insert(element);
        out.elements[element] = kernel_summary(*o);
        for (const auto& [field, value] : o->items())
            if (field != "path") flatten(value, element + "." + field, out);
    }
}

void flatten_unresolved(const json& v, FlatFingerprint& out) {
    std::map<std::string, std::set<std::string>> needed;
    for (std::size_t i = 0; i < v.size(); ++i) {
        std::string soname = string_at(v[i], "soname");
        std::string by = string_at(v[i], "needed_by");
        auto& s = needed[soname.empty() ? std::to_string(i) : soname];
        if (!by.empty()) s.insert(by);
    }
    for (const auto& [soname, by] : needed) {
        std::string shown =
            by.empty() ? "not found" : "not found, needed by " + join({by.begin(), by.end()}, ", ");
        out.leaves["unresolved[" + soname + "]"] = {shown, shown};
    }
}

}  // namespace

FlatFingerprint flatten_fingerprint(const json& fp) {
    FlatFingerprint out;
    if (!fp.is_object()) return out;
    for (const auto& [key, v] : fp.items()) {
        if (v.is_null()) continue;
        if (key == "libraries" && v.is_array()) {
            flatten_libraries(v, out);
        } else if (key == "kernels" && v.is_array()) {
            flatten_kernels(v, out);
        } else if (key == "duplicates" && v.is_array()) {
            flatten_duplicates(v, out);
        } else if (key == "unresolved" && v.is_array()) {
            flatten_unresolved(v, out);
        } else if (key == "gpus" && v.is_array()) {
            // GPU i is device i: position is its identity.
            for (std::size_t i = 0; i < v.size(); ++i)
                flatten(v[i], "gpus[" + std::to_string(i) + "]", out);
            if (!v.empty())
                out.leaves["gpus.count"] = {std::to_string(v.size()), std::to_string(v.size())};
        } else if (key == "torch" && v.is_object()) {
            for (const auto& [tk, tv] : v.items()) {
                if (tk == "arch_list" && tv.is_array()) {  // its order is torch's own
                    std::vector<std::string> arch;
                    for (const auto& a : tv) arch.push_back(scalar(a));
                    if (!arch.empty())
                        out.leaves["torch.arch_list"] = {join(arch, " "), join(arch, " ")};
                } else {
                    flatten(tv, "torch." + tk, out);
                }
            }
        } else {
            flatten(v, key, out);
        }
    }
    return out;
}

}  // namespace td
