#include "core/json/json_text.hpp"

#include <set>
#include <vector>

#include "util/strings.hpp"

namespace td {

std::string json_text(const nlohmann::json& document) {
    return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::optional<nlohmann::json> parse_json_bounded(std::string_view text, std::string& error,
                                                 int max_depth, bool refuse_duplicate_keys) {
    bool too_deep = false;
    std::string duplicate, duplicate_key;  // the first key seen twice in one object, its path
    // Per open object or array: the keys seen (objects) and the path that leads to it.
    struct Open {
        bool object;
        std::set<std::string> keys;
        std::string path;
    };
    std::vector<Open> open;
    std::string last_key;
    auto child_path = [&]() -> std::string {
        if (open.empty()) return "$";
        return open.back().path + (open.back().object ? "." + last_key : std::string("[]"));
    };
    using Event = nlohmann::json::parse_event_t;
    auto limit = [&](int depth, Event event, nlohmann::json& parsed) {
        if (depth > max_depth) too_deep = true;
        if (refuse_duplicate_keys && duplicate.empty()) {
            if (event == Event::object_start || event == Event::array_start) {
                std::string path = child_path();
                open.push_back({event == Event::object_start, {}, std::move(path)});
            } else if ((event == Event::object_end || event == Event::array_end) && !open.empty()) {
                open.pop_back();
            } else if (event == Event::key && !open.empty()) {
                last_key = parsed.is_string() ? parsed.get<std::string>() : parsed.dump();
                if (!open.back().keys.insert(last_key).second) {
                    duplicate = open.back().path + "." + last_key;
                    duplicate_key = last_key;
                }
            }
        }
        return !too_deep && duplicate.empty();
    };
    try {
        nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), limit);
        if (too_deep) {
            error = "JSON nested deeper than " + std::to_string(max_depth) + " levels";
            return std::nullopt;
        }
        if (!duplicate.empty()) {
            error = "duplicate key " + quote_value(duplicate_key, 100) + " at " +
                    terminal_text(duplicate, 200) +
                    " (a key may appear once in an object; which value was meant is unknown)";
            return std::nullopt;
        }
        return j;
    } catch (const nlohmann::json::exception& e) {
        error = too_deep ? "JSON nested deeper than " + std::to_string(max_depth) + " levels"
                         : std::string(e.what());
        return std::nullopt;
    }
}

std::string string_at(const nlohmann::json& j, const char* key) {
    if (!j.is_object()) return {};
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace td
