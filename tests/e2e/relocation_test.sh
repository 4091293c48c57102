#!/usr/bin/env bash
# The binary finds its knowledge base and probes relative to itself, never through a path of
# the tree it was built in. Usage: relocation_test.sh TORCHDOCK
#  - no source or build directory in the binary's loaded bytes (debug info aside: it names
#    the sources on purpose, and the package strips it);
#  - the build tree's layout copied to another prefix works there as it is;
#  - a binary copied alone fails with an error naming where it looked and the variable/flag,
#    and works again with $TORCHDOCK_DATA / $TORCHDOCK_PROBES;
#  - a symlink to the binary finds the binary's own layout.
set -uo pipefail
BUILT=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$(dirname "$BUILT")/.." && pwd)
WORK=$(mktemp -d /tmp/torchdock-reloc-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"

strip --strip-debug -o "$WORK/stripped" "$BUILT"
strings -n 6 "$WORK/stripped" >"$WORK/strings"
check "the binary names no source directory ($ROOT)" bash -c "! grep -qF -- '$ROOT' '$WORK/strings'"
check "the binary names no build directory ($BUILD)" bash -c "! grep -qF -- '$BUILD' '$WORK/strings'"

# The build tree's layout, moved: bin/, share/torchdock/data (a copy, not the link),
# libexec/torchdock/probes.
P=$WORK/prefix
mkdir -p "$P/bin" "$P/share/torchdock" "$P/libexec/torchdock"
cp "$BUILT" "$P/bin/torchdock"
cp -rL "$BUILD/share/torchdock/data" "$P/share/torchdock/data"
cp -r "$BUILD/libexec/torchdock/probes" "$P/libexec/torchdock/probes"
unset TORCHDOCK_DATA TORCHDOCK_PROBES
cd "$WORK"
TD=$P/bin/torchdock
run --version
check "--version: version, commit, knowledge base date" \
  grep -qE '^torchdock [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{7,}(-dirty)?, knowledge base [0-9]{4}-[0-9]{2}-[0-9]{2}\)$' "$WORK/out"
run list --manifests "$ROOT/manifests"
check "a moved prefix lists the matrix with its own data (exit $(rc))" test "$(rc)" = 0
run doctor --host --json="$WORK/fp.json"
check "a moved prefix runs its own probes (doctor --host exit $(rc): $(head -c 300 "$WORK/err"))" \
  test -s "$WORK/fp.json"

# The binary alone: what is missing is named, with where it looked and how to say where.
mkdir -p "$WORK/alone"
cp "$BUILT" "$WORK/alone/torchdock"
TD=$WORK/alone/torchdock
TORCHDOCK_DATA=$P/share/torchdock/data run doctor --host
check "alone: doctor --host without probes is an error (exit 2, got $(rc))" test "$(rc)" = 2
check "alone: the error names where it looked" has err "no probes in $WORK/libexec/torchdock/probes (relative to the binary $WORK/alone/torchdock)"
check "alone: the error names the flag and the variable" has err 'set --probes DIR or $TORCHDOCK_PROBES'
run list --manifests "$ROOT/manifests"
check "alone: list without data is an error (exit 2, got $(rc))" test "$(rc)" = 2
check "alone: the error names the data path and \$TORCHDOCK_DATA" \
  bash -c "grep -qF '$WORK/share/torchdock/data' '$WORK/err' && grep -qF 'TORCHDOCK_DATA' '$WORK/err'"
run --version
check "alone: --version says the knowledge base is not found" has out "knowledge base not found"
TORCHDOCK_DATA=$P/share/torchdock/data run list --manifests "$ROOT/manifests"
check "alone: \$TORCHDOCK_DATA overrides (exit $(rc))" test "$(rc)" = 0
TORCHDOCK_DATA=$P/share/torchdock/data TORCHDOCK_PROBES=$P/libexec/torchdock/probes run doctor --host --json="$WORK/fp2.json"
check "alone: \$TORCHDOCK_PROBES overrides" test -s "$WORK/fp2.json"
TORCHDOCK_DATA=$P/share/torchdock/data run doctor --host --probes "$WORK/nowhere"
check "a --probes directory that does not exist says so and how it was chosen" has err "no probes in $WORK/nowhere (--probes): it does not exist"

# A symlink elsewhere (as in /usr/local/bin) finds the layout of the binary it points to.
ln -s "$P/bin/torchdock" "$WORK/alone/td-link"
TD=$WORK/alone/td-link
run list --manifests "$ROOT/manifests"
check "a symlink to the binary finds its data (exit $(rc))" test "$(rc)" = 0
finish
