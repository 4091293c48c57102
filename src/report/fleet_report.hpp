#pragma once
// `torchdock fleet`'s report: the terminal table, JSON (every node's node-check report with the
// comparison), Markdown and JUnit XML (one test case per node).
#include <string>

#include "core/fleet/fleet.hpp"

namespace td::report {

std::string fleet_table(const FleetReport& r);
std::string fleet_json(const FleetReport& r);
std::string fleet_markdown(const FleetReport& r);
std::string fleet_junit(const FleetReport& r);

}  // namespace td::report
