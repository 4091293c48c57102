#!/usr/bin/env bash
# The host's device nodes are not the test suite's to change. Round 3 of the adversarial
# report saw /dev/null become a regular file while the full suite ran; a command that renames
# a file over a name (a report writer, `mv`, `install`, a tar or `docker cp` extraction) does
# that to whatever the name is. This guard is a ctest fixture around every test
# (tests/CMakeLists.txt): `record` runs first, `check` last, and fails naming each node whose
# type, device numbers or link target changed, and each that is not what Linux makes it.
# It repairs nothing: the message says how (as root), so a person sees what happened.
#
# Usage: device_nodes_check.sh record FILE   (fails when a node is already wrong)
#        device_nodes_check.sh check FILE    (fails when a node differs from FILE or is wrong)
# Env:   TD_DEV_ROOT  the directory that holds the nodes (default /dev; the guard's own test
#                     points it at a scratch directory of nodes it made)
set -uo pipefail
mode=${1:-}
file=${2:-}
if [ -z "$mode" ] || [ -z "$file" ] || { [ "$mode" != record ] && [ "$mode" != check ]; }; then
  echo "usage: $0 record|check FILE" >&2
  exit 2
fi

# The nodes every Linux system has, with the type and major:minor the kernel gives them
# (Documentation/admin-guide/devices.txt); /dev/tty only where this system has it.
dev=${TD_DEV_ROOT:-/dev}
expected_nodes=("$dev/null c 1:3" "$dev/zero c 1:5" "$dev/full c 1:7" "$dev/random c 1:8"
  "$dev/urandom c 1:9")
[ -e "$dev/tty" ] && expected_nodes+=("$dev/tty c 5:0")
links=("$dev/stdin" "$dev/stdout" "$dev/stderr" "$dev/fd")

# One line per node: "PATH TYPE DETAIL" (type: c, b, p, s, l, f, d or missing).
describe() {
  local path=$1
  if [ -L "$path" ]; then
    echo "$path l $(readlink "$path")"
  elif [ -c "$path" ] || [ -b "$path" ]; then
    local t=c
    [ -b "$path" ] && t=b
    # %t and %T are the major and minor in hex.
    local hex
    hex=$(stat -c '%t %T' "$path")
    echo "$path $t $((16#${hex% *})):$((16#${hex#* }))"
  elif [ -p "$path" ]; then
    echo "$path p -"
  elif [ -S "$path" ]; then
    echo "$path s -"
  elif [ -d "$path" ]; then
    echo "$path d -"
  elif [ -f "$path" ]; then
    echo "$path f $(stat -c 'owner=%u:%g size=%s modified=%y' "$path" | tr ' ' '_')"
  else
    echo "$path missing -"
  fi
}

snapshot() {
  local entry
  for entry in "${expected_nodes[@]}"; do describe "${entry%% *}"; done
  for entry in "${links[@]}"; do
    if [ -e "$entry" ] || [ -L "$entry" ]; then describe "$entry"; fi
  done
}

# Each node that is not what the kernel makes: "PATH is TYPE DETAIL, not a character device
# MAJ:MIN; as root: mknod -m 666 PATH c MAJ MIN".
wrong_nodes() {
  local entry path want now
  for entry in "${expected_nodes[@]}"; do
    path=${entry%% *}
    want=${entry#* }
    now=$(describe "$path")
    now=${now#"$path "}
    if [ "$now" != "$want" ]; then
      local maj=${want#c } min
      min=${maj#*:}
      maj=${maj%:*}
      echo "$path is now '$now', not a character device $maj:$min (as root: rm -f $path && mknod -m 666 $path c $maj $min)"
    fi
  done
}

status=0
if [ "$mode" = record ]; then
  snapshot >"$file.tmp" && mv "$file.tmp" "$file"
  bad=$(wrong_nodes)
  if [ -n "$bad" ]; then
    echo "FAIL - the host's device nodes were already wrong before the tests ran:"
    echo "$bad" | sed 's/^/  /'
    status=1
  else
    echo "ok - recorded $(wc -l <"$file") device nodes and links in $file"
  fi
  exit $status
fi

if [ ! -s "$file" ]; then
  echo "FAIL - no record at $file (the device_nodes_record fixture did not run)"
  exit 1
fi
now=$(snapshot)
changed=$(diff <(cat "$file") <(echo "$now") | sed -n 's/^> //p')
if [ -n "$changed" ]; then
  echo "FAIL - a command or test changed the host's device nodes or links while the tests ran:"
  while read -r line; do
    path=${line%% *}
    before=$(grep -m1 -F "$path " "$file")
    echo "  $path: was '${before#"$path "}', now '${line#"$path "}'"
  done <<<"$changed"
  status=1
fi
bad=$(wrong_nodes)
if [ -n "$bad" ]; then
  echo "FAIL - device nodes not what the kernel makes:"
  echo "$bad" | sed 's/^/  /'
  status=1
fi
[ $status = 0 ] && echo "ok - $(echo "$now" | wc -l) device nodes and links unchanged since the record"
exit $status
