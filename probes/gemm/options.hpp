#pragma once
// probe-gemm's flags (README.md lists them with their defaults).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "blas.hpp"
#include "probe.hpp"
#include "timing.hpp"

namespace gemm {

struct Options {
    std::vector<Shape> shapes;
    std::vector<const DType*> dtypes;
    TimingPlan plan;
    int device = 0;
    long check_max = 2048;  // the correctness run's M and N are at most this
    std::string dump_dir;   // --dump-operands: write the timed operands' bytes here
    std::map<std::string, double> peak;
};

inline bool parse_long(const std::string& s, long lo, long hi, long& out) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 12)
        return false;
    out = std::stol(s);
    return out >= lo && out <= hi;
}

// A finite number in [lo, hi].
inline bool parse_number(const std::string& s, double lo, double hi, double& out) {
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return !s.empty() && end && *end == '\0' && std::isfinite(out) && out >= lo && out <= hi;
}

// "" when the flags are good, else what is wrong with them.
inline std::string parse_options(const std::map<std::string, std::string>& flags, Options& o) {
    const long kMaxDim = 1L << 20;  // also keeps every leading dimension within int
    for (const auto& f : flags) {
        const std::string& key = f.first;
        const std::string& val = f.second;
        if (key == "sizes") {
            o.shapes.clear();
            for (const std::string& item : probe::split(val, ',')) {
                std::vector<std::string> dims = probe::split(item, 'x');
                long v[3];
                if (dims.size() != 1 && dims.size() != 3)
                    return "--sizes: \"" + item + "\" is neither N nor MxNxK";
                for (size_t i = 0; i < dims.size(); ++i)
                    if (!parse_long(dims[i], 1, kMaxDim, v[i]))
                        return "--sizes: \"" + item + "\" needs dimensions from 1 to " +
                               std::to_string(kMaxDim);
                o.shapes.push_back(dims.size() == 1 ? Shape{v[0], v[0], v[0]}
                                                    : Shape{v[0], v[1], v[2]});
            }
        } else if (key == "dtypes") {
            o.dtypes.clear();
            for (const std::string& item : probe::split(val, ',')) {
                const DType* d = find_dtype(item);
                if (!d)
                    return "--dtypes: unknown dtype \"" + item + "\" (fp32, tf32, fp16, bf16, fp8)";
                if (std::find(o.dtypes.begin(), o.dtypes.end(), d) == o.dtypes.end())
                    o.dtypes.push_back(d);
            }
        } else if (key == "repeats" || key == "warmup" || key == "device" || key == "check-max") {
            long v = 0;
            if (!parse_long(val, key == "repeats" || key == "check-max" ? 1 : 0,
                            key == "check-max" ? kMaxDim : 100000, v))
                return "--" + key + ": bad value \"" + val + "\"";
            if (key == "check-max")
                o.check_max = v;
            else
                (key == "repeats"  ? o.plan.repeats
                 : key == "warmup" ? o.plan.warmup
                                   : o.device) = static_cast<int>(v);
        } else if (key == "timing") {
            if (val != "sustained" && val != "short")
                return "--timing: \"" + val + "\" is neither sustained nor short";
            o.plan.sustained = val == "sustained";
        } else if (key == "seconds" || key == "warmup-seconds") {
            double v = 0;
            if (!parse_number(val, key == "seconds" ? 0.001 : 0, 3600, v))
                return "--" + key + ": \"" + val + "\" is not a number of seconds" +
                       (key == "seconds" ? " above 0" : "") + " up to 3600";
            (key == "seconds" ? o.plan.seconds : o.plan.warmup_seconds) = v;
        } else if (key == "dump-operands") {
            if (val.empty() || val == "1") return "--dump-operands needs a directory";
            o.dump_dir = val;
        } else if (key == "peak-tflops") {
            for (const std::string& item : probe::split(val, ',')) {
                std::vector<std::string> kv = probe::split(item, ':');
                double p = 0;
                if (kv.size() != 2 || !find_dtype(kv[0]) || !parse_number(kv[1], 1e-9, 1e9, p))
                    return "--peak-tflops: \"" + item + "\" is not DTYPE:TFLOPS";
                o.peak[kv[0]] = p;
            }
        } else if (key == "?") {
            return "unexpected argument \"" + val + "\"";
        } else {
            return "unknown flag --" + key;
        }
    }
    if (o.shapes.empty()) o.shapes.push_back({8192, 8192, 8192});
    if (o.dtypes.empty())
        for (const DType& d : kDTypes) o.dtypes.push_back(&d);
    return {};
}

}  // namespace gemm
