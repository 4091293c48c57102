#!/usr/bin/env bash
# explain answers every failure torchdock's own build, validate, doctor and node-check printed
# in the image suites (kept by tests/e2e/lib/check.sh in DIR): a root cause, or a meaning that
# is more than the tool's words (a catalog entry ranked 15 or more). The logs are removed when
# every one is answered (kept to be read otherwise). Exit 77 (skipped) when DIR holds none.
# Usage: explain_failures_test.sh TORCHDOCK DIR
set -uo pipefail
TD=$(realpath "$1")
DIR=$2
WORK=$(mktemp -d /tmp/torchdock-explainfail-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib/check.sh"
shopt -s nullglob
logs=("$DIR"/*.log)
if ((${#logs[@]} == 0)); then
  echo "skip - no failure outputs in $DIR: the image suites did not run (or none failed)"
  exit 77
fi
for log in "${logs[@]}"; do
  "$TD" explain --json "$log" >"$WORK/x.json" 2>/dev/null
  # "<grade>: <id>", "generic: <id>" (a catalog entry with the tool's words only), or unknown
  verdict=$(python3 -c '
import json, sys
x = json.load(open(sys.argv[1]))
e = x["explanations"][0] if x["explanations"] else None
print("unknown" if e is None else ("generic" if e["generic"] else e["grade"]) + ": " + e["id"])
' "$WORK/x.json")
  check "$(basename "$log") ($(head -1 "$log" | cut -c3-80)): $verdict" \
    test "$verdict" != unknown -a "${verdict%%:*}" != generic
done
((fail == 0)) && rm -f "${logs[@]}"
finish
