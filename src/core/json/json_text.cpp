#include "core/json/json_text.hpp"

namespace td {

std::string json_text(const nlohmann::json& document) {
    return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::optional<nlohmann::json> parse_json_bounded(std::string_view text, std::string& error,
                                                 int max_depth) {
    bool too_deep = false;
    auto limit = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        if (depth > max_depth) too_deep = true;
        return !too_deep;
    };
    try {
        nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), limit);
        if (too_deep) {
            error = "JSON nested deeper than " + std::to_string(max_depth) + " levels";
            return std::nullopt;
        }
        return j;
    } catch (const nlohmann::json::exception& e) {
        error = too_deep ? "JSON nested deeper than " + std::to_string(max_depth) + " levels"
                         : std::string(e.what());
        return std::nullopt;
    }
}

}  // namespace td
