#pragma once
// data/knowledge_base.json: the date of the knowledge base as a whole (the day its facts last
// changed), shown by `torchdock --version` and set by `kb refresh` when it writes facts.
#include <string>

#include "util/result.hpp"

namespace td {

inline constexpr const char* k_kb_stamp_file = "knowledge_base.json";

// The "date" of a knowledge_base.json text, checked to be YYYY-MM-DD; Config errors name
// the file and the JSON path.
Result<std::string> parse_kb_date(const std::string& text);

// The text of knowledge_base.json for `date` (YYYY-MM-DD), as kb refresh writes it.
std::string kb_stamp_text(const std::string& date);

}  // namespace td
