#pragma once
// `torchdock diff`: what differs between two environment fingerprints (core/doctor's schema 1,
// a host or an image), ranked by how likely each difference is to break a GPU job. Pure.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace td {

struct FingerprintDifference {
    // "driver.version", "torch.cudnn", "env.LD_LIBRARY_PATH", "libraries[cudnn]",
    // "findings[DR110].severity", "kernels[/x/libtorch_cuda.so]": list elements by identity
    std::string path;
    std::string a, b;      // the values in A and B; "(absent)" where one side lacks it
    std::string category;  // one of diff_categories()
    int weight = 0;        // higher = more likely to break a GPU job
    std::string why;       // one line: why this difference matters
};

// The categories, most decisive first: driver cuda cudnn nccl arch torch gpu libraries
// search_path findings kernels image env os python cosmetic (image: what a node-check saw of
// the image on its node: its ID, the engine, /dev/shm in its containers).
const std::vector<std::string>& diff_categories();

// How `diff` ranks one flattened leaf (core/diagnose/fingerprint_flatten) whose value is `a` on
// one side and `b` on the other ("(absent)" for a side without it); `version_a`/`version_b`
// are the leaves' versions (FlatLeaf::version), "" when they have none.
FingerprintDifference rank_difference(const std::string& path, const std::string& a,
                                      const std::string& b, const std::string& version_a = "",
                                      const std::string& version_b = "");

// What an absent side shows as.
inline const std::string k_absent = "(absent)";

// Every leaf that differs (core/diagnose/fingerprint_flatten: list elements matched by
// identity, never by position, so a reordered list is no difference and an element on one
// side only is one difference), plus each GPU of one side whose compute capability the
// other side's torch arch list lacks. Sorted by weight (highest first), then path.
// Identical fingerprints give an empty list. Missing and null fields are the same.
std::vector<FingerprintDifference> diff_fingerprints(const nlohmann::json& a,
                                                     const nlohmann::json& b);

}  // namespace td
