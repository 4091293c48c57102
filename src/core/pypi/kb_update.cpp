#include "core/pypi/kb_update.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/grammar/grammar.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "core/pypi/pep440.hpp"
#include "util/strings.hpp"

namespace td::pypi {
namespace {

using ordered_json = nlohmann::ordered_json;

// Where a key goes when it is added to an object that lacks it: after the last present
// key that precedes it here. Keys not listed are appended.
const std::vector<std::string> k_key_order = {
    "version",         "python",      "min",        "max",      "free_threaded",
    "glibc",           "torchvision", "torchaudio", "variants", "cuda",
    "cuda_runtime",    "cublas",      "cudnn",      "nccl",     "arch_list",
    "default_variant", "evidence"};

std::size_t rank_of(const std::string& key) {
    auto it = std::find(k_key_order.begin(), k_key_order.end(), key);
    return it == k_key_order.end() ? k_key_order.size()
                                   : static_cast<std::size_t>(it - k_key_order.begin());
}

void set_key(ordered_json& obj, const std::string& key, ordered_json value) {
    if (obj.contains(key)) {
        obj[key] = std::move(value);
        return;
    }
    std::size_t want = rank_of(key);
    ordered_json rebuilt = ordered_json::object();
    bool placed = false;
    for (auto& [k, v] : obj.items()) {
        if (!placed && want < k_key_order.size() && rank_of(k) > want &&
            rank_of(k) < k_key_order.size()) {
            rebuilt[key] = value;
            placed = true;
        }
        rebuilt[k] = v;
    }
    if (!placed) rebuilt[key] = std::move(value);
    obj = std::move(rebuilt);
}

// Variants stay in published order: CUDA builds ascending, "cpu" last.
bool variant_before(const std::string& a, const std::string& b) {
    if (a == "cpu" || b == "cpu") return b == "cpu" && a != "cpu";
    if (a.size() != b.size()) return a.size() < b.size();
    return a < b;
}

void add_variant(ordered_json& variants, const std::string& name) {
    if (variants.contains(name)) return;
    ordered_json rebuilt = ordered_json::object();
    bool placed = false;
    for (auto& [k, v] : variants.items()) {
        if (!placed && variant_before(name, k)) {
            rebuilt[name] = ordered_json::object();
            placed = true;
        }
        rebuilt[k] = v;
    }
    if (!placed) rebuilt[name] = ordered_json::object();
    variants = std::move(rebuilt);
}

ordered_json fact_json(const Fact& f) {
    if (f.is_list) return ordered_json(f.values);
    return f.value().empty() ? ordered_json(nullptr) : ordered_json(f.value());
}

std::string render(const ordered_json* j) {
    if (!j) return "(absent)";
    if (j->is_null()) return "none";
    if (j->is_string()) return j->get<std::string>();
    if (j->is_array()) {
        std::vector<std::string> parts;
        for (const auto& x : *j) parts.push_back(x.is_string() ? x.get<std::string>() : x.dump());
        return "[" + join(parts, ", ") + "]";
    }
    return j->dump();
}

const ordered_json* at_path(const ordered_json& obj, const std::vector<std::string>& path) {
    const ordered_json* cur = &obj;
    for (const auto& p : path) {
        if (!cur->is_object() || !cur->contains(p)) return nullptr;
        cur = &(*cur)[p];
    }
    return cur;
}

void set_path(ordered_json& obj, const std::vector<std::string>& path, ordered_json value) {
    ordered_json* cur = &obj;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
        if (i == 0 && path[0] == "variants") {
            if (!cur->contains("variants")) set_key(*cur, "variants", ordered_json::object());
            add_variant((*cur)["variants"], path[1]);
        } else if (!cur->contains(path[i]) || !(*cur)[path[i]].is_object()) {
            set_key(*cur, path[i], ordered_json::object());
        }
        cur = &(*cur)[path[i]];
    }
    set_key(*cur, path.back(), std::move(value));
}

ordered_json new_release(const std::string& version) {
    ordered_json r = ordered_json::object();
    r["version"] = version;
    r["python"] = ordered_json::object();
    r["torchvision"] = nullptr;
    r["torchaudio"] = nullptr;
    r["variants"] = ordered_json::object();
    return r;
}

// Every value written passes the grammar the knowledge base loader applies to it, and its
// source is printable one-line text: index text never lands in the file unchecked.
std::string fact_problem(const Fact& f) {
    std::vector<std::string> values = f.is_list ? f.values : std::vector<std::string>{f.value()};
    for (const auto& v : values)
        if (auto why = check_torch_fact(f.path, v); !why.empty())
            return "value " + quote_value(v, 120) + " refused: " + why;
    if (auto why = grammar::check_plain_text(f.source, 16384); !why.empty())
        return "source refused: " + why;
    return {};
}

}  // namespace

Result<std::vector<std::string>> torch_data_versions(const std::string& torch_json) {
    try {
        ordered_json doc = ordered_json::parse(torch_json);
        std::vector<std::string> out;
        for (const auto& r : doc.at("torch")) out.push_back(r.at("version").get<std::string>());
        return out;
    } catch (const std::exception& e) {
        return Error{ErrorKind::Config, std::string("data/torch.json: ") + e.what()};
    }
}

Result<TorchDataUpdate> update_torch_data(const std::string& torch_json,
                                          const std::vector<ReleaseFacts>& releases) {
    ordered_json doc;
    try {
        doc = ordered_json::parse(torch_json);
    } catch (const std::exception& e) {
        return Error{ErrorKind::Config, std::string("data/torch.json: ") + e.what()};
    }
    if (!doc.is_object() || !doc.contains("torch") || !doc["torch"].is_array())
        return Error{ErrorKind::Config, "data/torch.json: no \"torch\" list"};
    TorchDataUpdate out;
    ordered_json& list = doc["torch"];
    for (const auto& rel : releases) {
        auto want = Pep440Version::parse(rel.version);
        if (!want) return Error{ErrorKind::Config, "not a version: " + quote_value(rel.version)};
        std::size_t at = list.size(), insert_at = list.size();
        for (std::size_t i = 0; i < list.size(); ++i) {
            auto have = Pep440Version::parse(list[i].value("version", std::string()));
            if (!have) continue;
            if (compare(*have, *want) == 0) {
                at = i;
                break;
            }
            if (insert_at == list.size() && *want < *have) insert_at = i;
        }
        bool added = at == list.size();
        if (added) {
            list.insert(list.begin() + static_cast<std::ptrdiff_t>(insert_at),
                        new_release(rel.version));
            at = insert_at;
        }
        ordered_json& entry = list[at];
        for (const auto& fact : rel.facts) {
            if (auto why = fact_problem(fact); !why.empty())
                return Error{ErrorKind::Config, "torch " + quote_value(rel.version) + ": " +
                                                    fact.path + ": " + why +
                                                    "; data/torch.json is left unchanged"};
            auto path = split(fact.path, '.');
            ordered_json value = fact_json(fact);
            const ordered_json* before = at_path(entry, path);
            bool differs = !before || *before != value;
            if (differs) {
                out.changes.push_back({rel.version, fact.path,
                                       added ? "(new release)" : render(before), render(&value),
                                       fact.source, added});
                set_path(entry, path, value);
            }
            const ordered_json* cited = at_path(entry, {"evidence", fact.path});
            if (differs || !cited) {
                if (!entry.contains("evidence")) set_key(entry, "evidence", ordered_json::object());
                entry["evidence"][fact.path] = fact.source;
            }
        }
    }
    out.text = doc.dump(2) + "\n";
    return out;
}

}  // namespace td::pypi
