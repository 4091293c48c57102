#pragma once
// Where an image comes from, named with the transports skopeo and podman use:
//   docker://REGISTRY/NAME[:TAG|@DIGEST]   a registry, read by torchdock's own client
//   oci:DIR[:REF]                          an OCI image layout directory
//   oci-archive:FILE[:REF]                 a tar of an OCI image layout
//   docker-archive:FILE[:NAME:TAG]         what `docker save` writes
//   squashfs:FILE                          an enroot .sqsh (the root file system, squashed)
// and a bare name, which keeps meaning the engine's image. Only the engine's images run in
// the engine; the others are unpacked and run in the sandbox (engine/sandbox).
//
// And what such an image is made of (pure readers of the JSON documents): an OCI index or
// Docker manifest list, a manifest, an image configuration, `docker save`'s manifest.json,
// and the rules for a layer's entries (whiteouts, opaque directories, links).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/build/image_ref.hpp"
#include "util/result.hpp"

namespace td {

struct ImageSource {
    enum class Transport { Engine, Registry, OciDir, OciArchive, DockerArchive, Squashfs };
    Transport transport = Transport::Engine;
    std::string text;       // as the user wrote it
    std::string path;       // OciDir, OciArchive, DockerArchive, Squashfs: the file or directory
    std::string ref;        // OciDir/OciArchive: the ref name; DockerArchive: "name:tag"; may be ""
    ImageRef registry_ref;  // Registry

    bool in_engine() const { return transport == Transport::Engine; }
    const char* transport_name() const;  // "engine", "docker", "oci", ...
};

// Parses one image argument; Usage error that names the transports for a prefix it does not
// know ("dokcer://x": did you mean docker://?), an empty path, or a path with a control
// character. A bare name is returned as Transport::Engine without further checks (the
// caller checks engine references as before).
Result<ImageSource> parse_image_source(std::string_view text);

// One content descriptor (OCI image spec descriptor.md).
struct Descriptor {
    std::string media_type, digest;
    long long size = -1;
    std::string platform;  // "linux/amd64", "linux/arm64/v8"; "" when not given
    std::string ref_name;  // annotation org.opencontainers.image.ref.name
};

// The image configuration (OCI image spec config.md; Docker's is the same shape).
struct ImageConfig {
    std::vector<std::string> env, entrypoint, cmd, volumes;
    std::string user, working_dir;
    std::map<std::string, std::string> labels;
    std::string os, architecture, variant;
    std::vector<std::string> diff_ids;  // rootfs.diff_ids, bottom first
};

struct ImageManifest {
    Descriptor config;
    std::vector<Descriptor> layers;  // bottom first
};

// `docker save`'s manifest.json: one entry per image.
struct SavedImage {
    std::string config;  // member path of the config ("<id>.json", "blobs/sha256/<hex>")
    std::vector<std::string> repo_tags;
    std::vector<std::string> layers;  // member paths, bottom first
};

bool is_index_media(std::string_view media_type);
bool is_manifest_media(std::string_view media_type);
// Whether a layer's media type is one torchdock unpacks (tar, tar+gzip, tar+zstd; OCI's and
// Docker's names); foreign layers and other artefacts are not.
bool is_layer_media(std::string_view media_type);

// An index (OCI index.json, a registry's index or manifest list): its manifests.
// Error (ErrorKind::Config) naming what is wrong.
Result<std::vector<Descriptor>> parse_index(std::string_view body);
Result<ImageManifest> parse_manifest(std::string_view body);
Result<ImageConfig> parse_image_config(std::string_view body);
Result<std::vector<SavedImage>> parse_saved_manifest(std::string_view body);

// The manifest of an index to use: the one whose ref name is `ref` (when `ref` is given),
// else the one for `platform` ("linux/amd64"), else the only image manifest. Error naming
// the refs and platforms there are.
Result<Descriptor> pick_manifest(const std::vector<Descriptor>& manifests, const std::string& ref,
                                 const std::string& platform);
// The image of a `docker save` archive: the one tagged `ref` ("name:tag"), else the only one.
Result<SavedImage> pick_saved_image(const std::vector<SavedImage>& images, const std::string& ref);

// A digest "sha256:<64 hex>" (the only algorithm accepted); "" when fine, else why not.
std::string check_digest(std::string_view digest);

// How one member path of a layer tar is applied (OCI image spec layer.md).
struct LayerEntry {
    enum class Kind { Normal, Whiteout, Opaque, Refused };
    Kind kind = Kind::Normal;
    std::string path;    // normalised relative path ("usr/lib/x"); the entry's own path, or for
                         // a whiteout the path it removes, for an opaque marker its directory
    std::string reason;  // Refused: why
};
// "./usr/lib/x", "usr/lib/x/" -> "usr/lib/x"; refused: absolute after stripping "./",
// any ".." component, an empty path, a NUL or newline.
LayerEntry classify_layer_entry(std::string_view member_path);

}  // namespace td

namespace td {

// The user a process of the image runs as, from its USER ("", "name", "uid", "name:group",
// "uid:gid") and its /etc/passwd and /etc/group text, as the engine resolves it: a name
// must be in passwd (else the error the engine gives: "unable to find user NAME"); a numeric
// uid need not be; the group is passwd's unless named; HOME is passwd's home, else "/".
struct ImageUser {
    long uid = 0, gid = 0;
    std::string home = "/";
};
Result<ImageUser> resolve_image_user(std::string_view user, std::string_view passwd,
                                     std::string_view group);

// "50G", "512M", "1T", "4096" (bytes; K, M, G, T are powers of 1024, an optional trailing B
// or iB accepted); Usage error naming the text and the accepted form.
Result<std::uint64_t> parse_byte_size(std::string_view text);

// A process's environment as the engine builds it: the image's Env, then `overrides`
// ("NAME=value", replacing by name), PATH the engine's default when neither sets it,
// HOSTNAME, and HOME from the user when unset.
std::vector<std::string> engine_environment(const std::vector<std::string>& image_env,
                                            const std::vector<std::string>& overrides,
                                            const std::string& hostname, const std::string& home);

}  // namespace td
