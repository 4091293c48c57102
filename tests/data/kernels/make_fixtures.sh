#!/usr/bin/env bash
# Regenerates the kernel-audit fixtures: tiny CUDA objects built with nvcc for several
# architecture sets, each with cuobjdump's listing beside it as the oracle
# (<name>.cuobjdump.txt = `cuobjdump --list-elf --list-ptx <name>`), read by
# tests/unit/kernels/. Needs nvcc (CUDA 13.0 here: sm_75 ... sm_121, a and f targets),
# binutils, and cuobjdump (PyPI nvidia-cuda-cuobjdump; scripts/install-deps.sh installs it).
# Usage: make_fixtures.sh [NVCC]; run from anywhere, writes beside this script.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
NVCC=${1:-${NVCC:-/usr/local/cuda/bin/nvcc}}
source "$HERE/../../e2e/lib/cuobjdump.sh"
CUOBJDUMP=$(find_cuobjdump) || { echo "make_fixtures: cuobjdump not found (pip install nvidia-cuda-cuobjdump)" >&2; exit 3; }
WORK=$(mktemp -d /tmp/td-kernel-fixtures-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# The smallest kernel that still compiles to real SASS and PTX.
echo '__global__ void store_one(int* p) { *p = 1; }' > k.cu
echo '__global__ void store_two(int* p) { *p = 2; }' > k2.cu

# obj NAME NVCC-ARGS...: a relocatable object, stripped of what the audit does not need.
obj() {
  local name=$1; shift
  "$NVCC" -c -o "$name.full.o" k.cu "$@"
  strip --strip-unneeded "$name.full.o" -o "$HERE/$name.o"
}
gen() { echo "-gencode arch=compute_$1,code=$2"; }

obj sass_ptx      $(gen 75 sm_75) $(gen 80 '[sm_80,compute_80]')
obj sass_only     $(gen 86 sm_86) $(gen 90 sm_90)
obj ptx_only      $(gen 75 compute_75) $(gen 90 compute_90)
obj compress_all  $(gen 80 sm_80) $(gen 90 '[sm_90,compute_90]') -Xfatbin -compress-all
obj compress_none $(gen 80 '[sm_80,compute_80]') -Xfatbin -compress-mode=none
# Blackwell cubins are larger: compressed to keep the fixtures small.
obj family        $(gen 90a sm_90a) $(gen 100a sm_100a) $(gen 100f '[sm_100f,compute_100f]') \
                  $(gen 120f sm_120f) $(gen 120a compute_120a) -Xfatbin -compress-all
obj blackwell     $(gen 100 sm_100) $(gen 103 sm_103) $(gen 110 sm_110) $(gen 120 sm_120) \
                  $(gen 121 '[sm_121,compute_121]') -Xfatbin -compress-all
# -rdc: device code kept for device linking, in __nv_relfatbin only.
"$NVCC" -c -rdc=true -o rdc.full.o k.cu $(gen 80 '[sm_80,compute_80]')
strip --strip-unneeded rdc.full.o -o "$HERE/rdc.o"
# Two containers in one .nv_fatbin with different architecture sets (ld -r concatenates).
"$NVCC" -c -o a.o k.cu $(gen 75 sm_75) $(gen 80 sm_80) -Xfatbin -compress-all
"$NVCC" -c -o b.o k2.cu $(gen 80 sm_80) $(gen 90 '[sm_90,compute_90]') -Xfatbin -compress-all
ld -r a.o b.o -o multi.full.o
strip --strip-unneeded multi.full.o -o "$HERE/multi.o"
# A fatbin kept in .rodata, as libraries that load their own modules do (cuBLASLt's
# .cask_resource, cuFFT's .ldata): 24 bytes of other data first, holding a false magic
# (version 2) that the search must skip, then the container, 8-byte aligned.
"$NVCC" -fatbin -o embedded.fatbin k.cu $(gen 75 sm_75) $(gen 86 '[sm_86,compute_86]')
{ printf 'padding!'; printf '\x50\xed\x55\xba\x02\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00'; cat embedded.fatbin; } > embedded.bin
objcopy -I binary -O elf64-x86-64 -B i386:x86-64 \
  --rename-section .data=.rodata,alloc,load,readonly,data,contents \
  --set-section-alignment .rodata=8 embedded.bin "$HERE/embedded.o"
# An ELF object without GPU code.
echo 'int plain(void) { return 1; }' > plain.c
cc -c -O2 -o plain.full.o plain.c
strip --strip-unneeded plain.full.o -o "$HERE/plain.o"

for f in "$HERE"/*.o; do
  name=$(basename "$f" .o)
  src=$f
  # cuobjdump does not search .rodata: its oracle for embedded.o is the fatbin itself.
  [ "$name" = embedded ] && src=embedded.fatbin
  "$CUOBJDUMP" --list-elf --list-ptx "$src" >"$HERE/$name.cuobjdump.txt" 2>&1 || true
  # File names in the listing carry the input's name; keep only "ELF|PTX ... arch".
  sed -E -i -e 's/^(ELF|PTX) file +([0-9]+): .*\.([a-z_0-9]+)\.(cubin|ptx)$/\1 \2 \3/' \
    -e "s|$HERE/||g; s|$WORK/||g" "$HERE/$name.cuobjdump.txt"
done
{ "$NVCC" --version | tail -1; "$CUOBJDUMP" --version | tail -1; } >"$HERE/VERSIONS.txt"
ls -l "$HERE"
