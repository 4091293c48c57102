#pragma once
// Expands manifests into variants and refuses combinations that do not exist or cannot
// work, naming what would. Pure: manifests + knowledge base + lock digests in, variants
// or diagnostics out, in a deterministic order.
#include <map>
#include <string>
#include <vector>

#include "core/json/diagnostics.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "core/render/variant.hpp"

namespace td {

// Lock digests: base image reference (as rendered) -> "sha256:...".
using LockDigests = std::map<std::string, std::string>;

// Appends the variants of `manifest` to `out`; problems go to `diags` (file of the manifest).
void expand_manifest(const std::shared_ptr<const Manifest>& manifest, const KnowledgeBase& kb,
                     const LockDigests& lock, std::vector<Variant>& out, Diagnostics& diags);

}  // namespace td
