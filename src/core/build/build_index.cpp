#include "core/build/build_index.hpp"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "core/grammar/grammar.hpp"
#include "core/json/json_text.hpp"
#include "core/render/platforms.hpp"
#include "core/render/render_plan.hpp"
#include "util/strings.hpp"

namespace td {

Result<std::vector<IndexEntry>> parse_build_index(const std::string& text,
                                                  const std::string& path) {
    std::vector<IndexEntry> out;
    try {
        std::string why;
        auto parsed = parse_json_bounded(text, why);
        if (!parsed) throw std::invalid_argument(why);
        auto doc = std::move(parsed.value());
        if (doc.value("schema", 0) != 1)
            return Error{ErrorKind::Config, path + ": unsupported index schema"};
        for (const auto& v : doc.at("variants")) {
            IndexEntry e;
            e.name = v.at("name").get<std::string>();
            e.family = v.at("family").get<std::string>();
            e.image = v.at("image").get<std::string>();
            e.tag = v.at("tag").get<std::string>();
            e.dockerfile = v.at("dockerfile").get<std::string>();
            e.base = v.at("base").get<std::string>();
            e.torch_source = v.value("torch_source", "base");
            e.torch_index_dir = v.value("torch_index_dir", "");
            if (v.contains("python_lock") && v["python_lock"].is_string())
                e.python_lock = v["python_lock"].get<std::string>();
            if (v.contains("build_lock") && v["build_lock"].is_string())
                e.build_lock = v["build_lock"].get<std::string>();
            bool platforms_ok = true;
            if (v.contains("platforms")) {
                e.platforms = v.at("platforms").get<std::vector<std::string>>();
                for (const auto& p : e.platforms)
                    platforms_ok = platforms_ok && check_build_platform(p).empty();
                platforms_ok = platforms_ok && !e.platforms.empty();
            }
            if (v.contains("python_locks"))
                for (const auto& [p, file] : v.at("python_locks").items()) {
                    e.python_locks[p] = file.get<std::string>();
                    platforms_ok =
                        platforms_ok &&
                        std::find(e.platforms.begin(), e.platforms.end(), p) != e.platforms.end() &&
                        e.python_locks[p] == e.name + "/" + requirements_lock_for(p);
                }
            // The index is an input too: refuse anything that could escape the tree or the CLI.
            if (!grammar::check_image_reference(e.reference()).empty() ||
                !grammar::check_variant_name(e.name).empty() ||
                e.dockerfile != e.name + "/Dockerfile" ||
                (!e.python_lock.empty() && e.python_lock != e.name + "/requirements.lock.txt") ||
                !platforms_ok ||
                (!e.build_lock.empty() &&
                 e.build_lock != e.name + "/requirements.build.lock.txt") ||
                (e.torch_source != "pytorch-index" && e.torch_source != "pypi" &&
                 e.torch_source != "base") ||
                (e.torch_source == "pytorch-index") == e.torch_index_dir.empty() ||
                e.torch_index_dir.find_first_not_of("cpu0123456789") != std::string::npos ||
                !grammar::check_family_name(e.family).empty())
                return Error{ErrorKind::Config,
                             path + ": invalid entry for variant " + quote_value(e.name)};
            out.push_back(std::move(e));
        }
    } catch (const std::exception& e) {
        return Error{ErrorKind::Config, path + ": " + e.what() + " (re-run `torchdock render`)"};
    }
    return out;
}

std::string rewrite_from_lines(const std::string& dockerfile,
                               const std::function<std::string(const std::string&)>& rewrite) {
    std::string out;
    std::set<std::string> stages;  // "AS name" of earlier FROM lines: not images
    for (const auto& line : split(dockerfile, '\n')) {
        std::size_t lead = line.find_first_not_of(" \t");
        bool is_from = lead != std::string::npos && to_lower(line.substr(lead, 4)) == "from" &&
                       line.size() > lead + 4 && (line[lead + 4] == ' ' || line[lead + 4] == '\t');
        if (is_from) {
            // FROM [--flag=value ...] image [AS name]: rewrite the first word that is not a flag.
            std::size_t at = lead + 4;
            while (true) {
                at = line.find_first_not_of(" \t", at);
                if (at == std::string::npos || line.compare(at, 2, "--") != 0) break;
                at = line.find_first_of(" \t", at);
            }
            if (at == std::string::npos) {
                out += line;
            } else {
                std::size_t end = line.find_first_of(" \t", at);
                std::string image =
                    line.substr(at, end == std::string::npos ? std::string::npos : end - at);
                std::string rest = end == std::string::npos ? "" : line.substr(end);
                out += line.substr(0, at) +
                       (stages.count(to_lower(image)) ? image : rewrite(image)) + rest;
                std::vector<std::string> words;
                std::string spaced = rest;
                std::replace(spaced.begin(), spaced.end(), '\t', ' ');
                for (const auto& w : split(spaced, ' '))
                    if (!w.empty()) words.push_back(w);
                if (words.size() >= 2 && to_lower(words[0]) == "as")
                    stages.insert(to_lower(words[1]));
            }
        } else {
            out += line;
        }
        out += '\n';
    }
    out.pop_back();  // split() gave one more piece than there were newlines
    return out;
}

}  // namespace td
