# Sourced by the end-to-end suites: purpose-built images with real NVIDIA libraries, made
# from the local Debian base ($TD_REGISTRY/library/debian:bookworm, see services.sh):
#   torchdock-test/cuda13-healthy    the toolkit's CUDA 13 runtime, cuDNN 9 and NCCL, labelled truthfully
#   torchdock-test/cudnn-no-runtime  cuDNN for CUDA 13 beside a CUDA 12 runtime from PyPI's
#                                    nvidia-cuda-runtime-cu12 wheel
#   torchdock-test/cudnn-two-copies  a second, different cuDNN copy on LD_LIBRARY_PATH
#   torchdock-test/cuda13-lying      CUDA 13 libraries labelled CUDA 12.4
# build_test_images WORKDIR: builds all four (cached on later runs); returns non-zero on failure.
: "${CUDA_LIB:=/usr/local/cuda/lib64}"
cudnn_version=$(awk '/#define CUDNN_MAJOR/{a=$3}/#define CUDNN_MINOR/{b=$3}/#define CUDNN_PATCHLEVEL/{c=$3}END{print a"."b"."c}' /usr/local/cuda/include/cudnn_version.h)
nccl_version=$(awk '/#define NCCL_MAJOR/{a=$3}/#define NCCL_MINOR/{b=$3}/#define NCCL_PATCH /{c=$3}END{print a"."b"."c}' /usr/local/cuda/include/nccl.h)

# make_image TAG LABELS... : context $WORK/ctx-TAG holds lib/ (copied to /usr/local/cuda/lib64);
# WORK and base come from build_test_images.
make_image() {
  local tag=$1; shift
  local ctx="$WORK/ctx-$tag"
  {
    echo "FROM $base"
    echo "COPY lib/ /usr/local/cuda/lib64/"
    [ -d "$ctx/other" ] && echo "COPY other/ /opt/other/lib/"
    echo 'RUN echo /usr/local/cuda/lib64 > /etc/ld.so.conf.d/cuda.conf && ldconfig'
    [ -d "$ctx/other" ] && echo 'ENV LD_LIBRARY_PATH=/opt/other/lib'
    for l in "$@"; do echo "LABEL $l"; done
  } >"$ctx/Dockerfile"
  DOCKER_BUILDKIT=1 /usr/bin/docker build -q --network=host -t "torchdock-test/$tag" "$ctx" >"$WORK/build-$tag.log" 2>&1 || { cat "$WORK/build-$tag.log"; return 1; }
}
copy_cuda13() {  # the toolkit's CUDA 13 runtime, cuDNN 9 (core, graph, ops) and NCCL
  mkdir -p "$1/lib"
  cp -L "$CUDA_LIB"/libcudart.so.13 "$CUDA_LIB"/libnccl.so.2 "$1/lib/"
  for l in libcudnn.so.9 libcudnn_graph.so.9 libcudnn_ops.so.9; do cp -L "$CUDA_LIB/$l" "$1/lib/$(basename "$(readlink -f "$CUDA_LIB/$l")")"; done
  (cd "$1/lib" && for f in libcudnn*.so.9.*; do ln -sf "$f" "${f%.so.*}.so.9"; done)
}
build_test_images() {
  local WORK=$1 base="$TD_REGISTRY/library/debian:bookworm"
  mkdir -p "$WORK/ctx-cuda13-healthy" "$WORK/ctx-cudnn-no-runtime" "$WORK/ctx-cudnn-two-copies" "$WORK/ctx-cuda13-lying"
  copy_cuda13 "$WORK/ctx-cuda13-healthy"
  make_image cuda13-healthy 'io.torchdock.cuda="13.0"' "io.torchdock.cudnn=\"$cudnn_version\"" "io.torchdock.nccl=\"$nccl_version\""
  [ $? = 0 ] || { echo "test images: built the healthy CUDA 13 image failed" >&2; return 1; }

  # cuDNN for CUDA 13 next to a CUDA 12 runtime from the nvidia-cuda-runtime-cu12 wheel.
  mkdir -p "$WORK/ctx-cudnn-no-runtime/lib" "$WORK/whl"
  python3 -m pip download --no-deps -q -d "$WORK/whl" nvidia-cuda-runtime-cu12==12.4.127 >/dev/null 2>&1
  python3 -m zipfile -e "$WORK"/whl/nvidia_cuda_runtime_cu12-*.whl "$WORK/whl/x" && cp "$WORK"/whl/x/nvidia/cuda_runtime/lib/libcudart.so.12 "$WORK/ctx-cudnn-no-runtime/lib/"
  [ -s "$WORK/ctx-cudnn-no-runtime/lib/libcudart.so.12" ] || { echo "test images: no libcudart.so.12 from the nvidia-cuda-runtime-cu12 wheel" >&2; return 1; }
  for l in libcudnn.so.9 libcudnn_graph.so.9 libcudnn_ops.so.9; do cp -L "$CUDA_LIB/$l" "$WORK/ctx-cudnn-no-runtime/lib/$l"; done
  make_image cudnn-no-runtime 'io.torchdock.cuda="12.4"' "io.torchdock.cudnn=\"$cudnn_version\""
  [ $? = 0 ] || { echo "test images: built the cuDNN-without-runtime image failed" >&2; return 1; }

  # Two different cuDNN copies: the image's and another on LD_LIBRARY_PATH.
  copy_cuda13 "$WORK/ctx-cudnn-two-copies"
  mkdir -p "$WORK/ctx-cudnn-two-copies/other"
  cp -L "$CUDA_LIB/libcudnn.so.9" "$WORK/ctx-cudnn-two-copies/other/libcudnn.so.9.1.0"
  ln -s libcudnn.so.9.1.0 "$WORK/ctx-cudnn-two-copies/other/libcudnn.so.9"
  make_image cudnn-two-copies 'io.torchdock.cuda="13.0"' "io.torchdock.cudnn=\"$cudnn_version\""
  [ $? = 0 ] || { echo "test images: built the two-cuDNN image failed" >&2; return 1; }

  # Labels that claim a CUDA the image does not contain.
  copy_cuda13 "$WORK/ctx-cuda13-lying"
  make_image cuda13-lying 'io.torchdock.cuda="12.4"' "io.torchdock.cudnn=\"$cudnn_version\""
  [ $? = 0 ] || { echo "test images: built the lying-label image failed" >&2; return 1; }
}
