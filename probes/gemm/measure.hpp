#pragma once
// The GPU work of one probe-gemm run (a dtype at a shape), in two separate parts:
//
// 1. check_exact: one GEMM on exact small-integer operands at a smaller shape (M and N at most
//    `check_max`, K as asked), sampled entries compared with an exact FP64 reference under the
//    tolerance derived in README.md;
// 2. time_uniform: full-entropy uniform(-1,1) operands at the requested shape, a warm-up and
//    a timed phase (timing.hpp) with NVML clock samples, then sampled entries of the output
//    checked against FP64 (the torch probe's rule). With a dump directory the operand bytes
//    are also written there, so that torch.matmul can be timed on identical bytes.
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "blas.hpp"
#include "clocks_nvml.hpp"
#include "run_json.hpp"

namespace gemm {

using probe::cuda::Runtime;

// The sampled output entries: the four corners and pseudo-random others.
inline std::vector<std::pair<long, long>> sample_entries(const Shape& s, size_t count) {
    std::vector<std::pair<long, long>> out = {
        {0, 0}, {s.m - 1, s.n - 1}, {0, s.n - 1}, {s.m - 1, 0}};
    uint64_t seed = 0xC0FFEEull;
    while (out.size() < count)
        out.emplace_back(static_cast<long>(splitmix64(seed) % static_cast<uint64_t>(s.m)),
                         static_cast<long>(splitmix64(seed) % static_cast<uint64_t>(s.n)));
    return out;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A, B and C on the device, A and B copied from the host, C filled with NaN-like bytes so an
// unwritten entry shows. "" or the error.
struct DeviceOperands {
    DeviceBuffer a, b, c;
    explicit DeviceOperands(const Runtime& rt) : a(rt), b(rt), c(rt) {}
    std::string upload(const Runtime& rt, const std::vector<unsigned char>& ha,
                       const std::vector<unsigned char>& hb, size_t c_bytes) {
        cudaError_t e;
        if ((e = a.alloc(ha.size())) != cudaSuccess || (e = b.alloc(hb.size())) != cudaSuccess ||
            (e = c.alloc(c_bytes)) != cudaSuccess) {
            rt.cudaGetLastError();
            return rt.describe("cudaMalloc", e);
        }
        if ((e = rt.cudaMemcpy(a.get(), ha.data(), ha.size(), cudaMemcpyHostToDevice)) !=
                cudaSuccess ||
            (e = rt.cudaMemcpy(b.get(), hb.data(), hb.size(), cudaMemcpyHostToDevice)) !=
                cudaSuccess ||
            (e = rt.cudaMemset(c.get(), 0xFF, c_bytes)) != cudaSuccess)
            return rt.describe("cudaMemcpy", e);
        return {};
    }
};

// Entry (i, j) of the column-major M x N output C in `f`, read back from the device.
inline std::string read_entry(const Runtime& rt, const DeviceBuffer& c, const Shape& s,
                              const Format& f, long i, long j, double& value) {
    uint32_t bits = 0;
    const size_t offset = (static_cast<size_t>(j) * s.m + i) * f.bytes;
    cudaError_t e = rt.cudaMemcpy(&bits, static_cast<const unsigned char*>(c.get()) + offset,
                                  f.bytes, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return rt.describe("cudaMemcpy", e);
    value = decode(bits, f.ebits, f.mbits);
    return {};
}

// ---- 1. Correctness on exact operands -----------------------------------------------------------

// The integer operands, kept while the shape and range stay the same.
struct ExactOperands {
    Shape shape{0, 0, 0};
    int range = -1;
    std::vector<int16_t> qa, qb;  // A(i,k) = qa[i*K + k], B(k,j) = qb[j*K + k]
    void make(const Shape& s, int r) {
        if (s.m == shape.m && s.n == shape.n && s.k == shape.k && r == range) return;
        shape = s, range = r;
        qa = random_ints(static_cast<size_t>(s.m) * s.k, r,
                         0x5EED0001ull + static_cast<uint64_t>(r));
        qb = random_ints(static_cast<size_t>(s.k) * s.n, r,
                         0x5EED0002ull + static_cast<uint64_t>(r));
    }
};

// Tolerance (also in README.md).
// Inputs are q * s with integer q drawn uniformly from [-R, R]:
//   fp16, bf16, fp8:  R = 2,    s = 1/4     values {0, +-1/4, +-1/2}, exact in every input type
//   fp32, tf32:       R = 2048, s = 2^-11   12 significant bits: exact in fp32, NOT in tf32
// The reference c_ij = sum_k a_ik b_kj is computed exactly (integer products summed in int64,
// then scaled: an FP64 value with no rounding at all).
// Error of the GPU result (standard floating-point analysis, u = unit roundoff):
//   * input rounding: a~ = a(1+d), |d| <= u_in, so |a~b~ - ab| <= (2 u_in + u_in^2) |a||b|.
//     u_in = 0 where inputs are exact (fp32, fp16, bf16, fp8); tf32 keeps 10 explicit mantissa
//     bits and the hardware may truncate instead of round, so u_in = 2^-10 (2^-11 if rounded).
//   * accumulation in fp32 of K products (any summation order, split-K included as long as
//     partial sums stay in fp32): |error| <= gamma_K * sum_k |a_ik||b_kj|,
//     gamma_K = K u_acc / (1 - K u_acc), u_acc = 2^-24.
//   * rounding of the result to the output type: <= u_out |c_ij|, u_out = 2^-24 (fp32/tf32
//     output), 2^-11 (fp16), 2^-8 (bf16; also fp8, whose output is bf16; an e4m3 output would
//     be 2^-4).
//   tol_ij = (2 u_in + u_in^2 + gamma_K) * S_ij + u_out * (|c_ij| + gamma_K * S_ij),
//   S_ij = sum_k |a_ik||b_kj|.
// The probe reports one tolerance per run, the bound taken at the largest S_ij and |c_ij| of
// the sampled entries, and calls the run correct when the largest sampled |error| is within it.
// The bound is loose (worst case), but errors it misses are far below what a wrong layout,
// a wrong type or corrupted memory cause (those are of the size of |c| itself, ~sqrt(K)*|a||b|).
// To keep it valid the probe forbids reductions in the output type: cuBLAS with
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, cuBLASLt with a reduction-scheme mask that
// admits only none or compute-type (fp32) split-K; fp8 keeps fast accumulation off (the
// default), so cuBLASLt promotes the tensor cores' partial sums to fp32.
#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>
// "" when checked (run.check filled), else the error (or why it is skipped, `unsupported`).
inline std::string check_exact(Run& run, const DType& d, const Shape& s, Gemm& gemm,
                               ExactOperands& host, bool& unsupported) {
    const Runtime& rt = gemm.rt;
    host.make(s, d.range);
    std::vector<unsigned char> ha, hb;
    if (!encode_all(host.qa, d.range, d.scale_log2, d.in, ha) ||
        !encode_all(host.qb, d.range, d.scale_log2, d.in, hb))
        return "internal: input values are not exact in the input type";
    if (d.lt) {
        std::string why = gemm.prepare_lt(d, s, unsupported);
        if (!why.empty()) return why;
    }
    DeviceOperands dev(rt);
    std::string err = dev.upload(rt, ha, hb, static_cast<size_t>(s.m) * s.n * d.out.bytes);
    if (!err.empty()) return err;
    cublasStatus_t st = gemm.run(d, s, dev.a.get(), dev.b.get(), dev.c.get());
    if (st != CUBLAS_STATUS_SUCCESS)
        return std::string(d.lt ? "cublasLtMatmul" : "cublasGemmEx") + ": " + gemm.blas.status(st);
    cudaError_t e = rt.cudaDeviceSynchronize();
    if (e != cudaSuccess) return rt.describe("GEMM", e);
    const double scale2 = std::ldexp(1.0, 2 * d.scale_log2);
    const double kd = static_cast<double>(s.k), gamma = kd * d.u_acc / (1 - kd * d.u_acc);
    double max_sum_abs = 0, max_abs_c = 0, max_err = 0;
    const auto entries = sample_entries(s, 256);
    for (const auto& ij : entries) {
        const int16_t* a = &host.qa[static_cast<size_t>(ij.first) * s.k];
        const int16_t* b = &host.qb[static_cast<size_t>(ij.second) * s.k];
        int64_t dot = 0, dot_abs = 0;  // exact: |q| <= 2048, K < 2^31
        for (long k = 0; k < s.k; ++k) {
            int64_t p = static_cast<int64_t>(a[k]) * b[k];
            dot += p;
            dot_abs += p < 0 ? -p : p;
        }
        const double ref = static_cast<double>(dot) * scale2;
        double got = 0;
        if (!(err = read_entry(rt, dev.c, s, d.out, ij.first, ij.second, got)).empty()) return err;
        max_err = std::max(max_err, std::isfinite(got) ? std::fabs(got - ref) : INFINITY);
        max_sum_abs = std::max(max_sum_abs, static_cast<double>(dot_abs) * scale2);
        max_abs_c = std::max(max_abs_c, std::fabs(ref));
    }
    Check& c = run.check;
    c.m = s.m, c.n = s.n, c.k = s.k;
    c.samples = static_cast<int>(entries.size());
    c.tolerance = (2 * d.u_in + d.u_in * d.u_in + gamma) * max_sum_abs +
                  d.u_out * (max_abs_c + gamma * max_sum_abs);
    c.max_abs_err = max_err;
    c.correct = max_err <= c.tolerance;  // false for NaN/inf too
    c.done = true;
    return {};
}

// ---- 2. Throughput on full-entropy operands -----------------------------------------------------

// Uniform operands of one format and shape (fp32 and tf32 share them), kept for the next
// dtype; the seeds depend on the format only, so the bytes are a function of (format, shape).
struct UniformOperands {
    std::string format;
    Shape shape{0, 0, 0};
    std::vector<unsigned char> a, b;
    TimedOperands info;
    void make(const Format& f, const Shape& s) {
        if (format == f.name && s.m == shape.m && s.n == shape.n && s.k == shape.k) return;
        a.clear(), a.shrink_to_fit(), b.clear(), b.shrink_to_fit();
        format = f.name, shape = s;
        info = TimedOperands();
        info.distribution = kUniformDistribution;
        info.format = f.name;
        info.seed_a = 0xA11CE000ull + static_cast<uint64_t>(f.mbits);
        info.seed_b = 0xB0B00000ull + static_cast<uint64_t>(f.mbits);
        const auto t0 = std::chrono::steady_clock::now();
        a = uniform_operand(f, static_cast<size_t>(s.m) * s.k, info.seed_a);
        b = uniform_operand(f, static_cast<size_t>(s.k) * s.n, info.seed_b);
        info.generate_s = seconds_since(t0);
        info.a.stats = operand_stats(a.data(), a.size() / f.bytes, f.bytes);
        info.b.stats = operand_stats(b.data(), b.size() / f.bytes, f.bytes);
    }
    // Writes a and b under `dir` once (with their CRC-32); "" or the error.
    std::string dump(const std::string& dir) {
        const std::string stem = dir + "/" + format + "-" + std::to_string(shape.m) + "x" +
                                 std::to_string(shape.n) + "x" + std::to_string(shape.k);
        for (auto side : {std::make_pair(&a, &info.a), std::make_pair(&b, &info.b)}) {
            if (!side.second->file.empty()) continue;
            const std::string path = stem + (side.second == &info.a ? "-a.bin" : "-b.bin");
            std::FILE* f = std::fopen(path.c_str(), "wb");
            const std::vector<unsigned char>& bytes = *side.first;
            const bool ok = f && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
            if ((f && std::fclose(f) != 0) || !ok) return "--dump-operands: cannot write " + path;
            side.second->file = path;
            side.second->crc = crc32(bytes.data(), bytes.size());
            side.second->has_crc = true;
        }
        return {};
    }
};

// Runs GEMMs back to back until `stop` says enough (timing.hpp); the per-GEMM times go to `ms`
// and clock samples to `clocks` when they are given. "" or the error.
class Phase {
  public:
    Phase(Gemm& g, const DType& d, const Shape& s, DeviceOperands& dev, long batch)
        : m_gemm(g), m_d(d), m_s(s), m_dev(dev), m_batch(batch) {
        for (auto& slot : m_events) {
            slot.assign(static_cast<size_t>(batch) + 1, nullptr);
            for (auto& e : slot)
                if (m_gemm.rt.cudaEventCreate(&e) != cudaSuccess) m_ok = false;
        }
    }
    ~Phase() {
        for (auto& slot : m_events)
            for (auto e : slot)
                if (e) m_gemm.rt.cudaEventDestroy(e);
    }
    Phase(const Phase&) = delete;
    Phase& operator=(const Phase&) = delete;

    std::string run(const StopRule& stop, std::vector<double>* ms, ClockSummary* clocks,
                    const Nvml* nvml, long& runs, double& seconds) {
        const Runtime& rt = m_gemm.rt;
        if (!m_ok) return "cudaEventCreate failed";
        const auto t0 = std::chrono::steady_clock::now();
        long enqueued = 0, count[2] = {0, 0};
        int pending = 0;
        double last_sample = -1;
        auto sample = [&] {
            if (clocks && nvml) clocks->add(nvml->sample()), last_sample = seconds_since(t0);
        };
        auto enqueue = [&](int slot) -> std::string {
            const long n = stop.next_batch(enqueued, m_batch);
            std::vector<cudaEvent_t>& ev = m_events[slot];
            rt.cudaEventRecord(ev[0], nullptr);
            for (long i = 0; i < n; ++i) {
                cublasStatus_t st =
                    m_gemm.run(m_d, m_s, m_dev.a.get(), m_dev.b.get(), m_dev.c.get());
                if (st != CUBLAS_STATUS_SUCCESS) return m_gemm.blas.status(st);
                rt.cudaEventRecord(ev[static_cast<size_t>(i) + 1], nullptr);
            }
            count[slot] = n, enqueued += n, ++pending;
            return {};
        };
        std::string err;
        for (int slot = 0; slot < 2 && err.empty() && stop.more(enqueued, seconds_since(t0));
             ++slot)
            err = enqueue(slot);
        if (err.empty()) sample();  // start: the GPU is busy with the first batches
        for (int slot = 0; err.empty() && pending > 0; slot ^= 1) {
            std::vector<cudaEvent_t>& ev = m_events[slot];
            cudaError_t e = rt.cudaEventSynchronize(ev[static_cast<size_t>(count[slot])]);
            if (e != cudaSuccess) return rt.describe("cudaEventSynchronize", e);
            for (long i = 0; ms && i < count[slot]; ++i) {
                float t = 0;
                const size_t u = static_cast<size_t>(i);
                if ((e = rt.cudaEventElapsedTime(&t, ev[u], ev[u + 1])) != cudaSuccess)
                    return rt.describe("cudaEventElapsedTime", e);
                ms->push_back(t);
            }
            runs += count[slot];
            --pending;
            const bool more = stop.more(enqueued, seconds_since(t0));
            // Sample while the other batch still runs: every 0.25 s, and last before the end.
            if (pending > 0 && (!more || seconds_since(t0) - last_sample >= 0.25)) sample();
            if (more) err = enqueue(slot);
        }
        rt.cudaDeviceSynchronize();  // a failed enqueue may leave GEMMs running
        seconds = seconds_since(t0);
        return err;
    }

  private:
    Gemm& m_gemm;
    const DType& m_d;
    const Shape& m_s;
    DeviceOperands& m_dev;
    long m_batch;
    std::vector<cudaEvent_t> m_events[2];
    bool m_ok = true;
};

// "" when timed (run.timing, clocks, operands, timed_check filled), else the error (or why it
// is skipped, `unsupported`). `nvml` null: clocks unavailable for run.clocks.unavailable's reason.
inline std::string time_uniform(Run& run, const DType& d, const Shape& s, Gemm& gemm,
                                UniformOperands& host, const TimingPlan& plan, const Nvml* nvml,
                                const std::string& dump_dir, bool& unsupported) {
    const Runtime& rt = gemm.rt;
    host.make(d.in, s);
    std::string err;
    if (!dump_dir.empty() && !(err = host.dump(dump_dir)).empty()) return err;
    run.operands = host.info;
    if (d.lt && !(err = gemm.prepare_lt(d, s, unsupported)).empty()) return err;
    DeviceOperands dev(rt);
    if (!(err = dev.upload(rt, host.a, host.b, static_cast<size_t>(s.m) * s.n * d.out.bytes))
             .empty())
        return err;

    // One GEMM to start (cuBLAS picks and loads its kernel), one timed alone to size batches.
    long warm = 0;
    double est_ms = 0, warm_s = 0;
    {
        Phase first(gemm, d, s, dev, 1);
        std::vector<double> ms;
        if (!(err = first.run(StopRule{2, 2, 0}, &ms, nullptr, nullptr, warm, warm_s)).empty())
            return "warm-up: " + err;
        est_ms = ms.back();
    }
    Phase phase(gemm, d, s, dev, batch_size(est_ms));
    long warm_rest = 0;
    double warm_rest_s = 0;
    if (!(err = phase.run(StopRule::warmup(plan, warm), nullptr, nullptr, nullptr, warm_rest,
                          warm_rest_s))
             .empty())
        return "warm-up: " + err;
    std::vector<double> ms;
    long timed = 0;
    double timed_s = 0;
    if (nvml) nvml->limits(run.clocks);
    run.clocks.available = nvml != nullptr;
    if (!(err = phase.run(StopRule::timed(plan), &ms, &run.clocks, nvml, timed, timed_s)).empty())
        return "timed run: " + err;
    const double flops =
        2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    run.timing = summarize(ms, flops);
    run.timing.mode = plan.mode();
    run.timing.warmup_runs = warm + warm_rest;
    run.timing.warmup_s = warm_s + warm_rest_s;
    run.timing.timed_s = timed_s;

    // The timed output against FP64 on sampled entries (the operands are exact in FP64; the
    // reference's own rounding, K * 2^-53 relative, is far below the rule's tolerance).
    const auto entries = sample_entries(s, 256);
    const Format& f = d.in;
    auto value = [&](const std::vector<unsigned char>& bytes, size_t index) {
        uint32_t code = 0;
        std::memcpy(&code, bytes.data() + index * f.bytes, f.bytes);
        return decode(code, f.ebits, f.mbits);
    };
    double max_err = 0;
    for (const auto& ij : entries) {
        double ref = 0, got = 0;
        const size_t ai = static_cast<size_t>(ij.first) * s.k,
                     bj = static_cast<size_t>(ij.second) * s.k;
        for (long k = 0; k < s.k; ++k)
            ref += value(host.a, ai + static_cast<size_t>(k)) *
                   value(host.b, bj + static_cast<size_t>(k));
        if (!(err = read_entry(rt, dev.c, s, d.out, ij.first, ij.second, got)).empty()) return err;
        max_err = std::max(max_err, std::isfinite(got) ? std::fabs(got - ref) : INFINITY);
    }
    Check& c = run.timed_check;
    c.m = s.m, c.n = s.n, c.k = s.k;
    c.samples = static_cast<int>(entries.size());
    c.tolerance = d.timed_rel * std::sqrt(static_cast<double>(s.k));
    c.max_abs_err = max_err;
    c.correct = max_err <= c.tolerance;
    c.done = true;
    return {};
}

}  // namespace gemm
