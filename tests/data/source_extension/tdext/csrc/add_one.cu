// The kernel: x[i] += 1 for a float32 array on the GPU.
#include <cuda_runtime.h>

namespace {
__global__ void add_one_kernel(float* x, long n) {
    long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
}  // namespace

// Launches on the current stream; returns the launch's error code (0: none).
int tdext_add_one(float* x, long n, cudaStream_t stream) {
    if (n <= 0) return 0;
    const int threads = 256;
    const long blocks = (n + threads - 1) / threads;
    add_one_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x, n);
    return static_cast<int>(cudaGetLastError());
}
