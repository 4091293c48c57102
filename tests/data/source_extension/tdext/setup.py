from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    packages=["tdext"],
    ext_modules=[CUDAExtension("tdext._C", ["csrc/tdext.cpp", "csrc/add_one.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
