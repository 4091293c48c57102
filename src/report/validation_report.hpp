#pragma once
// `torchdock validate` results for people (tables) and CI (JSON, JUnit XML, Markdown),
// all from one model.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/validate/checks.hpp"

namespace td::report {

struct ImageValidation {
    std::string image;
    std::string image_id;  // what the probes ran on ("sha256:..."), resolved once
    std::string expectations_source;
    // The image's platform as its files say ("linux/arm64"; the config's where no file says
    // it; "" when neither), and what its config claims (ImageInfo::platform).
    std::string platform;
    std::string platform_claimed;
    // How the image was read (core/validate/platform ReadingTier): "full", "emulated" (its code
    // under qemu-user) or "files-only"; tier_reason says why, "" for full.
    std::string tier = "full";
    std::string tier_reason;
    // Where its processes ran (engine/image_host): "engine" (throwaway containers) or
    // "sandbox" (its layers unpacked, run under bubblewrap, no daemon); runner_detail says
    // where the image came from and what unpacking it cost.
    std::string runner = "engine";
    std::string runner_detail;
    std::vector<CheckResult> checks;
    std::map<std::string, ProbeRun> probes;  // the evidence the checks rest on (JSON report)
    std::optional<long long> shm_bytes;      // /dev/shm a default run of the image gets here
    std::string error;  // the image could not be validated at all (missing image, engine)
    bool missing_image = false;
    double seconds = 0;
    // Waivers that changed nothing, and why; waivers the image's labels claim (never applied).
    std::vector<std::string> waiver_notes;
    int failed() const;   // fail and error checks, plus the image-level error
    int errored() const;  // checks that could not be judged
    int passed() const;
    int skipped() const;
    int warned() const;
    int waived() const;  // fail or warn results a waiver covers: never passed, never failed
};

std::string validation_table(const ImageValidation& v);                   // one image, every check
std::string validation_summary(const std::vector<ImageValidation>& all);  // one line per image
std::string validation_json(const std::vector<ImageValidation>& all);
std::string validation_junit(const std::vector<ImageValidation>& all);
std::string validation_markdown(const std::vector<ImageValidation>& all);

}  // namespace td::report
