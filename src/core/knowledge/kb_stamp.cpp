#include "core/knowledge/kb_stamp.hpp"

#include <cctype>
#include <nlohmann/json.hpp>

namespace td {
namespace {

bool is_iso_date(const std::string& s) {
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
    for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
        if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    int month = std::stoi(s.substr(5, 2)), day = std::stoi(s.substr(8, 2));
    return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

}  // namespace

Result<std::string> parse_kb_date(const std::string& text) {
    auto doc = nlohmann::json::parse(text, nullptr, false);
    std::string where = std::string(k_kb_stamp_file) + ": ";
    if (doc.is_discarded() || !doc.is_object())
        return Error{ErrorKind::Config, where + "not a JSON object"};
    auto it = doc.find("date");
    if (it == doc.end() || !it->is_string())
        return Error{ErrorKind::Config, where + "$.date: missing (expected \"YYYY-MM-DD\")"};
    std::string date = it->get<std::string>();
    if (!is_iso_date(date))
        return Error{ErrorKind::Config, where + "$.date: \"" + date.substr(0, 40) +
                                            "\" is not a date like 2026-12-01"};
    return date;
}

std::string kb_stamp_text(const std::string& date) {
    nlohmann::ordered_json doc;
    doc["schema"] = 1;
    doc["about"] =
        "The knowledge base as a whole. date: the day its facts last changed (torchdock kb "
        "refresh sets it when it writes; set it by hand with a hand edit of the facts). "
        "torchdock --version shows it.";
    doc["date"] = date;
    return doc.dump(2) + "\n";
}

}  // namespace td
