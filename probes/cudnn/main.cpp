// probe-cudnn: which cuDNN this environment loads, and does a convolution compute right?
//
// Versions (no GPU needed): cudnnGetVersion (e.g. 91900 for 9.19.0; cuDNN 8 encodes
// 8.9.7 as 8907), cudnnGetCudartVersion (the CUDA runtime cuDNN was built for) and
// CUDNN_VERSION of the headers this probe was compiled with.
//
// With a GPU: one small NCHW fp32 forward convolution (N=1, C=3, H=W=16, K=4 filters of 3x3,
// pad 1, stride 1, cross-correlation as the frameworks use), algorithm by cuDNN's own
// heuristic (cudnnGetConvolutionForwardAlgorithm_v7, default math: tf32 tensor cores allowed,
// as PyTorch allows them), compared with a host reference in double precision.
// Inputs and weights are q/8 with integer q in [-4, 4]: exact in fp32 and in tf32, and every
// partial sum is a multiple of 1/64 well inside fp32's range, so direct and implicit-GEMM
// algorithms are exact; FFT and Winograd ones round (relative errors ~1e-6). The tolerance
// is 1e-3 relative to the largest |output|.
//
// pass: the convolution is correct; fail: it is not; waived: no usable GPU (versions are
// still reported, data.conv is null); error: no libcudnn (or libcudart) loads, or a cuDNN
// call fails.
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../cuda/cudart.hpp"

namespace {

using probe::Json;

#define PROBE_FN(name) decltype(&::name) name = nullptr
struct Cudnn {
    probe::Library lib;
    PROBE_FN(cudnnGetVersion);
    PROBE_FN(cudnnGetCudartVersion);
    PROBE_FN(cudnnGetErrorString);
    PROBE_FN(cudnnCreate);
    PROBE_FN(cudnnDestroy);
    PROBE_FN(cudnnCreateTensorDescriptor);
    PROBE_FN(cudnnDestroyTensorDescriptor);
    PROBE_FN(cudnnSetTensor4dDescriptor);
    PROBE_FN(cudnnCreateFilterDescriptor);
    PROBE_FN(cudnnDestroyFilterDescriptor);
    PROBE_FN(cudnnSetFilter4dDescriptor);
    PROBE_FN(cudnnCreateConvolutionDescriptor);
    PROBE_FN(cudnnDestroyConvolutionDescriptor);
    PROBE_FN(cudnnSetConvolution2dDescriptor);
    PROBE_FN(cudnnSetConvolutionMathType);
    PROBE_FN(cudnnGetConvolution2dForwardOutputDim);
    PROBE_FN(cudnnGetConvolutionForwardAlgorithm_v7);
    PROBE_FN(cudnnGetConvolutionForwardWorkspaceSize);
    PROBE_FN(cudnnConvolutionForward);
    std::string missing;

    // `path` (the libcudnn torch loaded), else cuDNN 9 first; 8 has the same legacy
    // convolution API (9 keeps it, deprecated).
    bool load(const std::string& path) {
        lib = probe::Library(probe::path_or_sonames(path, {"libcudnn.so.9", "libcudnn.so.8"}));
        if (!lib.ok()) return false;
#define PROBE_LOAD(name)                         \
    name = lib.symbol<decltype(&::name)>(#name); \
    if (!name) missing += std::string(missing.empty() ? "" : ", ") + #name;
        PROBE_LOAD(cudnnGetVersion)
        PROBE_LOAD(cudnnGetCudartVersion)
        PROBE_LOAD(cudnnGetErrorString)
        PROBE_LOAD(cudnnCreate)
        PROBE_LOAD(cudnnDestroy)
        PROBE_LOAD(cudnnCreateTensorDescriptor)
        PROBE_LOAD(cudnnDestroyTensorDescriptor)
        PROBE_LOAD(cudnnSetTensor4dDescriptor)
        PROBE_LOAD(cudnnCreateFilterDescriptor)
        PROBE_LOAD(cudnnDestroyFilterDescriptor)
        PROBE_LOAD(cudnnSetFilter4dDescriptor)
        PROBE_LOAD(cudnnCreateConvolutionDescriptor)
        PROBE_LOAD(cudnnDestroyConvolutionDescriptor)
        PROBE_LOAD(cudnnSetConvolution2dDescriptor)
        PROBE_LOAD(cudnnSetConvolutionMathType)
        PROBE_LOAD(cudnnGetConvolution2dForwardOutputDim)
        PROBE_LOAD(cudnnGetConvolutionForwardAlgorithm_v7)
        PROBE_LOAD(cudnnGetConvolutionForwardWorkspaceSize)
        PROBE_LOAD(cudnnConvolutionForward)
#undef PROBE_LOAD
        return true;  // versions need only the first two; the convolution checks `missing`
    }
    std::string path() const {
        std::string p = lib.path();
        return p.empty() ? lib.soname() : p;
    }
    std::string status(const char* what, cudnnStatus_t s) const {
        const char* n = cudnnGetErrorString ? cudnnGetErrorString(s) : nullptr;
        return std::string(what) + ": " + (n ? n : "cudnnStatus") + " (" +
               std::to_string(static_cast<int>(s)) + ")";
    }
};
#undef PROBE_FN

// 91900 -> "9.19.0" (cuDNN 9: major*10000 + minor*100 + patch); 8907 -> "8.9.7" (cuDNN 8 and
// older: major*1000 + minor*100 + patch).
std::string version_string(size_t v) {
    size_t major, minor, patch;
    if (v >= 90000)
        major = v / 10000, minor = (v % 10000) / 100, patch = v % 100;
    else
        major = v / 1000, minor = (v % 1000) / 100, patch = v % 100;
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct ConvResult {
    bool correct = false;
    double max_abs_err = 0, tolerance = 0;
    int algo = -1;
    int math = -1;
    std::string error;  // a call failed: the probe could not check
};

// Frees what the convolution check allocated, whatever path it leaves by.
struct ConvState {
    const Cudnn& dnn;
    const probe::cuda::Runtime& rt;
    cudnnHandle_t handle = nullptr;
    cudnnTensorDescriptor_t xd = nullptr, yd = nullptr;
    cudnnFilterDescriptor_t wd = nullptr;
    cudnnConvolutionDescriptor_t cd = nullptr;
    void *x = nullptr, *w = nullptr, *y = nullptr, *ws = nullptr;
    ConvState(const Cudnn& d, const probe::cuda::Runtime& r) : dnn(d), rt(r) {}
    ~ConvState() {
        for (void* p : {x, w, y, ws})
            if (p) rt.cudaFree(p);
        if (cd) dnn.cudnnDestroyConvolutionDescriptor(cd);
        if (wd) dnn.cudnnDestroyFilterDescriptor(wd);
        if (yd) dnn.cudnnDestroyTensorDescriptor(yd);
        if (xd) dnn.cudnnDestroyTensorDescriptor(xd);
        if (handle) dnn.cudnnDestroy(handle);
    }
};

ConvResult convolution(const Cudnn& dnn, const probe::cuda::Runtime& rt) {
    const int N = 1, C = 3, H = 16, W = 16, K = 4, R = 3, S = 3, pad = 1, stride = 1, dil = 1;
    ConvResult res;
    ConvState st(dnn, rt);
    cudnnStatus_t s;
    cudaError_t e;
#define DNN(call, what)                         \
    if ((s = (call)) != CUDNN_STATUS_SUCCESS) { \
        res.error = dnn.status(what, s);        \
        return res;                             \
    }
#define RT(call, what)                    \
    if ((e = (call)) != cudaSuccess) {    \
        res.error = rt.describe(what, e); \
        return res;                       \
    }
    DNN(dnn.cudnnCreate(&st.handle), "cudnnCreate")
    DNN(dnn.cudnnCreateTensorDescriptor(&st.xd), "cudnnCreateTensorDescriptor")
    DNN(dnn.cudnnCreateTensorDescriptor(&st.yd), "cudnnCreateTensorDescriptor")
    DNN(dnn.cudnnCreateFilterDescriptor(&st.wd), "cudnnCreateFilterDescriptor")
    DNN(dnn.cudnnCreateConvolutionDescriptor(&st.cd), "cudnnCreateConvolutionDescriptor")
    DNN(dnn.cudnnSetTensor4dDescriptor(st.xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W),
        "cudnnSetTensor4dDescriptor(x)")
    DNN(dnn.cudnnSetFilter4dDescriptor(st.wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S),
        "cudnnSetFilter4dDescriptor")
    DNN(dnn.cudnnSetConvolution2dDescriptor(st.cd, pad, pad, stride, stride, dil, dil,
                                            CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "cudnnSetConvolution2dDescriptor")
    DNN(dnn.cudnnSetConvolutionMathType(st.cd, CUDNN_DEFAULT_MATH), "cudnnSetConvolutionMathType")
    int on = 0, oc = 0, oh = 0, ow = 0;
    DNN(dnn.cudnnGetConvolution2dForwardOutputDim(st.cd, st.xd, st.wd, &on, &oc, &oh, &ow),
        "cudnnGetConvolution2dForwardOutputDim")
    if (on != N || oc != K || oh != H || ow != W) {
        res.error = "cudnnGetConvolution2dForwardOutputDim: " + std::to_string(on) + "x" +
                    std::to_string(oc) + "x" + std::to_string(oh) + "x" + std::to_string(ow) +
                    ", expected 1x4x16x16";
        return res;
    }
    DNN(dnn.cudnnSetTensor4dDescriptor(st.yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, H, W),
        "cudnnSetTensor4dDescriptor(y)")

    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {};
    int returned = 0;
    DNN(dnn.cudnnGetConvolutionForwardAlgorithm_v7(st.handle, st.xd, st.wd, st.cd, st.yd,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned,
                                                   perf),
        "cudnnGetConvolutionForwardAlgorithm_v7")
    const cudnnConvolutionFwdAlgoPerf_t* pick = nullptr;
    for (int i = 0; i < returned && !pick; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS) pick = &perf[i];
    if (!pick) {
        res.error = "cudnnGetConvolutionForwardAlgorithm_v7 offered no usable algorithm";
        return res;
    }
    res.algo = static_cast<int>(pick->algo);
    res.math = static_cast<int>(pick->mathType);
    DNN(dnn.cudnnSetConvolutionMathType(st.cd, pick->mathType), "cudnnSetConvolutionMathType")
    size_t ws_bytes = 0;
    DNN(dnn.cudnnGetConvolutionForwardWorkspaceSize(st.handle, st.xd, st.wd, st.cd, st.yd,
                                                    pick->algo, &ws_bytes),
        "cudnnGetConvolutionForwardWorkspaceSize")

    // Host data: q/8, q in [-4, 4].
    std::vector<float> hx(static_cast<size_t>(N) * C * H * W),
        hw(static_cast<size_t>(K) * C * R * S);
    std::vector<float> hy(static_cast<size_t>(N) * K * H * W, NAN);
    uint64_t seed = 0xC0DEull;
    for (auto& v : hx) v = static_cast<float>(static_cast<int>(splitmix64(seed) % 9) - 4) / 8.0f;
    for (auto& v : hw) v = static_cast<float>(static_cast<int>(splitmix64(seed) % 9) - 4) / 8.0f;

    RT(rt.cudaMalloc(&st.x, hx.size() * sizeof(float)), "cudaMalloc")
    RT(rt.cudaMalloc(&st.w, hw.size() * sizeof(float)), "cudaMalloc")
    RT(rt.cudaMalloc(&st.y, hy.size() * sizeof(float)), "cudaMalloc")
    if (ws_bytes) RT(rt.cudaMalloc(&st.ws, ws_bytes), "cudaMalloc(workspace)")
    RT(rt.cudaMemcpy(st.x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice),
       "cudaMemcpy")
    RT(rt.cudaMemcpy(st.w, hw.data(), hw.size() * sizeof(float), cudaMemcpyHostToDevice),
       "cudaMemcpy")
    RT(rt.cudaMemset(st.y, 0xFF, hy.size() * sizeof(float)),
       "cudaMemset")  // NaN: unwritten output shows
    const float alpha = 1.0f, beta = 0.0f;
    DNN(dnn.cudnnConvolutionForward(st.handle, &alpha, st.xd, st.x, st.wd, st.w, st.cd, pick->algo,
                                    st.ws, ws_bytes, &beta, st.yd, st.y),
        "cudnnConvolutionForward")
    RT(rt.cudaDeviceSynchronize(), "cudnnConvolutionForward")
    RT(rt.cudaMemcpy(hy.data(), st.y, hy.size() * sizeof(float), cudaMemcpyDeviceToHost),
       "cudaMemcpy")
#undef DNN
#undef RT

    // Host reference: y[n,k,h,w] = sum_{c,r,s} x[n,c,h+r-pad,w+s-pad] * w[k,c,r,s] (zero padding).
    double max_ref = 0, max_err = 0;
    for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
            for (int h = 0; h < H; ++h)
                for (int wo = 0; wo < W; ++wo) {
                    double ref = 0;
                    for (int c = 0; c < C; ++c)
                        for (int r = 0; r < R; ++r)
                            for (int sx = 0; sx < S; ++sx) {
                                int ih = h * stride + r * dil - pad,
                                    iw = wo * stride + sx * dil - pad;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                ref +=
                                    static_cast<double>(
                                        hx[((static_cast<size_t>(n) * C + c) * H + ih) * W + iw]) *
                                    hw[((static_cast<size_t>(k) * C + c) * R + r) * S + sx];
                            }
                    double got = hy[((static_cast<size_t>(n) * K + k) * H + h) * W + wo];
                    double err = std::isfinite(got) ? std::fabs(got - ref) : INFINITY;
                    max_err = std::max(max_err, err);
                    max_ref = std::max(max_ref, std::fabs(ref));
                }
    res.max_abs_err = max_err;
    res.tolerance = 1e-3 * std::max(max_ref, 1e-3);
    res.correct = max_err <= res.tolerance;
    return res;
}

}  // namespace

int main(int argc, char** argv) {
    const char* kName = "cudnn";
    auto flags = probe::parse_flags(argc, argv);
    Json data = Json::object();
    if (auto bad = probe::unknown_flag(flags, {"library", "cudart"},
                                       "probe-cudnn takes --library=PATH and --cudart=PATH");
        !bad.empty())
        return probe::finish(kName, probe::kError, bad, data);

    Cudnn dnn;
    dnn.load(flags.count("library") ? flags["library"] : "");
    const bool versions_ok = dnn.lib.ok() && dnn.cudnnGetVersion && dnn.cudnnGetCudartVersion;
    const size_t version = versions_ok ? dnn.cudnnGetVersion() : 0;
    const size_t cudart_version = versions_ok ? dnn.cudnnGetCudartVersion() : 0;
    data.set("library", dnn.lib.ok() ? Json(dnn.path()) : Json());
    data.set("version", versions_ok ? Json(static_cast<unsigned long long>(version)) : Json());
    data.set("version_string", versions_ok ? Json(version_string(version)) : Json());
    data.set("cudart_version",
             versions_ok ? Json(static_cast<unsigned long long>(cudart_version)) : Json());
    data.set("header_version", static_cast<long long>(CUDNN_VERSION));
    if (!versions_ok) {
        data.set("conv", Json());
        std::string why = dnn.lib.ok() ? "libcudnn lacks " + dnn.missing
                                       : "no libcudnn loads: " + dnn.lib.error();
        std::printf("cudnn: %s\n", why.c_str());
        return probe::finish(kName, dnn.lib.absent() ? probe::kWaived : probe::kError, why, data);
    }
    std::printf(
        "cudnn: %s (%zu) from %s, built for CUDA runtime %zu; probe built with cuDNN headers %d\n",
        version_string(version).c_str(), version, dnn.path().c_str(), cudart_version,
        CUDNN_VERSION);

    probe::cuda::Runtime rt;
    if (!rt.load(flags.count("cudart") ? flags["cudart"] : "")) {
        data.set("conv", Json());
        std::string why = rt.lib.ok() ? "libcudart has no " + rt.missing
                                      : "no libcudart loads: " + rt.lib.error();
        std::printf("cudnn: %s\n", why.c_str());
        // The versions are known; without a runtime there is no convolution to run.
        return probe::finish(kName, rt.lib.absent() ? probe::kWaived : probe::kError, why, data);
    }
    probe::cuda::Gpus gpus = probe::cuda::query_gpus(rt);
    if (!gpus.usable()) {
        data.set("conv", Json());
        data.set("error", gpus.error_json());
        std::printf("cudnn: %s\n", gpus.reason().c_str());
        return probe::finish(kName, probe::kWaived, gpus.reason(), data);
    }
    if (!dnn.missing.empty()) {
        data.set("conv", Json());
        return probe::finish(kName, probe::kError, "libcudnn lacks " + dnn.missing, data);
    }
    cudaError_t e = rt.cudaSetDevice(0);
    if (e != cudaSuccess) {
        data.set("conv", Json());
        return probe::finish(kName, probe::kError, rt.describe("cudaSetDevice", e), data);
    }
    ConvResult conv = convolution(dnn, rt);
    if (!conv.error.empty()) {
        data.set("conv", Json());
        std::printf("cudnn: convolution: %s\n", conv.error.c_str());
        return probe::finish(kName, probe::kError, conv.error, data);
    }
    std::printf(
        "cudnn: convolution 1x3x16x16 * 4x3x3x3 (algo %d, math %d): %s, max_abs_err %g (tolerance "
        "%g)\n",
        conv.algo, conv.math, conv.correct ? "correct" : "INCORRECT", conv.max_abs_err,
        conv.tolerance);
    data.set("conv", Json::object({{"correct", conv.correct},
                                   {"max_abs_err", conv.max_abs_err},
                                   {"tolerance", conv.tolerance},
                                   {"algo", conv.algo},
                                   {"math_type", conv.math}}));
    if (!conv.correct)
        return probe::finish(kName, probe::kFail,
                             "convolution incorrect: max_abs_err " + Json(conv.max_abs_err).text() +
                                 " > tolerance " + Json(conv.tolerance).text(),
                             data);
    return probe::finish(kName, probe::kPass, "", data);
}
