#!/usr/bin/env bash
# Generated documentation is what its source generates: docs/manifest-reference.md from the
# schema, docs/checks.md from the catalogs (`torchdock checks --markdown`), and explain's
# catalog of torchdock's own verdicts (data/catalogs/torchdock.json) from the same catalogs.
# Usage: docs_generated_test.sh TORCHDOCK
set -uo pipefail
TD=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/torchdock-docsgen-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
python3 "$ROOT/scripts/gen_manifest_reference.py" >"$WORK/manifest-reference.md"
check "docs/manifest-reference.md is what the schema generates (run scripts/gen_manifest_reference.py)" \
  diff -u "$ROOT/docs/manifest-reference.md" "$WORK/manifest-reference.md"
"$TD" checks --markdown >"$WORK/checks.md"
check "docs/checks.md is what torchdock checks --markdown prints" diff -u "$ROOT/docs/checks.md" "$WORK/checks.md"
python3 "$ROOT/scripts/catalogs/gen_torchdock.py" --binary "$TD" --out "$WORK" 2>/dev/null
check "data/catalogs/torchdock.json is what scripts/catalogs/gen_torchdock.py makes of this build" \
  diff -u "$ROOT/data/catalogs/torchdock.json" "$WORK/torchdock.json"
# Every top-level key of the schema has its row (the generator cannot silently drop one).
missing=$(python3 -c "
import json, sys
keys = json.load(open('$ROOT/schema/manifest.schema.json'))['properties']
page = open('$ROOT/docs/manifest-reference.md').read()
print(' '.join(k for k in keys if '| \`' + k + '\` |' not in page))")
check "every schema key has a row:${missing:- all}" test -z "$missing"
finish
