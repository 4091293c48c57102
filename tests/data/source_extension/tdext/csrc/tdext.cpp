// The binding: tdext.add_one(tensor) for a contiguous CUDA float32 tensor.
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

int tdext_add_one(float* x, long n, cudaStream_t stream);

namespace {
torch::Tensor add_one(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "tdext.add_one: expected a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "tdext.add_one: expected float32");
    TORCH_CHECK(x.is_contiguous(), "tdext.add_one: expected a contiguous tensor");
    int err = tdext_add_one(x.data_ptr<float>(), static_cast<long>(x.numel()),
                            at::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == 0, "tdext.add_one: kernel launch failed: ",
                cudaGetErrorString(static_cast<cudaError_t>(err)));
    return x;
}
}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add_one", &add_one, "x += 1, in place"); }
