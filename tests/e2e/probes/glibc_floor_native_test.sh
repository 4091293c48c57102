#!/usr/bin/env bash
# Every compiled probe starts on glibc 2.17 (PROBE_GLIBC_FLOOR): it needs no GLIBC version
# newer than that, no libstdc++/libgcc version, and no library beyond libc, libdl, libpthread,
# libm, librt and the loader. The check itself is checked on binaries that need more: one
# built here with the system compiler (a glibc >= 2.34 host stamps GLIBC_2.34 on every
# executable) and one linked against the shared libstdc++.
# Usage: glibc_floor_native_test.sh PROBE_DIR
set -uo pipefail
PROBES=$(realpath "${1:?usage: $0 PROBE_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/torchdock-glibc-floor-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$HERE/../lib/check.sh"
source "$HERE/../lib/glibc_needs.sh"
ALLOWED_NEEDED='^(libc\.so\.6|libdl\.so\.2|libpthread\.so\.0|libm\.so\.6|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'

# only_allowed_libraries BIN: its DT_NEEDED entries are all glibc's own libraries.
only_allowed_libraries() {
  local extra
  extra=$(objdump -p "$1" | awk '$1 == "NEEDED" {print $2}' | grep -vE "$ALLOWED_NEEDED")
  [ -z "$extra" ] && return 0
  echo "    $(basename "$1") also needs: $(tr '\n' ' ' <<<"$extra")"
  return 1
}

# ---- the probes ---------------------------------------------------------------------------
count=0
for bin in "$PROBES"/probe-*; do
  [ -f "$bin" ] || continue
  count=$((count + 1))
  name=$(basename "$bin")
  check "$name starts on glibc $PROBE_GLIBC_FLOOR (newest needed: GLIBC_$(glibc_newest_needed "$bin"))" \
    glibc_starts_on "$bin" "$PROBE_GLIBC_FLOOR"
  check "$name needs only glibc's libraries ($(objdump -p "$bin" | awk '$1 == "NEEDED" {printf "%s ", $2}'))" \
    only_allowed_libraries "$bin"
done
check "all six compiled probes are there ($count found in $PROBES)" test "$count" -ge 6
# The probes that only read files are static: no loader, no libc of the image's takes part.
for name in probe-env probe-record probe-kernels probe-libs; do
  check "$name is static (no PT_INTERP, no DT_NEEDED)" \
    bash -c "[ -f '$PROBES/$name' ] && ! readelf -lW '$PROBES/$name' | grep -q INTERP && ! readelf -dW '$PROBES/$name' | grep -q NEEDED"
done

# ---- the check says no to binaries that need more ------------------------------------------
refused() { ! glibc_starts_on "$@" >/dev/null; }
other_libraries() { ! only_allowed_libraries "$@" >/dev/null; }
printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' >"$WORK/hi.c"
if cc -O1 -o "$WORK/hi" "$WORK/hi.c" 2>"$WORK/cc.err"; then
  newest=$(glibc_newest_needed "$WORK/hi")
  if [ "$(printf '%s\n%s\n' "$newest" "$PROBE_GLIBC_FLOOR" | sort -V | tail -n 1)" != "$PROBE_GLIBC_FLOOR" ]; then
    check "control: a host-built binary needing GLIBC_$newest is refused at floor $PROBE_GLIBC_FLOOR" \
      refused "$WORK/hi" "$PROBE_GLIBC_FLOOR"
  else
    skipped "control: this host's cc stamps only GLIBC_$newest (not newer than $PROBE_GLIBC_FLOOR)"
  fi
  check "control: the same binary passes at its own newest version ($newest)" \
    glibc_starts_on "$WORK/hi" "$newest"
else
  bad "control: cc builds a C program ($(head -c 300 "$WORK/cc.err"))"
fi
printf '#include <string>\n#include <cstdio>\nint main(int c, char**) { std::string s(c, 120); std::puts(s.c_str()); }\n' >"$WORK/hi.cpp"
if c++ -O1 -o "$WORK/hicxx" "$WORK/hi.cpp" 2>"$WORK/cxx.err"; then
  check "control: a binary on the shared libstdc++ ($(glibc_versions_needed "$WORK/hicxx" | grep -E 'GLIBCXX|CXXABI' | tail -n 1)) is refused at any glibc" \
    refused "$WORK/hicxx" 99.0
  check "control: ...and its libstdc++.so.6 is not one of glibc's libraries" \
    other_libraries "$WORK/hicxx"
else
  bad "control: c++ builds a C++ program ($(head -c 300 "$WORK/cxx.err"))"
fi
finish
