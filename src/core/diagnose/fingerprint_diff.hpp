#pragma once
// `torchdock diff`: what differs between two environment fingerprints (core/doctor's schema 1,
// a host or an image), ranked by how likely each difference is to break a GPU job. Pure.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace td {

struct FingerprintDifference {
    std::string path;  // "driver.version", "torch.cudnn", "env.LD_LIBRARY_PATH", "libraries[cudnn]"
    std::string a, b;  // the values in A and B; "(absent)" where one side lacks it
    std::string category;  // driver | cuda | cudnn | nccl | arch | libraries | search_path | torch
                           // | gpu | os | python | env | cosmetic
    int weight = 0;        // higher = more likely to break a GPU job
    std::string why;       // one line: why this difference matters
};

// Every leaf that differs (objects flattened; libraries, duplicates and unresolved keyed by
// name/soname, gpus by index, env per variable), plus each GPU of one side whose compute
// capability the other side's torch arch list lacks. Sorted by weight (highest first), then
// path. Identical fingerprints give an empty list. Missing and null fields are the same.
std::vector<FingerprintDifference> diff_fingerprints(const nlohmann::json& a,
                                                     const nlohmann::json& b);

}  // namespace td
