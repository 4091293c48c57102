#include "core/build_index.hpp"

#include <functional>
#include <nlohmann/json.hpp>

#include "core/grammar.hpp"
#include "util/strings.hpp"

namespace td {

Result<std::vector<IndexEntry>> parse_build_index(const std::string& text, const std::string& path) {
    std::vector<IndexEntry> out;
    try {
        auto doc = nlohmann::json::parse(text);
        if (doc.value("schema", 0) != 1) return Error{ErrorKind::Config, path + ": unsupported index schema"};
        for (const auto& v : doc.at("variants")) {
            IndexEntry e;
            e.name = v.at("name").get<std::string>();
            e.family = v.at("family").get<std::string>();
            e.image = v.at("image").get<std::string>();
            e.tag = v.at("tag").get<std::string>();
            e.dockerfile = v.at("dockerfile").get<std::string>();
            e.base = v.at("base").get<std::string>();
            // The index is an input too: refuse anything that could escape the tree or the CLI.
            if (!grammar::check_image_reference(e.reference()).empty() || e.dockerfile.find("..") != std::string::npos ||
                e.dockerfile.empty() || e.dockerfile[0] == '/' || !grammar::check_family_name(e.family).empty())
                return Error{ErrorKind::Config, path + ": invalid entry for variant " + quote_value(e.name)};
            out.push_back(std::move(e));
        }
    } catch (const nlohmann::json::exception& e) {
        return Error{ErrorKind::Config, path + ": " + e.what() + " (re-run `torchdock render`)"};
    }
    return out;
}

std::string rewrite_from_lines(const std::string& dockerfile,
                               const std::function<std::string(const std::string&)>& rewrite) {
    std::string out;
    for (const auto& line : split(dockerfile, '\n')) {
        if (starts_with(line, "FROM ")) {
            std::string rest = line.substr(5);
            auto space = rest.find(' ');
            std::string image = rest.substr(0, space);
            out += "FROM " + rewrite(image) + (space == std::string::npos ? "" : rest.substr(space));
        } else {
            out += line;
        }
        out += '\n';
    }
    out.pop_back();  // split() gave one more piece than there were newlines
    return out;
}

}  // namespace td
