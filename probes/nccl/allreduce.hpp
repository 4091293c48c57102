#pragma once
// The GPU side of the nccl probe: all-reduce (sum) correctness and timing, run in child
// processes that report to the supervising parent over a pipe, one text line a message:
//
//   COUNT <n>                          devices the CUDA runtime sees (first child only)
//   CUDAERR <code> <name> <libcuda>    cudaGetDeviceCount failed; libcuda 1 if libcuda.so.1 loads
//   STAGE <what> [<test index>]        about to call something that may hang
//   INIT                               communicator(s) ready
//   RESULT <k> <correct> <mismatches> <time_us> <detail...>
//   ERROR <text>                       a CUDA or NCCL call failed; the child exits
//   DONE                               finished cleanly
//
// The parent never initialises CUDA: children are forked from a CUDA-free process, so
// every one of them can use the GPU.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "api.hpp"

namespace ncclprobe {

struct Dtype {
    const char* name;        // "float32"
    ncclDataType_t nccl;     // ncclFloat32
    size_t size;             // bytes per element
    std::int64_t exact_max;  // largest integer every partial sum may reach and stay exact
};

// float32, int32, bfloat16 (NCCL >= 2.10); nullptr for an unknown name.
const Dtype* find_dtype(const std::string& name);

struct Test {
    const Dtype* dtype;
    size_t bytes;  // per rank, a whole number of elements
    size_t count;  // elements
};

struct Config {
    std::vector<Test> tests;
    int warmup = 5;
    int iters = 20;
    bool single = true;     // ncclCommInitAll in one process
    bool multi = true;      // one process per GPU, ncclCommInitRank
    std::string test_hang;  // self-test hook: "query", "init" or "allreduce" sleeps there
};

// Writes one message line to the parent (a single write(2), so lines never interleave).
void send_line(int fd, const std::string& line);

// Child of the single-process phase: counts devices (COUNT/CUDAERR), then, if
// cfg.single, runs every test over all devices with ncclCommInitAll. Returns the exit code.
int run_single_process(const Api& api, const Config& cfg, int out_fd);

// Child of the multi-process phase: reads the ncclUniqueId (NCCL_UNIQUE_ID_BYTES) from
// id_fd, uses device `rank` and runs every test as rank `rank` of `nranks`.
int run_rank(const Api& api, const Config& cfg, int rank, int nranks, int id_fd, int out_fd);

// Value of element i on rank r (a small integer) and the exact sum over nranks ranks.
std::int64_t element_value(const Dtype& t, int nranks, size_t i, int rank);
std::int64_t expected_sum(const Dtype& t, int nranks, size_t i);

}  // namespace ncclprobe
