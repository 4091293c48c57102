# Rendered by torchdock from tests/data/golden.json (variant golden-2.4.1-cu124-devel-ubuntu22.04).
# Do not edit: change the manifest and run `torchdock render`.
# Needs BuildKit (RUN --mount cache mounts): DOCKER_BUILDKIT=1 or docker buildx.
# base: nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04 (locked)
FROM nvidia/cuda@sha256:1111111111111111111111111111111111111111111111111111111111111111

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ARG DEBIAN_FRONTEND=noninteractive
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_INPUT=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility

# Keep downloaded packages in the BuildKit cache mount, not in the image.
RUN rm -f /etc/apt/apt.conf.d/docker-clean \
 && echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' > /etc/apt/apt.conf.d/keep-cache

# Python 3.10 from ubuntu22.04, in a virtual environment at /opt/venv.
# The OS Python is not pinned to a Debian version here: ubuntu22.04's updates pocket replaces old
# versions, so a pin would break the build; its minor version is asserted instead.
# hadolint ignore=DL3008
RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \
    --mount=type=cache,target=/var/lib/apt,sharing=locked \
    apt-get update \
 && apt-get install -y --no-install-recommends \
      python3 \
      python3-venv \
 && python3 -c 'import sys; assert sys.version_info[:2] == (3, 10), sys.version' \
 && SOURCE_DATE_EPOCH=0 python3 -m venv /opt/venv

# Extra Debian packages from the manifest.
RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \
    --mount=type=cache,target=/var/lib/apt,sharing=locked \
    apt-get update \
 && apt-get install -y --no-install-recommends \
      git=1:2.34.1-1ubuntu1.11

# OpenMPI 4.1.2-2ubuntu1.
RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \
    --mount=type=cache,target=/var/lib/apt,sharing=locked \
    apt-get update \
 && apt-get install -y --no-install-recommends \
      libopenmpi-dev=4.1.2-2ubuntu1 \
      openmpi-bin=4.1.2-2ubuntu1

# The Python set hash-locked in tests/data/golden.lock.json: 6 packages, PyTorch 2.4.1 (cu124 wheels: CUDA 12.4, cuDNN 9.1.0.70, NCCL 2.20.5).
ARG PIP_INDEX_URL
ARG TORCH_INDEX_URL
RUN --mount=type=cache,target=/root/.cache/pip \
    --mount=type=secret,id=pip-ca,target=/run/secrets/pip-ca \
    --mount=type=secret,id=pip-netrc,target=/run/secrets/pip-netrc \
    --mount=type=bind,source=requirements.lock.txt,target=/tmp/torchdock/requirements.lock.txt \
    if [ -s /run/secrets/pip-ca ]; then export PIP_CERT=/run/secrets/pip-ca; fi \
 && if [ -s /run/secrets/pip-netrc ]; then export NETRC=/run/secrets/pip-netrc; fi \
 && SOURCE_DATE_EPOCH=0 python -m pip install --require-hashes --no-deps \
      --extra-index-url "${TORCH_INDEX_URL:?is not set: pass --build-arg TORCH_INDEX_URL=INDEX/cu124, the PyTorch wheel index (torchdock build sets it from the indexes.pytorch setting)}" \
      -r /tmp/torchdock/requirements.lock.txt

# Non-root user trainer (1234:1235).
RUN if getent passwd 1234 >/dev/null; then userdel "$(getent passwd 1234 | cut -d: -f1)"; fi \
 && if getent group 1235 >/dev/null; then groupdel "$(getent group 1235 | cut -d: -f1)"; fi \
 && groupadd --gid 1235 trainer \
 && useradd --uid 1234 --gid 1235 --create-home --shell /bin/bash trainer
USER 1234:1235
WORKDIR /home/trainer

ENV NCCL_DEBUG="INFO" \
    LITERAL="\$HOME \"x\""

LABEL org.opencontainers.image.title="golden-2.4.1-cu124-devel-ubuntu22.04" \
      org.opencontainers.image.description="Every key: \"quotes\", \$dollars and \\backslashes stay literal" \
      org.opencontainers.image.version="2.4.1-cu124-devel-ubuntu22.04" \
      org.opencontainers.image.base.name="nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04" \
      org.opencontainers.image.base.digest="sha256:1111111111111111111111111111111111111111111111111111111111111111" \
      io.torchdock.schema="1" \
      io.torchdock.manifest="tests/data/golden.json" \
      io.torchdock.manifest-sha256="a3532e84b6cb0368cce32c64b946ac6038dc3838c6829c602425ca9e5cc3098f" \
      io.torchdock.variant="golden-2.4.1-cu124-devel-ubuntu22.04" \
      io.torchdock.base-kind="nvidia-cuda-cudnn" \
      io.torchdock.flavor="devel" \
      io.torchdock.python="3.10" \
      io.torchdock.torch="2.4.1" \
      io.torchdock.torchvision="0.19.1" \
      io.torchdock.cuda="12.4" \
      io.torchdock.cudnn="9.1.0.70" \
      io.torchdock.nccl="2.20.5" \
      io.torchdock.base-cudnn="9.1.0.70" \
      io.torchdock.min-driver="550.54.15" \
      io.torchdock.min-driver-compat="525.60.13" \
      io.torchdock.arch-list="5.0;6.0;7.0;7.5;8.0;8.6;9.0" \
      io.torchdock.target-gpus="A100,H100" \
      io.torchdock.python-set="jax==0.4.30,jupyterlab==4.2.5,numpy==1.26.4,nvidia-cudnn-cu12==9.1.0.70,torch==2.4.1+cu124,torchvision==0.19.1+cu124" \
      io.torchdock.validate.gemm-tflops-min.bf16="300" \
      io.torchdock.validate.allreduce-busbw-min-gbps="100" \
      io.torchdock.validate.shm-min-mb="4096"
