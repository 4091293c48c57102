# Sourced by the probe tests: what a binary asks of the C library at start, read from its
# version-needs section (objdump -p "Version References"), which is exactly what the dynamic
# loader checks before main: a needed version the image's glibc lacks stops the binary with
# "version `GLIBC_2.NN' not found". The probes promise to start on PROBE_GLIBC_FLOOR and newer.
PROBE_GLIBC_FLOOR=2.17

# glibc_versions_needed BIN: every version name BIN needs (GLIBC_2.14, GLIBCXX_3.4.29, ...),
# one a line, sorted; nothing when it needs none; status 1 when BIN is not a readable ELF.
glibc_versions_needed() {
  local refs
  refs=$(objdump -p "$1" 2>/dev/null) || return 1
  awk '/^Version References:/{f=1; next} f && /^$/{exit} f && $1 ~ /^0x/ {print $NF}' <<<"$refs" | sort -Vu
}

# glibc_newest_needed BIN: the newest GLIBC_x.y BIN needs, as "x.y" ("" when none).
glibc_newest_needed() {
  glibc_versions_needed "$1" | sed -n 's/^GLIBC_\([0-9][0-9.]*\)$/\1/p' | sort -V | tail -n 1
}

# glibc_starts_on BIN FLOOR: true when BIN needs no GLIBC version newer than FLOOR, no
# unnumbered one (GLIBC_PRIVATE), and no libstdc++/libgcc version (GLIBCXX_, CXXABI_, GCC_):
# the probes carry their C++ runtime inside. Prints what is in the way when false.
glibc_starts_on() {
  local bin=$1 floor=$2 v bad=""
  local needs
  needs=$(glibc_versions_needed "$bin") || { echo "    $bin: not a readable ELF file"; return 1; }
  while read -r v; do
    [ -n "$v" ] || continue
    case $v in
      GLIBC_[0-9]*)
        [ "$(printf '%s\n%s\n' "${v#GLIBC_}" "$floor" | sort -V | tail -n 1)" = "$floor" ] || bad="$bad $v" ;;
      GLIBC_*|GLIBCXX_*|CXXABI_*|GCC_*) bad="$bad $v" ;;
    esac
  done <<<"$needs"
  [ -z "$bad" ] && return 0
  echo "    $(basename "$bin") needs$bad (allowed: GLIBC_$floor and older)"
  return 1
}
