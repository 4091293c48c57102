# Sourced by the arm64 suite (tests/e2e/arm64_files_only_e2e_test.sh) and its fetch step
# (tests/e2e/arm64_inputs_fetch.sh, a ctest fixture that runs beside the engine suites).
# arm64_inputs DIR: the inputs of the suite's images in DIR, fetched once (DIR/complete):
#   DIR/tarball     the path of an arm64 Debian bookworm root (services.sh, cached)
#   DIR/healthy     torch 2.11.0's linux/aarch64 set (CUDA 13.0)
#   DIR/cpu         torch 2.10.0's CPU-only linux/aarch64 set
#   DIR/nccl-x86    nvidia-nccl-cu13 2.28.9's x86_64 wheel
#   DIR/bnb         bitsandbytes 0.47.0's aarch64 wheel
# The root (debootstrap, about a minute) and the wheels (about 4 GB, a minute here) are
# fetched at the same time. Status 1, saying which part failed, when one does.
# Needs services.sh sourced (debian_arm64_files_tarball).

# arm64_wheels DIR NAME PLATFORM REQUIREMENT... : what pip would install for Python 3.11 on
# PLATFORM, into DIR/NAME (uv's log in DIR/uv-NAME.log). uv's cache for them is DIR/uv-cache,
# not the user's: the suite removes DIR when it is done, and the 5 GB go with it (a cache
# kept for the next run would hold them through every later suite of this one).
arm64_wheels() {
  local dir=$1 name=$2 platform=$3; shift 3
  UV_CACHE_DIR="$dir/uv-cache" uv pip install --quiet --no-config --target "$dir/$name" --python-version 3.11 \
    --python-platform "$platform" --only-binary :all: "$@" >"$dir/uv-$name.log" 2>&1
}

arm64_inputs() {
  local dir=$1 pids=() pid failed=0
  [ -f "$dir/complete" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  (debian_arm64_files_tarball bookworm python3 >"$dir/tarball") & pids+=($!)
  arm64_wheels "$dir" healthy aarch64-manylinux_2_28 torch==2.11.0 & pids+=($!)
  arm64_wheels "$dir" cpu aarch64-manylinux_2_28 torch==2.10.0 & pids+=($!)
  arm64_wheels "$dir" nccl-x86 x86_64-manylinux_2_28 --no-deps nvidia-nccl-cu13==2.28.9 & pids+=($!)
  arm64_wheels "$dir" bnb aarch64-manylinux_2_28 --no-deps bitsandbytes==0.47.0 & pids+=($!)
  # Only these jobs: a caller's engine and registry are its shell's children too.
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  if [ "$failed" = 1 ]; then
    echo "arm64 inputs: a fetch failed (debootstrap's log in \$TORCHDOCK_CACHE, uv's in $dir):" >&2
    tail -n 3 "$dir"/uv-*.log >&2
    return 1
  fi
  touch "$dir/complete"
}
