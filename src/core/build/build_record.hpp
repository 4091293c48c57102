#pragma once
// The result of building one variant, as reported by `torchdock build`.
#include <string>
#include <vector>

namespace td {

struct BuildRecord {
    enum class Result { Built, Failed, Interrupted, Skipped };
    std::string variant;
    std::string reference;  // image:tag
    Result result = Result::Skipped;
    std::string image_id;
    long long size_bytes = 0;
    double seconds = 0;
    int steps = 0, cached = 0;
    std::string pushed_to;  // registry reference, when pushed
    std::string failed_step;
    std::vector<std::string> failure_tail;
    std::string error;
    std::string hint;  // what to change (a pip failure: the index it used and its setting)
    std::string log_path;
    bool timed_out = false;  // ran past --timeout (exit 4 when nothing else failed)
};

const char* build_result_name(BuildRecord::Result r);

}  // namespace td
