# Sourced by the real-image suites: genuine PyTorch CUDA installations that nobody shaped
# to fit torchdock, built from PyPI's wheels on the debootstrapped Debian base
# ($TD_REGISTRY/library/debian:bookworm, see services.sh). One real install of
# `pip install torch==2.9.1` (the PyPI default build: CUDA 12.8 with its nvidia-* wheels, about
# 2.5 GB of downloads, kept in a BuildKit cache mount of the engine across runs), and
# variants made from it the ways users break such images:
#
#   tdreal/torch:uv          torch in a venv at /app/.venv (uv's layout), on PATH, VIRTUAL_ENV unset
#   tdreal/torch:pythonpath  the same files, found through PYTHONPATH by /usr/bin/python3 (no venv)
#   tdreal/torch:virtualenv  the venv only through VIRTUAL_ENV (not on PATH, whose python3 has no torch)
#   tdreal/torch:nonccl      nvidia-nccl-cu12 removed: `import torch` fails on libnccl.so.2
#   tdreal/torch:cudnn-ldlp  cuDNN 9.1.0 (PyPI nvidia-cudnn-cu12 9.1.0.70) on LD_LIBRARY_PATH:
#                            torch raises "cuDNN version incompatibility" (broken for torch)
#   tdreal/torch:cudnn-ldconf the same cuDNN in /etc/ld.so.conf.d: torch keeps its own 9.10.2
#                            (not broken for torch)
#   tdreal/torch:cudart129   PyPI nvidia-cuda-runtime-cu12 12.9.79 over the 12.8 one torch was built with
#
# Every image records its ground truth in /opt/pip-freeze.txt.
# build_real_images WORKDIR: builds them all (cached by BuildKit on later runs).
REAL_TORCH=2.9.1
REAL_CUDNN_OLD=9.1.0.70
REAL_CUDART_NEW=12.9.79

real_build() {  # real_build TAG DOCKERFILE_DIR
  local tag=$1 dir=$2
  DOCKER_BUILDKIT=1 /usr/bin/docker build --network=host \
    --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt \
    -t "tdreal/torch:$tag" "$dir" >"$dir/build.log" 2>&1 || { tail -30 "$dir/build.log"; return 1; }
}

build_real_images() {
  local work=$1 base="$TD_REGISTRY/library/debian:bookworm"
  local pip='pip install --disable-pip-version-check --cert /run/secrets/ca --default-timeout=180'
  mkdir -p "$work"/real-{uv,pythonpath,virtualenv,nonccl,cudnn91,ldlp,ldconf,cudart}
  cat >"$work/real-uv/Dockerfile" <<DF
FROM $base
RUN apt-get update \\
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \\
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /app/.venv
ENV PATH=/app/.venv/bin:\$PATH
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip torch==$REAL_TORCH \\
 && pip freeze > /opt/pip-freeze.txt
DF
  real_build uv "$work/real-uv" || return 1
  cat >"$work/real-pythonpath/Dockerfile" <<DF
FROM tdreal/torch:uv
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENV PYTHONPATH=/app/.venv/lib/python3.11/site-packages
DF
  real_build pythonpath "$work/real-pythonpath" || return 1
  cat >"$work/real-virtualenv/Dockerfile" <<DF
FROM tdreal/torch:uv
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENV VIRTUAL_ENV=/app/.venv
DF
  real_build virtualenv "$work/real-virtualenv" || return 1
  cat >"$work/real-nonccl/Dockerfile" <<DF
FROM tdreal/torch:uv
RUN pip uninstall -y nvidia-nccl-cu12 && pip freeze > /opt/pip-freeze.txt
DF
  real_build nonccl "$work/real-nonccl" || return 1
  # The older cuDNN, unpacked once; both cuDNN variants copy it.
  cat >"$work/real-cudnn91/Dockerfile" <<DF
FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip --no-deps --target /opt/cudnn-9.1 nvidia-cudnn-cu12==$REAL_CUDNN_OLD
DF
  real_build cudnn91 "$work/real-cudnn91" || return 1
  cat >"$work/real-ldlp/Dockerfile" <<DF
FROM tdreal/torch:uv
COPY --from=tdreal/torch:cudnn91 /opt/cudnn-9.1 /opt/cudnn-9.1
ENV LD_LIBRARY_PATH=/opt/cudnn-9.1/nvidia/cudnn/lib
DF
  real_build cudnn-ldlp "$work/real-ldlp" || return 1
  cat >"$work/real-ldconf/Dockerfile" <<DF
FROM tdreal/torch:uv
COPY --from=tdreal/torch:cudnn91 /opt/cudnn-9.1 /opt/cudnn-9.1
RUN echo /opt/cudnn-9.1/nvidia/cudnn/lib > /etc/ld.so.conf.d/cudnn-9.1.conf && ldconfig
DF
  real_build cudnn-ldconf "$work/real-ldconf" || return 1
  cat >"$work/real-cudart/Dockerfile" <<DF
FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip --no-deps nvidia-cuda-runtime-cu12==$REAL_CUDART_NEW && pip freeze > /opt/pip-freeze.txt
DF
  real_build cudart129 "$work/real-cudart" || return 1
}

# real_freeze TAG PACKAGE: the version pip freeze recorded in the image (ground truth).
real_freeze() {
  /usr/bin/docker run --rm --network=none "tdreal/torch:$1" sh -c "grep -i '^$2==' /opt/pip-freeze.txt" \
    | cut -d= -f3
}
