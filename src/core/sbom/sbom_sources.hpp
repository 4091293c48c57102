#pragma once
// What an SBOM lists, from what torchdock knows: a rendered variant's lock (base digest,
// every Python package with the hashes of its files and its index, the Debian packages it
// pins, the GPU code of its extensions from the knowledge base), or an image's probes
// (the distributions installed, the CUDA libraries torch loaded, the GPU targets of every
// object with GPU code). Pure.
#include <map>
#include <string>

#include "core/render/variant.hpp"
#include "core/sbom/cyclonedx.hpp"
#include "core/validate/probe_run.hpp"
#include "util/result.hpp"

namespace td {

// Refused (Config) when the variant has no Python lock: an SBOM is never better than its
// evidence, and without the lock the set is not known.
Result<SbomInput> variant_sbom_input(const Variant& v, const KnowledgeBase& kb);

// `probes` as validate gathers them (torch, record over every distribution, kernels).
// Refused when probe-record gave no evidence: the installed set is then unknown. When the
// torch probe or probe-kernels gave none, the subject's property torchdock:not-read says so.
Result<SbomInput> image_sbom_input(const std::string& image_ref, const std::string& image_id,
                                   const std::map<std::string, std::string>& labels,
                                   const std::map<std::string, ProbeRun>& probes);

}  // namespace td
