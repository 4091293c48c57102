# Toolchain for the probes: `zig c++` (clang with zig's libc++, linked statically) targeting
# <arch>-linux-gnu.<TORCHDOCK_PROBE_GLIBC>, so the probes start in images whose glibc is that
# old (default 2.17: manylinux2014, CentOS 7, Ubuntu 18.04/20.04, Debian 10/11). zig links
# against its own per-version glibc stubs: a function newer than the target is a link error,
# not a versioned import that the image's loader refuses at start.
#   cmake -S probes/standalone -B build/probes -DCMAKE_TOOLCHAIN_FILE=probes/cmake/zig_toolchain.cmake
# Cache variables: TORCHDOCK_ZIG (the zig executable; found by find_zig.cmake when unset),
# TORCHDOCK_PROBE_GLIBC (default 2.17), TORCHDOCK_PROBE_ARCH (x86_64 or aarch64; default the
# build host's). Another machine than the host's is a cross build (CMAKE_SYSTEM_NAME is set, so
# CMake runs nothing it compiled): the main build makes the linux/arm64 probe set on x86_64
# hosts this way (probes/CMakeLists.txt), for images run under qemu-user.
include(${CMAKE_CURRENT_LIST_DIR}/find_zig.cmake)
if(NOT TORCHDOCK_ZIG)
  torchdock_find_zig(TORCHDOCK_ZIG)
endif()
if(NOT TORCHDOCK_ZIG)
  message(FATAL_ERROR "zig_toolchain.cmake: no zig found ($ZIG, zig on PATH, or PyPI's ziglang: "
                      "bash scripts/install-deps.sh installs it)")
endif()
if(NOT TORCHDOCK_PROBE_GLIBC)
  set(TORCHDOCK_PROBE_GLIBC 2.17)
endif()
if(CMAKE_HOST_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(_torchdock_host_arch x86_64)
elseif(CMAKE_HOST_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(_torchdock_host_arch aarch64)
else()
  message(FATAL_ERROR "zig_toolchain.cmake: no zig target for ${CMAKE_HOST_SYSTEM_PROCESSOR}")
endif()
if(NOT TORCHDOCK_PROBE_ARCH)
  set(TORCHDOCK_PROBE_ARCH ${_torchdock_host_arch})
endif()
if(NOT TORCHDOCK_PROBE_ARCH MATCHES "^(x86_64|aarch64)$")
  message(FATAL_ERROR "zig_toolchain.cmake: TORCHDOCK_PROBE_ARCH is '${TORCHDOCK_PROBE_ARCH}': use x86_64 or aarch64")
endif()
set(_torchdock_zig_arch ${TORCHDOCK_PROBE_ARCH})
if(NOT TORCHDOCK_PROBE_ARCH STREQUAL _torchdock_host_arch)
  set(CMAKE_SYSTEM_NAME Linux)
  set(CMAKE_SYSTEM_PROCESSOR ${TORCHDOCK_PROBE_ARCH})
endif()
set(TORCHDOCK_PROBE_ARCH "${TORCHDOCK_PROBE_ARCH}" CACHE STRING "machine the probes are built for")
set(TORCHDOCK_ZIG "${TORCHDOCK_ZIG}" CACHE FILEPATH "zig executable for the probes")
set(TORCHDOCK_PROBE_GLIBC "${TORCHDOCK_PROBE_GLIBC}" CACHE STRING "oldest glibc the probes start on")
# The target is part of the compiler command (compile and link steps alike).
set(CMAKE_CXX_COMPILER "${TORCHDOCK_ZIG}" c++ -target ${_torchdock_zig_arch}-linux-gnu.${TORCHDOCK_PROBE_GLIBC})
set(CMAKE_C_COMPILER "${TORCHDOCK_ZIG}" cc -target ${_torchdock_zig_arch}-linux-gnu.${TORCHDOCK_PROBE_GLIBC})
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TORCHDOCK_ZIG TORCHDOCK_PROBE_GLIBC TORCHDOCK_PROBE_ARCH)
