#include "core/build/settings.hpp"

#include "core/json/json_reader.hpp"
#include "util/strings.hpp"

namespace td {

namespace {

// 127.0.0.0/8 written as a dotted quad ("127.0.0.1"), not a name that starts with "127.".
bool is_ipv4_loopback(std::string_view host) {
    auto parts = split(std::string(host), '.');
    if (parts.size() != 4 || parts[0] != "127") return false;
    for (const auto& p : parts) {
        if (p.empty() || p.size() > 3 || p.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(p) > 255)
            return false;
    }
    return true;
}

}  // namespace

std::string check_url_without_credentials(std::string_view url) {
    auto scheme = url.find("://");
    std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
    std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
    if (authority.find('@') == std::string_view::npos) return {};
    return "it carries credentials, which would be recorded in the image's build history; "
           "put them in a netrc file (setting indexes.netrc or --index-netrc) and leave them "
           "out of the URL";
}

std::string check_secret_file_path(std::string_view path) {
    for (char c : path)
        if (c == ',' || c == '"' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return "the path " + quote_value(path) +
                   " contains ',', '\"' or a control character, which BuildKit's --secret "
                   "field list cannot carry; use a path without them";
    return {};
}

std::string check_index_url(std::string_view url) {
    const std::string what = "index URL " + quote_value(url);
    if (url.size() > 2000) return what + " is longer than 2000 characters";
    for (char c : url) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f || c == '"' || c == '\'' || c == '$' || c == '`' || c == '\\')
            return what +
                   " may contain only printable ASCII without spaces, quotes, '$', '`' "
                   "or '\\'";
    }
    bool https = url.starts_with("https://"), http = url.starts_with("http://");
    if (!https && !http) return what + " must start with https://";
    std::string_view rest = url.substr(https ? 8 : 7);
    std::string_view authority = rest.substr(0, rest.find('/'));
    if (auto e = check_url_without_credentials(url); !e.empty()) return what + ": " + e;
    if (url.find_first_of("?#") != std::string_view::npos)
        return what + " has a query or fragment; give the index's base URL";
    std::string_view host = authority.substr(0, authority.rfind(':'));
    if (authority.starts_with('[')) host = authority.substr(0, authority.find(']') + 1);
    if (host.empty()) return what + " names no host";
    bool loopback = host == "localhost" || host == "[::1]" || is_ipv4_loopback(host);
    if (http && !loopback)
        return what +
               " is plain http to another host: use https (http is accepted for a "
               "loopback mirror only, as pip does)";
    return {};
}

std::string torch_variant_index(const std::string& root, const std::string& dir) {
    std::string base = root;
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/" + dir;
}

Settings parse_settings(std::string_view text, Diagnostics& diags,
                        const WaiverCheck& check_waiver) {
    Settings settings;
    auto parsed = parse_document(text, diags);
    if (!parsed) return settings;
    std::map<std::string, SourcePos> positions;
    JsonReader r(diags, positions);
    const JsonValue& root = *parsed;
    if (!r.check_object(root, "$", {"schema", "mirrors", "indexes", "waivers"}, {"schema"}))
        return settings;
    check_schema_one(r, root, "settings");
    if (const JsonValue* m = root.find("mirrors")) {
        if (!m->is_object()) {
            r.error(*m, "$.mirrors", "expected an object of registry -> mirror host");
        } else {
            for (const auto& member : m->members) {
                auto path = member_path("$.mirrors", member.key);
                auto to = r.string(member.value, path);
                if (!to) continue;
                auto parsed_mirror = parse_mirror(member.key + "=" + *to);
                if (!parsed_mirror)
                    r.error(member.value, path, parsed_mirror.error().message);
                else
                    settings.mirrors[parsed_mirror->first] = parsed_mirror->second;
            }
        }
    }
    if (const JsonValue* ix = root.find("indexes");
        ix && r.check_object(*ix, "$.indexes", {"pypi", "pytorch", "netrc"})) {
        for (auto [key, out] : {std::pair{"pypi", &settings.indexes.pypi},
                                std::pair{"pytorch", &settings.indexes.pytorch}}) {
            const JsonValue* v = ix->find(key);
            if (!v) continue;
            auto s = r.string(*v, std::string("$.indexes.") + key);
            if (!s) continue;
            if (auto e = check_index_url(*s); !e.empty())
                r.error(*v, std::string("$.indexes.") + key, e);
            else
                *out = *s;
        }
        if (const JsonValue* v = ix->find("netrc")) {
            auto s = r.string(*v, "$.indexes.netrc");
            if (s && s->empty())
                r.error(*v, "$.indexes.netrc", "an empty path; leave the key out for none");
            else if (s)
                settings.indexes.netrc = *s;
        }
    }
    if (const JsonValue* w = root.find("waivers")) {
        if (!w->is_object())
            r.error(*w, "$.waivers", "expected an object of check ID -> reason");
        else
            for (const auto& member : w->members) {
                auto path = member_path("$.waivers", member.key);
                auto reason = r.string(member.value, path);
                if (!reason) continue;
                std::string e = check_waiver ? check_waiver(member.key, *reason) : "";
                if (!e.empty())
                    r.error(member.value, path, e);
                else
                    settings.waivers[member.key] = *reason;
            }
    }
    return settings;
}

}  // namespace td
