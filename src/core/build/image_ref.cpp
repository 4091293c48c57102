#include "core/build/image_ref.hpp"

#include "core/grammar/grammar.hpp"
#include "util/strings.hpp"

namespace td {

Result<ImageRef> ImageRef::parse(const std::string& text) {
    if (auto e = grammar::check_image_reference(text); !e.empty())
        return Error{ErrorKind::Config, e};
    ImageRef ref;
    std::string rest = text;
    if (auto at = rest.find('@'); at != std::string::npos) {
        ref.digest = rest.substr(at + 1);
        rest = rest.substr(0, at);
    }
    auto slash = rest.rfind('/');
    auto colon = rest.rfind(':');
    if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
        ref.tag = rest.substr(colon + 1);
        rest = rest.substr(0, colon);
    } else if (ref.digest.empty()) {
        ref.tag = "latest";
    }
    auto first = rest.find('/');
    std::string head = first == std::string::npos ? "" : rest.substr(0, first);
    if (!head.empty() && (head.find_first_of(".:") != std::string::npos || head == "localhost")) {
        ref.registry = head == "index.docker.io" ? "docker.io" : head;
        ref.repository = rest.substr(first + 1);
        // Docker Hub's official images live under library/ whichever way they are named.
        if (ref.registry == "docker.io" && ref.repository.find('/') == std::string::npos)
            ref.repository = "library/" + ref.repository;
    } else {
        ref.registry = "docker.io";
        ref.repository = first == std::string::npos ? "library/" + rest : rest;
    }
    return ref;
}

std::string ImageRef::str() const {
    std::string name;
    if (registry == "docker.io")
        name = starts_with(repository, "library/") ? repository.substr(8) : repository;
    else
        name = registry + "/" + repository;
    if (!tag.empty()) name += ":" + tag;
    if (!digest.empty()) name += "@" + digest;
    return name;
}

std::string ImageRef::api_host() const {
    return registry == "docker.io" ? "registry-1.docker.io" : registry;
}

bool is_loopback_host(const std::string& host_port) {
    std::string host = host_port;
    if (!host.empty() && host.front() != '[' && host.rfind(':') != std::string::npos)
        host = host.substr(0, host.rfind(':'));
    else if (!host.empty() && host.front() == '[')
        host = host.substr(0, host.find(']') + 1);
    if (host == "localhost" || host == "[::1]") return true;
    // An IPv4 literal in 127.0.0.0/8, not a DNS name that happens to start with "127.".
    auto octets = split(host, '.');
    if (octets.size() != 4 || octets[0] != "127") return false;
    for (const auto& o : octets)
        if (o.empty() || o.size() > 3 || o.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(o) > 255)
            return false;
    return true;
}

bool ImageRef::plain_http() const { return is_loopback_host(registry); }

ImageRef apply_mirrors(const ImageRef& ref, const Mirrors& mirrors) {
    auto it = mirrors.find(ref.registry);
    if (it == mirrors.end()) return ref;
    ImageRef out = ref;
    out.registry = it->second;
    return out;
}

Result<std::pair<std::string, std::string>> parse_mirror(const std::string& text) {
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        return Error{ErrorKind::Usage,
                     "mirror " + quote_value(text) +
                         " is not REGISTRY=MIRROR (like docker.io=127.0.0.1:5000)"};
    std::string from = text.substr(0, eq), to = text.substr(eq + 1);
    // Both sides must read as registry hosts (a dot, a port or "localhost"), or docker
    // would take "mirror/library/debian" for a Docker Hub repository.
    for (const auto& host : {from, to}) {
        if (auto e = grammar::check_registry_host(host); !e.empty())
            return Error{ErrorKind::Usage, "mirror " + quote_value(text) + ": " + e};
        if (host.find_first_of(".:") == std::string::npos && host != "localhost")
            return Error{ErrorKind::Usage,
                         "mirror " + quote_value(text) + ": " + quote_value(host) +
                             " is not a registry host (like docker.io or 127.0.0.1:5000)"};
    }
    return std::pair{from, to};
}

}  // namespace td
