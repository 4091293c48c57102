#include "core/build/image_source.hpp"

#include <nlohmann/json.hpp>

#include "core/build/registry_policy.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

using json = nlohmann::json;

struct TransportName {
    std::string_view prefix;
    ImageSource::Transport transport;
};
constexpr TransportName k_transports[] = {
    {"docker://", ImageSource::Transport::Registry},
    {"oci-archive:", ImageSource::Transport::OciArchive},
    {"oci:", ImageSource::Transport::OciDir},
    {"docker-archive:", ImageSource::Transport::DockerArchive},
    {"squashfs:", ImageSource::Transport::Squashfs},
};

Error parse_error(const std::string& what, const std::string& message) {
    return Error{ErrorKind::Config, what + ": " + message};
}

std::string text_of(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>()
                                                                     : std::string();
}

// A list of strings at `key`; absent or null is empty; anything else is an error.
Result<std::vector<std::string>> strings_of(const json& j, const char* key,
                                            const std::string& what) {
    std::vector<std::string> out;
    if (!j.contains(key) || j.at(key).is_null()) return out;
    if (!j.at(key).is_array()) return parse_error(what, std::string(key) + " is not an array");
    for (const auto& item : j.at(key)) {
        if (!item.is_string())
            return parse_error(what, std::string(key) + " has an item that is not a string");
        out.push_back(item.get<std::string>());
    }
    return out;
}

Result<json> parse_object(std::string_view body, const std::string& what) {
    if (body.size() > registry::k_max_manifest_bytes) return parse_error(what, "larger than 4 MiB");
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return parse_error(what, "not JSON");
    if (!j.is_object()) return parse_error(what, "not a JSON object");
    return j;
}

Result<Descriptor> descriptor_of(const json& d, const std::string& what) {
    if (!d.is_object()) return parse_error(what, "a descriptor is not an object");
    Descriptor out;
    out.media_type = text_of(d, "mediaType");
    out.digest = text_of(d, "digest");
    if (auto bad = check_digest(out.digest); !bad.empty()) return parse_error(what, bad);
    if (d.contains("size")) {
        if (!d.at("size").is_number_integer() || d.at("size").get<long long>() < 0)
            return parse_error(what, "descriptor " + out.digest + " has no valid size");
        out.size = d.at("size").get<long long>();
    }
    if (d.contains("platform") && d.at("platform").is_object()) {
        const json& p = d.at("platform");
        std::string os = text_of(p, "os"), arch = text_of(p, "architecture"),
                    variant = text_of(p, "variant");
        if (arch == "arm64" && variant == "v8") variant.clear();
        if (!os.empty() && !arch.empty())
            out.platform = os + "/" + arch + (variant.empty() ? "" : "/" + variant);
    }
    if (d.contains("annotations") && d.at("annotations").is_object())
        out.ref_name = text_of(d.at("annotations"), "org.opencontainers.image.ref.name");
    return out;
}

}  // namespace

const char* ImageSource::transport_name() const {
    switch (transport) {
        case Transport::Engine:
            return "engine";
        case Transport::Registry:
            return "docker";
        case Transport::OciDir:
            return "oci";
        case Transport::OciArchive:
            return "oci-archive";
        case Transport::DockerArchive:
            return "docker-archive";
        case Transport::Squashfs:
            return "squashfs";
    }
    return "engine";
}

Result<ImageSource> parse_image_source(std::string_view text) {
    ImageSource s;
    s.text = std::string(text);
    for (const auto& t : k_transports) {
        if (!starts_with(text, t.prefix)) continue;
        s.transport = t.transport;
        std::string rest(text.substr(t.prefix.size()));
        for (char c : rest)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
                return Error{ErrorKind::Usage, "image " + quote_value(s.text) +
                                                   " has a control character in its path"};
        if (rest.empty())
            return Error{ErrorKind::Usage, "image " + quote_value(s.text) + " names no " +
                                               (t.transport == ImageSource::Transport::Registry
                                                    ? "image"
                                                    : "file or directory") +
                                               " after " + std::string(t.prefix)};
        if (t.transport == ImageSource::Transport::Registry) {
            auto ref = ImageRef::parse(rest);
            if (!ref)
                return Error{ErrorKind::Usage,
                             "image " + quote_value(s.text) + ": " + ref.error().message};
            s.registry_ref = ref.value();
            return s;
        }
        // PATH[:REF] for the layouts and archives (a path with a colon is not supported, as
        // in skopeo); squashfs: takes no ref.
        auto colon = rest.find(':');
        if (colon != std::string::npos && t.transport != ImageSource::Transport::Squashfs) {
            s.ref = rest.substr(colon + 1);
            rest.resize(colon);
            if (rest.empty() || s.ref.empty())
                return Error{ErrorKind::Usage, "image " + quote_value(s.text) + ": expected " +
                                                   std::string(t.prefix) +
                                                   "PATH[:REF] with both parts non-empty"};
        }
        s.path = rest;
        return s;
    }
    // A word followed by ':' that looks like a transport but is none of them.
    auto colon = text.find(':');
    if (colon != std::string_view::npos && colon + 2 < text.size() &&
        text.substr(colon, 3) == "://") {
        return Error{ErrorKind::Usage,
                     "image " + quote_value(s.text) + ": unknown transport " +
                         quote_value(std::string(text.substr(0, colon + 3))) +
                         " (accepted: docker://, oci:, oci-archive:, docker-archive:, "
                         "squashfs:, or an engine image name)"};
    }
    for (std::string_view word : {"oci", "oci-archive", "docker-archive", "squashfs", "sqsh", "dir",
                                  "containers-storage", "docker-daemon"}) {
        if (colon == word.size() && text.substr(0, colon) == word)
            return Error{ErrorKind::Usage,
                         "image " + quote_value(s.text) + ": transport " +
                             quote_value(std::string(word) + ":") +
                             " is not one torchdock reads (accepted: docker://, oci:, "
                             "oci-archive:, docker-archive:, squashfs:, or an engine image name)"};
    }
    return s;
}

bool is_index_media(std::string_view m) {
    return m == "application/vnd.oci.image.index.v1+json" ||
           m == "application/vnd.docker.distribution.manifest.list.v2+json";
}

bool is_manifest_media(std::string_view m) {
    return m == "application/vnd.oci.image.manifest.v1+json" ||
           m == "application/vnd.docker.distribution.manifest.v2+json";
}

bool is_layer_media(std::string_view m) {
    return m == "application/vnd.oci.image.layer.v1.tar" ||
           m == "application/vnd.oci.image.layer.v1.tar+gzip" ||
           m == "application/vnd.oci.image.layer.v1.tar+zstd" ||
           m == "application/vnd.docker.image.rootfs.diff.tar.gzip" ||
           m == "application/vnd.docker.image.rootfs.diff.tar" || m.empty();
}

std::string check_digest(std::string_view digest) {
    if (!starts_with(digest, "sha256:"))
        return "digest " + quote_value(std::string(digest)) +
               " is not sha256:<64 hex digits> (the only algorithm torchdock verifies)";
    auto hex = digest.substr(7);
    bool ok = hex.size() == 64;
    for (char c : hex) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    return ok ? ""
              : "digest " + quote_value(std::string(digest)) + " is not sha256:<64 hex digits>";
}

Result<std::vector<Descriptor>> parse_index(std::string_view body) {
    auto j = parse_object(body, "index");
    if (!j) return j.error();
    if (!j->contains("manifests") || !j->at("manifests").is_array())
        return parse_error("index", "no \"manifests\" array");
    std::vector<Descriptor> out;
    for (const auto& m : j->at("manifests")) {
        auto d = descriptor_of(m, "index");
        if (!d) return d.error();
        out.push_back(std::move(d.value()));
    }
    return out;
}

Result<ImageManifest> parse_manifest(std::string_view body) {
    auto j = parse_object(body, "image manifest");
    if (!j) return j.error();
    if (!j->contains("config") || !j->contains("layers") || !j->at("layers").is_array())
        return parse_error("image manifest", "no \"config\" and \"layers\"");
    ImageManifest out;
    auto config = descriptor_of(j->at("config"), "image manifest");
    if (!config) return config.error();
    out.config = std::move(config.value());
    for (const auto& l : j->at("layers")) {
        auto d = descriptor_of(l, "image manifest");
        if (!d) return d.error();
        if (!is_layer_media(d->media_type))
            return parse_error("image manifest", "layer " + d->digest + " has media type " +
                                                     quote_value(d->media_type) +
                                                     ", not a tar layer torchdock unpacks");
        out.layers.push_back(std::move(d.value()));
    }
    return out;
}

Result<ImageConfig> parse_image_config(std::string_view body) {
    const std::string what = "image configuration";
    auto j = parse_object(body, what);
    if (!j) return j.error();
    ImageConfig c;
    c.os = text_of(j.value(), "os");
    c.architecture = text_of(j.value(), "architecture");
    c.variant = text_of(j.value(), "variant");
    if (j->contains("config") && j->at("config").is_object()) {
        const json& cfg = j->at("config");
        for (auto [key, into] : {std::pair{"Env", &c.env}, std::pair{"Entrypoint", &c.entrypoint},
                                 std::pair{"Cmd", &c.cmd}}) {
            auto list = strings_of(cfg, key, what);
            if (!list) return list.error();
            *into = std::move(list.value());
        }
        c.user = text_of(cfg, "User");
        c.working_dir = text_of(cfg, "WorkingDir");
        if (cfg.contains("Labels") && cfg.at("Labels").is_object())
            for (const auto& [k, v] : cfg.at("Labels").items())
                if (v.is_string()) c.labels[k] = v.get<std::string>();
        if (cfg.contains("Volumes") && cfg.at("Volumes").is_object())
            for (const auto& [k, v] : cfg.at("Volumes").items()) c.volumes.push_back(k);
    }
    if (j->contains("rootfs") && j->at("rootfs").is_object()) {
        auto ids = strings_of(j->at("rootfs"), "diff_ids", what);
        if (!ids) return ids.error();
        for (const auto& id : ids.value())
            if (auto bad = check_digest(id); !bad.empty()) return parse_error(what, bad);
        c.diff_ids = std::move(ids.value());
    }
    return c;
}

Result<std::vector<SavedImage>> parse_saved_manifest(std::string_view body) {
    const std::string what = "manifest.json";
    if (body.size() > registry::k_max_manifest_bytes) return parse_error(what, "larger than 4 MiB");
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_array()) return parse_error(what, "not a JSON array");
    std::vector<SavedImage> out;
    for (const auto& item : j) {
        if (!item.is_object()) return parse_error(what, "an entry is not an object");
        SavedImage s;
        s.config = text_of(item, "Config");
        if (s.config.empty()) return parse_error(what, "an entry has no \"Config\"");
        auto tags = strings_of(item, "RepoTags", what);
        auto layers = strings_of(item, "Layers", what);
        if (!tags) return tags.error();
        if (!layers) return layers.error();
        s.repo_tags = std::move(tags.value());
        s.layers = std::move(layers.value());
        out.push_back(std::move(s));
    }
    if (out.empty()) return parse_error(what, "lists no image");
    return out;
}

Result<Descriptor> pick_manifest(const std::vector<Descriptor>& manifests, const std::string& ref,
                                 const std::string& platform) {
    std::vector<const Descriptor*> images;
    for (const auto& m : manifests)
        if (is_manifest_media(m.media_type) || m.media_type.empty()) images.push_back(&m);
    std::string there;
    for (const auto* m : images)
        there += (there.empty() ? "" : ", ") +
                 (m->ref_name.empty() ? m->digest.substr(0, 19) : m->ref_name) +
                 (m->platform.empty() ? "" : " (" + m->platform + ")");
    if (there.empty()) there = "none";
    if (!ref.empty()) {
        for (const auto* m : images)
            if (m->ref_name == ref) return *m;
        return Error{ErrorKind::Usage, "no image named " + quote_value(ref) +
                                           " in the layout (it has: " + there + ")"};
    }
    for (const auto* m : images)
        if (!m->platform.empty() && m->platform == platform) return *m;
    if (images.size() == 1) return *images.front();
    return Error{ErrorKind::Usage, "no single image to pick (it has: " + there +
                                       "); name one with :REF, or none for " + platform};
}

Result<SavedImage> pick_saved_image(const std::vector<SavedImage>& images, const std::string& ref) {
    std::string there;
    for (const auto& i : images)
        there +=
            (there.empty() ? "" : ", ") + (i.repo_tags.empty() ? i.config : join(i.repo_tags, " "));
    if (!ref.empty()) {
        std::string wanted = ref.find(':') == std::string::npos ? ref + ":latest" : ref;
        for (const auto& i : images)
            for (const auto& t : i.repo_tags)
                if (t == wanted || t == ref) return i;
        return Error{ErrorKind::Usage, "no image tagged " + quote_value(ref) +
                                           " in the archive (it has: " + there + ")"};
    }
    if (images.size() == 1) return images.front();
    return Error{ErrorKind::Usage, "the archive holds " + std::to_string(images.size()) +
                                       " images (" + there + "); name one with :NAME:TAG"};
}

LayerEntry classify_layer_entry(std::string_view member) {
    LayerEntry e;
    auto refuse = [&](const std::string& why) {
        e.kind = LayerEntry::Kind::Refused;
        e.reason = "layer member " + quote_value(std::string(member)) + " " + why;
        return e;
    };
    if (member.find('\0') != std::string_view::npos || member.find('\n') != std::string_view::npos)
        return refuse("has a NUL or newline in its name");
    std::string_view p = member;
    while (starts_with(p, "./")) p.remove_prefix(2);
    while (!p.empty() && p.back() == '/') p.remove_suffix(1);
    if (p == "." || p.empty()) {
        e.kind = LayerEntry::Kind::Normal;  // the root itself: nothing to create
        return e;
    }
    if (p.front() == '/') return refuse("is an absolute path");
    std::vector<std::string> parts;
    for (const auto& part : split(std::string(p), '/')) {
        if (part.empty() || part == ".") continue;
        if (part == "..") return refuse("has a \"..\" component");
        parts.push_back(part);
    }
    std::string base = parts.back();
    parts.pop_back();
    std::string dir = join(parts, "/");
    auto under = [&](const std::string& name) { return dir.empty() ? name : dir + "/" + name; };
    if (base == ".wh..wh..opq") {
        e.kind = LayerEntry::Kind::Opaque;
        e.path = dir;
        return e;
    }
    if (starts_with(base, ".wh.")) {
        std::string target = base.substr(4);
        if (target.empty() || target == "." || target == "..")
            return refuse("is a whiteout of nothing");
        e.kind = LayerEntry::Kind::Whiteout;
        e.path = under(target);
        return e;
    }
    e.kind = LayerEntry::Kind::Normal;
    e.path = under(base);
    return e;
}

}  // namespace td

namespace td {
namespace {

// The fields of the line of a passwd/group file whose field `key_index` is `key`.
std::vector<std::string> colon_record(std::string_view text, const std::string& key,
                                      std::size_t key_index) {
    for (const auto& line : split(std::string(text), '\n')) {
        auto fields = split(line, ':');
        if (fields.size() > key_index && fields[key_index] == key) return fields;
    }
    return {};
}

std::optional<long> number_of(const std::string& s) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    return std::stol(s);
}

}  // namespace

Result<ImageUser> resolve_image_user(std::string_view user, std::string_view passwd,
                                     std::string_view group) {
    ImageUser u;
    std::string text(user);
    if (text.empty()) text = "0";
    std::string name = text.substr(0, text.find(':'));
    std::string grp = text.find(':') == std::string::npos ? "" : text.substr(text.find(':') + 1);
    std::vector<std::string> rec;
    if (auto uid = number_of(name)) {
        u.uid = *uid;
        rec = colon_record(passwd, name, 2);
    } else {
        rec = colon_record(passwd, name, 0);
        if (rec.size() < 4 || !number_of(rec[2]))
            return Error{ErrorKind::Config,
                         "unable to find user " + name + ": no matching entries in passwd file"};
        u.uid = *number_of(rec[2]);
    }
    if (rec.size() >= 4 && number_of(rec[3])) u.gid = *number_of(rec[3]);
    if (rec.size() >= 6 && !rec[5].empty()) u.home = rec[5];
    if (!grp.empty()) {
        if (auto gid = number_of(grp)) {
            u.gid = *gid;
        } else {
            auto g = colon_record(group, grp, 0);
            if (g.size() < 3 || !number_of(g[2]))
                return Error{ErrorKind::Config,
                             "unable to find group " + grp + ": no matching entries in group file"};
            u.gid = *number_of(g[2]);
        }
    }
    return u;
}

Result<std::uint64_t> parse_byte_size(std::string_view text) {
    std::string t(text);
    auto bad = [&] {
        return Error{ErrorKind::Usage,
                     "size " + quote_value(t) +
                         " is not a size (a number of bytes, or with K, M, G or T: 50G)"};
    };
    std::size_t digits = 0;
    while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9') ++digits;
    if (digits == 0 || digits > 15) return bad();
    std::uint64_t n = std::stoull(t.substr(0, digits));
    std::string unit = to_lower(t.substr(digits));
    if (ends_with(unit, "ib"))
        unit.resize(unit.size() - 2);
    else if (unit.size() == 2 && unit.back() == 'b')
        unit.pop_back();
    int shift = unit.empty() || unit == "b" ? 0
                : unit == "k"               ? 10
                : unit == "m"               ? 20
                : unit == "g"               ? 30
                : unit == "t"               ? 40
                                            : -1;
    if (shift < 0) return bad();
    if (shift && n > (std::uint64_t{1} << (63 - shift))) return bad();
    return n << shift;
}

std::vector<std::string> engine_environment(const std::vector<std::string>& image_env,
                                            const std::vector<std::string>& overrides,
                                            const std::string& hostname, const std::string& home) {
    std::vector<std::string> out;
    auto name_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
    auto set = [&](const std::string& kv) {
        for (auto& e : out)
            if (name_of(e) == name_of(kv)) {
                e = kv;
                return;
            }
        out.push_back(kv);
    };
    auto has = [&](const std::string& name) {
        for (const auto& e : out)
            if (name_of(e) == name) return true;
        return false;
    };
    for (const auto& kv : image_env) set(kv);
    for (const auto& kv : overrides) set(kv);
    if (!has("PATH")) set("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    set("HOSTNAME=" + hostname);
    if (!has("HOME")) set("HOME=" + home);
    return out;
}

}  // namespace td
