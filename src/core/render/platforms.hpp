#pragma once
// The platforms a manifest's images are built for (manifest "platforms"): the names render
// accepts, BuildKit's TARGETARCH and the wheel machine of each, the key of each platform's
// Python set in the lock file, and whether a variant's torch exists on a platform by the
// knowledge base's facts (torch.json "platforms", read from PyPI by `kb refresh`). Pure.
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "core/render/variant.hpp"

namespace td {

// The platform of a manifest without "platforms", and of every lock written before them.
inline constexpr const char* k_default_platform = "linux/amd64";

// Whether a manifest builds for linux/amd64 alone (as every manifest before "platforms"):
// its Dockerfile, labels and index entry then say nothing of platforms.
bool default_platform_only(const Manifest& m);

// The platforms render writes Dockerfiles for: linux/amd64 and linux/arm64.
const std::vector<std::string>& build_platforms();
// "" when `s` is one of them; else the offending value and what is accepted.
std::string check_build_platform(std::string_view s);
// BuildKit's TARGETARCH for a build platform: "amd64", "arm64".
std::string target_arch(const std::string& platform);
// The machine its wheels are built for, as wheel tags and uv spell it: "x86_64", "aarch64".
std::string wheel_machine(const std::string& platform);

// The key of a variant's Python set for `platform` in the lock file's "python": the variant's
// name for linux/amd64 (as in every lock written before platforms), "NAME@linux/arm64" else.
std::string python_lock_key(const std::string& variant, const std::string& platform);
// A key of the lock file's "python": "" when it is a variant name, optionally followed by
// "@" and a build platform other than linux/amd64; else what is wrong.
std::string check_python_lock_key(std::string_view key);
// The platform a key names (k_default_platform when it names none).
std::string python_lock_key_platform(std::string_view key);

// Why variant `v` cannot be built for `platform` by the knowledge base's facts, in one
// sentence naming the release or setting that would work; "" when it can, or when only the
// lock can tell (a base image's platforms come from its registry index, the PyTorch wheel
// index's from uv's resolution there).
std::string platform_refusal(const Variant& v, const std::string& platform,
                             const KnowledgeBase& kb);

// What a base image lacks for the platforms its variants are built for (`wanted`): "" when
// it is an index (`index`) listing each; else which are missing and what it lists. A single
// manifest lists none: its platform is not in the answer, and it could serve only one.
std::string base_platforms_problem(const std::set<std::string>& wanted, bool index,
                                   const std::map<std::string, std::string>& listed);

// Whether `build --platform` can build `platform` on an engine whose host is
// `engine_machine` (GET /info Architecture, uname's name: "x86_64"). Natively: nothing to
// say. Another machine needs emulation: with `emulated` (this host's binfmt_misc has its
// qemu handler; the engine's socket is a local one) a note saying so; without, an error
// naming what to install or where to build instead.
struct BuildPlatformVerdict {
    std::string error;  // non-empty: refuse
    std::string note;   // said before building
};
BuildPlatformVerdict judge_build_platform(const std::string& platform,
                                          const std::string& engine_machine, bool emulated);

}  // namespace td
