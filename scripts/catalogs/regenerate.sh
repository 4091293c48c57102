#!/usr/bin/env bash
# Regenerates every catalog in data/catalogs/ from the pinned sources of its tool (see
# README.md for how to get each tree). SRC holds them:
#   $SRC/apt-2.6.1 $SRC/dpkg-1.21.22 $SRC/glibc-2.36          (git archive of the tags)
#   $SRC/go/docker+cli $SRC/go/moby+moby $SRC/go/moby+buildkit $SRC/go/containerd+containerd
#   $SRC/go/opencontainers+runc $SRC/go/distribution+distribution
#   $SRC/go/NVIDIA+nvidia-container-toolkit                   (exported at the commits below)
#   $SRC/pip-25.1.1 $SRC/pip-24.0 $SRC/uv-0.12.5 $SRC/Python-3.11.2 (PyPI sdists, Debian source)
#   $SRC/nccl $SRC/slurm $SRC/triton-3.9.0                    (commits below; triton's wheel)
#   $SRC/qemu $SRC/numpy-2.5.2                                 (qemu's 10.0.2 release tarball; PyPI sdist)
# Usage: SRC=/path/to/sources scripts/catalogs/regenerate.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SRC=${SRC:?set SRC to the directory holding the pinned sources}
OUT=${1:-$here/../../data/catalogs}
G=$SRC/go
py() { python3 "$here/$1" "${@:2}" --out "$OUT"; }

py gen_c_messages.py --tool apt --src "$SRC/apt-2.6.1" --version 2.6.1 \
  --commit a626a66fece0a7d680e40b9e35b66e29fe9ae12c
py gen_c_messages.py --tool dpkg --src "$SRC/dpkg-1.21.22" --version 1.21.22 \
  --commit 48482e4f16467e05a08aa3b3b8048e08f0024609
py gen_c_messages.py --tool glibc --src "$SRC/glibc-2.36" --version 2.36 \
  --commit c804cd1c00adde061ca51711f63068c103e94eef
py gen_go.py --tool docker --src "$G/docker+cli" --src "$G/moby+moby" \
  --version v29.7.2-16-g28f756087e --version docker-v29.7.2-150-gb985e2313a \
  --commit 28f756087eea5fa301f3fbf12b01ae62f91521c2 --commit b985e2313a8676e18072b442911fc8f64f17d440
py gen_go.py --tool buildkit --src "$G/moby+buildkit" --version v0.32.0-57-g73ed6825c \
  --commit 73ed6825c4b7569379ef89df0aedcdbe64473d31
py gen_go.py --tool containerd --src "$G/containerd+containerd" --version v2.4.0-beta.0-70-g301026e58 \
  --commit 301026e58c619e63d09c0ec411012e54c0124b03
py gen_go.py --tool runc --src "$G/opencontainers+runc" --version v1.5.0-rc.1-213-g76d9cf5da \
  --commit 76d9cf5da5683ff449ae967db58fa8c5927ca54b
py gen_go.py --tool registry --src "$G/distribution+distribution" --version v3.1.1-53-g0d6b721dc \
  --commit 0d6b721dc3ceacb5d678c25b718b2f40a507c2d8
py gen_go.py --tool nvidia-container-toolkit --src "$G/NVIDIA+nvidia-container-toolkit" \
  --version v1.20.0-27-gd34b3046 --commit d34b3046758cb1a5db606b2a39519c731bbf9f56
py gen_pip.py --src "$SRC/pip-25.1.1" --src "$SRC/pip-24.0"
py gen_uv.py --src "$SRC/uv-0.12.5" --version 0.12.5 --commit 210d1f6785e95a8c8c0d53e284408c9be1134700
py gen_python.py --src "$SRC/Python-3.11.2"
py gen_nccl.py --src "$SRC/nccl" --commit 5067397c2676d5aed50042fc39e5c8ee96eb0027
py gen_slurm.py --src "$SRC/slurm" --commit 284c3b95f08a2dc2478499837b03355e1b9c5c75
py gen_triton.py --src "$SRC/triton-3.9.0" --commit "PyPI triton 3.9.0 cp311 manylinux_2_28_x86_64 wheel"
py gen_qemu.py --src "$SRC/qemu" --version 10.0.2 --commit "tag v10.0.2"
py gen_numpy.py --src "$SRC/numpy-2.5.2" --version 2.5.2 \
  --commit 48fecee5453aa1d31e6b79dcb3969dc1a6d1a891
# torchdock's own verdicts, from the built binary's `checks --json` (TORCHDOCK: the binary)
py gen_torchdock.py --binary "${TORCHDOCK:-$here/../../build/dev/bin/torchdock}"
py gen_torch.py --src "$SRC/torch-2.9.1" --version 2.9.1
