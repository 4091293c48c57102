// What the knowledge base covers, for messages about releases it does not know.
#include <algorithm>
#include <optional>

#include "core/knowledge/knowledge_base.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

// "2.15.0", "2.15": a release number as torch writes them (2 or 3 numeric parts).
bool plain_release_number(const std::string& s) {
    auto v = Version::parse(s);
    return v && (v->parts().size() == 2 || v->parts().size() == 3) &&
           s.find(' ') == std::string::npos;
}

}  // namespace

std::string KnowledgeBase::unknown_torch_text(const std::string& version) const {
    std::vector<std::string> known = torch_versions();
    std::optional<Version> lo, hi;
    for (const auto& k : known)
        if (auto v = Version::parse(k)) {
            if (!lo || *v < *lo) lo = v;
            if (!hi || *hi < *v) hi = v;
        }
    std::string covers = known.empty()
                             ? std::string("data/torch.json lists no torch release")
                             : "data/torch.json covers torch " + lo->str() + " to " + hi->str() +
                                   " (" + std::to_string(known.size()) + " releases)";
    std::string refresh =
        "run `torchdock kb refresh` to add releases published since the knowledge base was "
        "last refreshed (it reads PyPI; nothing else needs the network)";
    std::string head = "torch " + quote_value(version) + " is not in the knowledge base: ";
    if (!plain_release_number(version)) {
        std::string msg = "torch " + quote_value(version) + " is not a release number; " + covers;
        if (auto near = closest_match(version, known)) msg += "; did you mean \"" + *near + "\"?";
        return msg;
    }
    auto want = *Version::parse(version);
    if (hi && *hi < want) return head + covers + " and " + version + " is newer; " + refresh;
    if (lo && want < *lo)
        return head + covers + "; torchdock renders nothing older than " + lo->str();
    std::vector<std::string> series;
    for (const auto& k : known)
        if (auto v = Version::parse(k); v && v->major_minor() == want.major_minor())
            series.push_back(k);
    std::string msg = head + covers;
    if (!series.empty())
        msg += "; its " + want.major_minor() + " releases are " + join(series, ", ");
    else
        msg += "; it has no " + want.major_minor() + " release";
    return msg + "; if " + version + " was published after the last refresh, " + refresh;
}

}  // namespace td
