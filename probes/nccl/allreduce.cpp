// The GPU side of the nccl probe (see allreduce.hpp for the message protocol).
#include "allreduce.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

namespace ncclprobe {

namespace {

const Dtype kDtypes[] = {
    {"float32", ncclFloat32, 4, std::int64_t{1} << 24},  // integers up to 2^24 are exact
    {"int32", ncclInt32, 4, INT32_MAX},
    {"bfloat16", ncclBfloat16, 2, 256},  // 8 significant bits: integers up to 256 are exact
};

[[noreturn]] void hang_here() {
    for (;;) ::pause();
}

// Values are ((i % 7) + rank) % cap, with cap chosen so that the sum over all ranks, and
// so every partial sum NCCL forms on the way in any order, is an integer <= exact_max.
std::int64_t value_cap(const Dtype& t, int nranks) {
    return t.exact_max / (nranks > 0 ? nranks : 1) + 1;
}

// The bit pattern of the small integer v in the dtype, in the low bits of a uint32_t.
std::uint32_t encode(const Dtype& t, std::int64_t v) {
    if (t.nccl == ncclInt32) return static_cast<std::uint32_t>(static_cast<std::int32_t>(v));
    float f = static_cast<float>(v);
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    if (t.nccl == ncclBfloat16) return bits >> 16;  // exact: v has at most 8 significant bits
    return bits;
}

std::string decode(const Dtype& t, std::uint32_t bits) {
    char buf[48];
    if (t.nccl == ncclInt32) {
        std::snprintf(buf, sizeof buf, "%d", static_cast<int>(static_cast<std::int32_t>(bits)));
    } else {
        if (t.nccl == ncclBfloat16) bits <<= 16;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
    }
    return buf;
}

template <typename T>
void fill_typed(unsigned char* host, size_t count, const std::uint32_t (&table)[7]) {
    T* p = reinterpret_cast<T*>(host);
    for (size_t i = 0; i < count; ++i) p[i] = static_cast<T>(table[i % 7]);
}

// Counts elements differing from the table; the first one's index and bits in *first.
template <typename T>
size_t compare_typed(const unsigned char* host, size_t count, const std::uint32_t (&table)[7],
                     size_t* first_i, std::uint32_t* first_bits) {
    const T* p = reinterpret_cast<const T*>(host);
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) {
        if (p[i] != static_cast<T>(table[i % 7])) {
            if (bad == 0) {
                *first_i = i;
                *first_bits = p[i];
            }
            ++bad;
        }
    }
    return bad;
}

struct Local {
    int rank = 0;
    int device = 0;
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    void* send = nullptr;
    void* recv = nullptr;
};

// Records the first failing call.
struct Errors {
    const Api& api;
    std::string msg;
    bool cuda(cudaError_t e, const std::string& what) {
        if (e == cudaSuccess) return true;
        if (msg.empty()) {
            const char* s = api.cuda.GetErrorString ? api.cuda.GetErrorString(e) : nullptr;
            msg = what + " failed: " + api.cuda.describe(e) + (s ? std::string(": ") + s : "");
        }
        return false;
    }
    bool nccl(ncclResult_t r, const std::string& what) {
        if (r == ncclSuccess) return true;
        if (msg.empty()) msg = what + " failed: " + api.nccl.describe(r);
        return false;
    }
};

struct Outcome {
    size_t mismatches = 0;
    double time_us = 0;
    std::string detail;
};

bool allreduce_all(Errors& err, std::vector<Local>& locals, const Test& t) {
    const Nccl& n = err.api.nccl;
    if (!err.nccl(n.GroupStart(), "ncclGroupStart")) return false;
    for (auto& l : locals) {
        if (!err.nccl(
                n.AllReduce(l.send, l.recv, t.count, t.dtype->nccl, ncclSum, l.comm, l.stream),
                "ncclAllReduce"))
            return false;
    }
    return err.nccl(n.GroupEnd(), "ncclGroupEnd");
}

// Copies every local rank's result back and compares it exactly with the expected sums.
bool check(Errors& err, std::vector<Local>& locals, int nranks, const Test& t,
           std::vector<unsigned char>& host, Outcome& out) {
    const Cudart& c = err.api.cuda;
    std::uint32_t table[7];
    for (size_t r = 0; r < 7; ++r) table[r] = encode(*t.dtype, expected_sum(*t.dtype, nranks, r));
    for (auto& l : locals) {
        if (!err.cuda(c.SetDevice(l.device), "cudaSetDevice")) return false;
        if (!err.cuda(c.StreamSynchronize(l.stream), "cudaStreamSynchronize")) return false;
        if (!err.cuda(c.Memcpy(host.data(), l.recv, t.bytes, cudaMemcpyDeviceToHost),
                      "cudaMemcpy (device to host)"))
            return false;
        size_t first_i = 0;
        std::uint32_t first_bits = 0;
        size_t bad =
            t.dtype->size == 2
                ? compare_typed<std::uint16_t>(host.data(), t.count, table, &first_i, &first_bits)
                : compare_typed<std::uint32_t>(host.data(), t.count, table, &first_i, &first_bits);
        if (bad && out.detail.empty()) {
            out.detail = "rank " + std::to_string(l.rank) + " element " + std::to_string(first_i) +
                         ": got " + decode(*t.dtype, first_bits) + ", expected " +
                         std::to_string(expected_sum(*t.dtype, nranks, first_i)) + " (" +
                         std::to_string(bad) + " of " + std::to_string(t.count) +
                         " elements wrong)";
        }
        out.mismatches += bad;
    }
    return true;
}

bool run_test(Errors& err, const Config& cfg, std::vector<Local>& locals, int nranks, const Test& t,
              std::vector<unsigned char>& host, Outcome& out) {
    const Cudart& c = err.api.cuda;
    // Inputs: rank r holds ((i % 7) + r) % cap; outputs start as all-ones bytes (NaN, -1).
    for (auto& l : locals) {
        std::uint32_t table[7];
        for (size_t r = 0; r < 7; ++r)
            table[r] = encode(*t.dtype, element_value(*t.dtype, nranks, r, l.rank));
        if (t.dtype->size == 2)
            fill_typed<std::uint16_t>(host.data(), t.count, table);
        else
            fill_typed<std::uint32_t>(host.data(), t.count, table);
        if (!err.cuda(c.SetDevice(l.device), "cudaSetDevice")) return false;
        if (!err.cuda(c.Memcpy(l.send, host.data(), t.bytes, cudaMemcpyHostToDevice),
                      "cudaMemcpy (host to device)"))
            return false;
        if (!err.cuda(c.Memset(l.recv, 0xff, t.bytes), "cudaMemset")) return false;
    }
    // One all-reduce, checked; then warm-up and timed iterations (out of place, so the
    // result stays the same) and a second check of what the last iteration left.
    if (!allreduce_all(err, locals, t)) return false;
    if (!check(err, locals, nranks, t, host, out)) return false;
    for (int i = 0; i < cfg.warmup; ++i)
        if (!allreduce_all(err, locals, t)) return false;
    for (auto& l : locals)
        if (!err.cuda(c.EventRecord(l.start, l.stream), "cudaEventRecord")) return false;
    for (int i = 0; i < cfg.iters; ++i)
        if (!allreduce_all(err, locals, t)) return false;
    for (auto& l : locals)
        if (!err.cuda(c.EventRecord(l.stop, l.stream), "cudaEventRecord")) return false;
    double sum_ms = 0;
    for (auto& l : locals) {
        if (!err.cuda(c.EventSynchronize(l.stop), "cudaEventSynchronize")) return false;
        float ms = 0;
        if (!err.cuda(c.EventElapsedTime(&ms, l.start, l.stop), "cudaEventElapsedTime"))
            return false;
        sum_ms += ms;
    }
    // Average over the local ranks (nccl-tests' default, -a 1); the parent averages over processes.
    out.time_us = sum_ms / static_cast<double>(locals.size()) * 1000.0 / cfg.iters;
    return check(err, locals, nranks, t, host, out);
}

std::string one_line(std::string s) {
    for (char& ch : s)
        if (ch == '\n' || ch == '\r') ch = ' ';
    return s;
}

// Allocates, runs every test, reports, tears down. The communicators exist already.
int run_tests(const Api& api, const Config& cfg, std::vector<Local>& locals, int nranks, int fd) {
    Errors err{api, {}};
    const Cudart& c = api.cuda;
    size_t max_bytes = 4;
    for (const auto& t : cfg.tests) max_bytes = std::max(max_bytes, t.bytes);
    for (auto& l : locals) {
        bool ok = err.cuda(c.SetDevice(l.device), "cudaSetDevice") &&
                  err.cuda(c.StreamCreate(&l.stream), "cudaStreamCreate") &&
                  err.cuda(c.EventCreate(&l.start), "cudaEventCreate") &&
                  err.cuda(c.EventCreate(&l.stop), "cudaEventCreate") &&
                  err.cuda(c.Malloc(&l.send, max_bytes), "cudaMalloc") &&
                  err.cuda(c.Malloc(&l.recv, max_bytes), "cudaMalloc");
        if (!ok) {
            send_line(fd, "ERROR device " + std::to_string(l.device) + ": " + one_line(err.msg));
            return 1;
        }
    }
    std::vector<unsigned char> host(max_bytes);
    for (size_t k = 0; k < cfg.tests.size(); ++k) {
        const Test& t = cfg.tests[k];
        send_line(fd, "STAGE all-reduce " + std::to_string(k));
        if (cfg.test_hang == "allreduce") hang_here();
        Outcome out;
        if (!run_test(err, cfg, locals, nranks, t, host, out)) {
            send_line(fd, "ERROR " + std::string(t.dtype->name) + " " + std::to_string(t.bytes) +
                              " bytes: " + one_line(err.msg));
            return 1;
        }
        char head[96];
        std::snprintf(head, sizeof head, "RESULT %zu %d %zu %.6f ", k, out.mismatches == 0 ? 1 : 0,
                      out.mismatches, out.time_us);
        send_line(fd, head + one_line(out.detail));
    }
    send_line(fd, "STAGE ncclCommDestroy");
    for (auto& l : locals) {
        c.SetDevice(l.device);
        if (!err.nccl(api.nccl.CommDestroy(l.comm), "ncclCommDestroy")) {
            send_line(fd, "ERROR " + one_line(err.msg));
            return 1;
        }
        c.Free(l.send);
        c.Free(l.recv);
        c.EventDestroy(l.start);
        c.EventDestroy(l.stop);
        c.StreamDestroy(l.stream);
    }
    send_line(fd, "DONE");
    return 0;
}

bool read_full(int fd, void* buf, size_t n) {
    auto* p = static_cast<unsigned char*>(buf);
    while (n > 0) {
        ssize_t got = ::read(fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        p += got;
        n -= static_cast<size_t>(got);
    }
    return true;
}

}  // namespace

const Dtype* find_dtype(const std::string& name) {
    for (const auto& t : kDtypes)
        if (name == t.name) return &t;
    return nullptr;
}

std::int64_t element_value(const Dtype& t, int nranks, size_t i, int rank) {
    return (static_cast<std::int64_t>(i % 7) + rank) % value_cap(t, nranks);
}

std::int64_t expected_sum(const Dtype& t, int nranks, size_t i) {
    std::int64_t sum = 0;
    for (int r = 0; r < nranks; ++r) sum += element_value(t, nranks, i, r);
    return sum;
}

void send_line(int fd, const std::string& line) {
    std::string s = line + "\n";
    const char* p = s.data();
    size_t n = s.size();
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;  // the parent is gone
        p += w;
        n -= static_cast<size_t>(w);
    }
}

int run_single_process(const Api& api, const Config& cfg, int fd) {
    send_line(fd, "STAGE cudaGetDeviceCount");
    if (cfg.test_hang == "query") hang_here();
    int n = 0;
    cudaError_t e = api.cuda.GetDeviceCount(&n);
    if (e == cudaSuccess && n <= 0) e = cudaErrorNoDevice;
    if (e != cudaSuccess) {
        // Without libcuda.so.1 the runtime also answers cudaErrorInsufficientDriver.
        bool libcuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr;
        send_line(fd, "CUDAERR " + std::to_string(static_cast<int>(e)) + " " +
                          api.cuda.error_name(e) + " " + (libcuda ? "1" : "0"));
        return 0;
    }
    send_line(fd, "COUNT " + std::to_string(n));
    if (!cfg.single) {
        send_line(fd, "DONE");
        return 0;
    }
    send_line(fd, "STAGE ncclCommInitAll");
    if (cfg.test_hang == "init") hang_here();
    std::vector<ncclComm_t> comms(static_cast<size_t>(n), nullptr);
    Errors err{api, {}};
    if (!err.nccl(api.nccl.CommInitAll(comms.data(), n, nullptr), "ncclCommInitAll")) {
        send_line(fd, "ERROR " + one_line(err.msg));
        return 1;
    }
    send_line(fd, "INIT");
    std::vector<Local> locals(static_cast<size_t>(n));
    for (int d = 0; d < n; ++d) {
        locals[static_cast<size_t>(d)].rank = d;
        locals[static_cast<size_t>(d)].device = d;
        locals[static_cast<size_t>(d)].comm = comms[static_cast<size_t>(d)];
    }
    return run_tests(api, cfg, locals, n, fd);
}

int run_rank(const Api& api, const Config& cfg, int rank, int nranks, int id_fd, int fd) {
    ncclUniqueId id;
    if (!read_full(id_fd, &id, sizeof id)) {
        send_line(fd,
                  "ERROR rank " + std::to_string(rank) + ": no ncclUniqueId came from the parent");
        return 1;
    }
    ::close(id_fd);
    Errors err{api, {}};
    send_line(fd, "STAGE cudaSetDevice");
    if (!err.cuda(api.cuda.SetDevice(rank), "cudaSetDevice(" + std::to_string(rank) + ")")) {
        send_line(fd, "ERROR rank " + std::to_string(rank) + ": " + one_line(err.msg));
        return 1;
    }
    send_line(fd, "STAGE ncclCommInitRank");
    if (cfg.test_hang == "init") hang_here();
    ncclComm_t comm = nullptr;
    if (!err.nccl(api.nccl.CommInitRank(&comm, nranks, id, rank), "ncclCommInitRank")) {
        send_line(fd, "ERROR rank " + std::to_string(rank) + ": " + one_line(err.msg));
        return 1;
    }
    send_line(fd, "INIT");
    std::vector<Local> locals(1);
    locals[0].rank = rank;
    locals[0].device = rank;
    locals[0].comm = comm;
    return run_tests(api, cfg, locals, nranks, fd);
}

}  // namespace ncclprobe
