#pragma once
// SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format, what code scanning reads)
// for `validate --sarif FILE` and `render --sarif FILE`. One run per document, tool
// "torchdock"; every string from an image or a file goes through JSON escaping (json_text).
#include <string>
#include <vector>

#include "core/json/diagnostics.hpp"
#include "report/validation_report.hpp"

namespace td::report {

// A result per check that failed, warned or could not be judged (ruleId = the check ID,
// level from its status and severity), located at the image (an artifact location with the
// reference percent-encoded, and a logical location of kind "resource"). An image that could
// not be validated at all is a tool execution notification, and the run is unsuccessful.
std::string validation_sarif(const std::vector<ImageValidation>& all);

// A result per manifest problem (rule "manifest-problem", level error) and warning (rule
// "manifest-warning", level warning) at its file, line and column, with the JSON path as
// a logical location.
std::string render_sarif(const std::vector<Diagnostic>& problems,
                         const std::vector<Diagnostic>& warnings);

// A path or image reference as a SARIF URI reference: unreserved characters and "/" kept,
// everything else percent-encoded; an absolute path becomes a file:// URI.
std::string sarif_uri(const std::string& path);

}  // namespace td::report
