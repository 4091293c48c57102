#!/usr/bin/env bash
# End to end: drives the built torchdock binary the way a user would, against the
# bundled manifests and deliberately broken ones. Usage: render_cli_test.sh TORCHDOCK
set -uo pipefail
TD=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/torchdock-e2e-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"
source "$ROOT/tests/e2e/lib/check.sh"

# 1. Rendering twice gives byte-identical trees, equal to the committed dockerfiles/.
run render --out "$WORK/a"; check "render exits 0" test "$(rc)" = 0
run render --out "$WORK/b"; check "second render exits 0" test "$(rc)" = 0
check "two renders are byte-identical" diff -r "$WORK/a" "$WORK/b"
check "committed dockerfiles/ are up to date" diff -r "$WORK/a" dockerfiles
run render --check; check "render --check passes on the committed tree" test "$(rc)" = 0

# 2. --check names stale, missing and extra files and exits 1.
cp -r "$WORK/a" "$WORK/c"
echo "# local edit" >>"$WORK/c/debian-cpu-debian12/Dockerfile"
rm "$WORK/c/ngc-24.05/Dockerfile"
mkdir -p "$WORK/c/old-variant" && echo x >"$WORK/c/old-variant/Dockerfile"
run render --check --out "$WORK/c"
check "--check on a stale tree exits 1" test "$(rc)" = 1
check "--check names the stale file" has out "stale:   $WORK/c/debian-cpu-debian12/Dockerfile"
check "--check names the missing file" has out "missing: $WORK/c/ngc-24.05/Dockerfile"
check "--check names the extra file" has out "extra:   $WORK/c/old-variant/Dockerfile"

# 3. A full render replaces the tree: the stale variant directory is gone.
run render --out "$WORK/c"; check "render over a stale tree exits 0" test "$(rc)" = 0
check "render removed the variant that no longer exists" test ! -e "$WORK/c/old-variant"
check "render restored the tree" diff -r "$WORK/a" "$WORK/c"

# 4. Broken manifests: every problem reported as file:line:col: path, exit 2, nothing written.
mkdir -p "$WORK/bad"
cp manifests/debian-cpu.json "$WORK/bad/"
cat >"$WORK/bad/broken.json" <<'JSON'
{
  "schema": 1,
  "name": "broken",
  "image": "torchdock/broken",
  "base": "nvidia-cuda",
  "matrix": {"torch": ["2.1.2"], "cuda": ["cu124"], "flavor": ["runtime"], "os": ["ubuntu22.04"]},
  "pip": ["numpy==1.26; curl x|sh"],
  "targt_gpus": ["H100"]
}
JSON
cp -r "$WORK/a" "$WORK/keep"
run render --manifests "$WORK/bad" --out "$WORK/keep" --sarif="$WORK/render.sarif"
check "broken manifest exits 2" test "$(rc)" = 2
SARIF_CHECK="$ROOT/tests/e2e/lib/sarif_schema_check.py"
check "render --sarif: valid SARIF 2.1.0 (the OASIS schema) though the manifests were refused" \
  python3 "$SARIF_CHECK" "$WORK/render.sarif"
check "...one error per problem printed, each at its file, line and column" python3 - "$WORK" <<'PY'
import json, re, sys
work = sys.argv[1]
printed = [l for l in open(work + "/err") if re.match(r".*broken\.json:\d+:\d+: ", l)]
results = json.load(open(work + "/render.sarif"))["runs"][0]["results"]
at = {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
       r["locations"][0]["physicalLocation"]["region"]["startLine"],
       r["locations"][0]["physicalLocation"]["region"]["startColumn"], r["level"]) for r in results}
assert len(results) == len(printed) >= 2, (len(results), printed)
assert (work + "/bad/broken.json", 7, 11, "error") in {(u.replace("file://", ""), l, c, v) for u, l, c, v in at}, at
PY
python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); d['runs'][0]['results'][0]['level'] = 'fatal'
json.dump(d, open(sys.argv[2], 'w'))" "$WORK/render.sarif" "$WORK/tampered.sarif"
check "...and the schema check does fail a SARIF file with a level SARIF does not have" \
  bash -c "! python3 '$SARIF_CHECK' '$WORK/tampered.sarif' 2>'$WORK/tampered.err' && grep -q fatal '$WORK/tampered.err'"
check "injection is refused with its location" has err "$WORK/bad/broken.json:7:11: \$.pip[0]:"
check "unknown key gets did-you-mean" has err "$WORK/bad/broken.json:8:3: \$.targt_gpus: unknown key \"targt_gpus\"; did you mean \"target_gpus\"?"
check "summary says nothing was written" has err "nothing was written"
check "the previous tree is untouched" diff -r "$WORK/a" "$WORK/keep"
mkdir -p "$WORK/stale-lock" && cp manifests/debian-cpu.json "$WORK/stale-lock/"
printf '{"schema": 1, "images": {\n  "debian:bookworm": {"digest": "sha256:%064d"},\n  "debian:bullseye": {"digest": "sha256:%064d"}}}\n' 1 2 \
  >"$WORK/stale-lock/debian-cpu.lock.json"
run render --manifests "$WORK/stale-lock" --out "$WORK/stale-out" --sarif="$WORK/stale.sarif"
check "a lock pinning a base no variant uses: rendered (exit 0) with a warning" \
  bash -c "test $(rc) = 0 && grep -q 'pins debian:bullseye, which no variant uses' '$WORK/err'"
check "...render --sarif: valid SARIF holding that warning at the lock file" python3 - "$WORK" "$SARIF_CHECK" <<'PY'
import json, subprocess, sys
work, checker = sys.argv[1], sys.argv[2]
subprocess.run([sys.executable, checker, work + "/stale.sarif"], check=True)
results = json.load(open(work + "/stale.sarif"))["runs"][0]["results"]
assert [r["level"] for r in results] == ["warning"], results
loc = results[0]["locations"][0]
assert loc["physicalLocation"]["artifactLocation"]["uri"].endswith("/stale-lock/debian-cpu.lock.json"), loc
assert "debian:bullseye" in results[0]["message"]["text"]
PY
sed -i 's/"numpy==1.26; curl x|sh"/"numpy==1.26.4"/; s/targt_gpus/target_gpus/' "$WORK/bad/broken.json"
run render --manifests "$WORK/bad" --out "$WORK/keep"
check "impossible combination exits 2" test "$(rc)" = 2
check "torch 2.1.2 + cu124 names the variants that exist" has err "torch 2.1.2 has no cu124 wheels; published variants: cu118, cu121, cpu"
check "no injected text reached any Dockerfile" bash -c "! grep -r 'curl x' '$WORK/keep'"
printf '{"schema": 1,\n "name": "x",\n' >"$WORK/bad/broken.json"
run render --manifests "$WORK/bad" --out "$WORK/keep"
check "truncated JSON exits 2 with a syntax error" bash -c "test $(rc) = 2 && grep -qF 'broken.json:3:1: syntax error' '$WORK/err'"

# 5. --stdout and --only.
run render --stdout debian-cpu-debian12
check "--stdout prints the Dockerfile" cmp -s "$WORK/out" dockerfiles/debian-cpu-debian12/Dockerfile
run render --stdout debian-cpu-debain12
check "--stdout of an unknown variant exits 2 with did-you-mean" \
  bash -c "test $(rc) = 2 && grep -qF 'did you mean debian-cpu-debian12' '$WORK/err'"
run render --only 'cuda13-*' --out "$WORK/only"
check "--only renders the matching variants" test "$(ls "$WORK/only" | grep -c cuda13)" = 4
check "--only renders nothing else" test "$(ls "$WORK/only" | wc -l)" = 5
run render --only 'nomatch-*' --out "$WORK/only"
check "--only without a match exits 2" test "$(rc)" = 2

# 6. list, as a table and as JSON.
run list; check "list exits 0" test "$(rc)" = 0
check "list shows the variant count" has out "37 variants"
run list --json
check "list --json is valid JSON with every variant" \
  python3 -c "import json,sys; d=json.load(open('$WORK/out')); sys.exit(0 if len(d)==37 else 1)"
check "index.json lists every variant" \
  python3 -c "import json,sys; d=json.load(open('dockerfiles/index.json')); sys.exit(0 if len(d['variants'])==37 else 1)"

# 7. Environment problems get one clear line.
run render --data /nonexistent; check "missing knowledge base exits 2" test "$(rc)" = 2
check "missing knowledge base names the path" has err "/nonexistent/cuda.json"
run render --manifests /nonexistent; check "missing manifest dir exits 2" test "$(rc)" = 2
run bogus; check "unknown subcommand exits 2" test "$(rc)" = 2

# 8. Every rendered Dockerfile passes hadolint at warning level.
if command -v hadolint >/dev/null; then
  check "hadolint: no finding at warning level or above" \
    bash -c "hadolint --failure-threshold warning \"$WORK\"/a/*/Dockerfile >\"$WORK/lint\" || { cat \"$WORK/lint\"; false; }"
else
  bad "hadolint is not installed (scripts/install-deps.sh installs it)"
fi

# 9. Hostile trees and names (adversarial report D1, D5, D11, D16, D12): refused, nothing
# written, nothing waited on.
mkdir -p "$WORK/inj"
python3 - "$WORK/inj" <<'PY'
import shutil, sys
shutil.copy("manifests/debian-cpu.json",
            sys.argv[1] + "/x\nFROM debian:bookworm\nRUN echo INJECTED > pwned.txt; id\nRUN true #.json")
PY
run render --manifests "$WORK/inj" --out "$WORK/inj-out"
check "a manifest named with a newline and a FROM line: exit 2" test "$(rc)" = 2
check "...nothing is rendered" test ! -e "$WORK/inj-out"
check "...the name is shown escaped on one line" has err 'x\nFROM debian:bookworm'
mkdir -p "$WORK/ff" && cp manifests/debian-cpu.json "$WORK/ff/"
cp manifests/debian-cpu.json "$WORK/ff/x"$'\xff'".json"
run render --manifests "$WORK/ff" --out "$WORK/ff-out"
check "a manifest file name that is not UTF-8: exit 2, no internal error" \
  bash -c "[ \"\$(cat '$WORK/rc')\" = 2 ] && ! grep -q 'internal error' '$WORK/err'"
mkdir -p "$WORK/foreign" && echo '{"my": "own"}' >"$WORK/foreign/index.json"
run render --only '*' --out "$WORK/foreign"
check "render --only into a foreign directory: refused (exit 2)" test "$(rc)" = 2
check "...its index.json is untouched" grep -q '"my": "own"' "$WORK/foreign/index.json"
mkdir -p "$WORK/fifo" && cp manifests/debian-cpu.json "$WORK/fifo/" && mkfifo "$WORK/fifo/debian-cpu.lock.json"
timeout 10 "$TD" render --manifests "$WORK/fifo" --out "$WORK/fifo-out" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "a lock file that is a FIFO: refused at once (exit 2, no hang)" test "$(rc)" = 2
check "...naming it a FIFO" has err "FIFO"
ln -sf /dev/zero "$WORK/fifo/debian-cpu.lock.json"
timeout 10 "$TD" render --manifests "$WORK/fifo" --out "$WORK/fifo-out" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "a lock file that is /dev/zero: refused at once" test "$(rc)" = 2
mkdir -p "$WORK/dangling" && cp manifests/debian-cpu.json "$WORK/dangling/" && ln -s nowhere "$WORK/dangling/a.json"
run render --manifests "$WORK/dangling" --out "$WORK/dangling-out"
check "a dangling *.json beside a good manifest: refused, not skipped" test "$(rc)" = 2
check "...naming the entry" has err "a.json"
run render --manifests manifests/debian-cpu.json
check "--manifests naming a file says it is not a directory" has err "is not a directory"
mkdir -p "$WORK/cwd" && echo '{"my": "own"}' >"$WORK/cwd/index.json"
(cd "$WORK/cwd" && "$TD" render --manifests "$ROOT/manifests" --only '*' --out '' >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "render --only '*' --out '': a usage error (exit 2), the current directory untouched" \
  bash -c "[ \"\$(cat '$WORK/rc')\" = 2 ] && grep -q '\"my\": \"own\"' '$WORK/cwd/index.json' && [ ! -e '$WORK/cwd/t-debian12' ]"
run render --out ''
check "render --out '': a usage error naming the flag" has err "--out needs a directory"

# A lock file whose Python entry lacks a required key or holds a wrong type (adversarial-2 N8:
# SIGSEGV in list, render, render --check): named with file, line, JSON path; exit 2.
mkdir -p "$WORK/n8/manifests" && cp manifests/debian-cpu.json "$WORK/n8/manifests/"
H='"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"'
IN='"requirements":["torch==2.9.1"],"python":"3.11","platform":"x86_64-manylinux_2_36"'
n8_case() {  # NAME ENTRY EXPECTED-TEXT
  printf '{"schema": 1, "images": {},\n "python": {"debian-cpu-debian12": %s}}\n' "$2" \
    >"$WORK/n8/manifests/debian-cpu.lock.json"
  for cmd in "list" "render --check --out $WORK/n8/out" "render --stdout debian-cpu-debian12"; do
    (cd "$WORK/n8" && "$TD" $cmd >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
    check "lock $1: $cmd exits 2 naming it, no crash" \
      bash -c "test $(rc) = 2 && grep -qF -- '$3' '$WORK/err' && ! grep -q 'internal error' '$WORK/err'"
  done
}
n8_case "entry with empty inputs and packages" '{"inputs": {}, "packages": {}}' \
  'manifests/debian-cpu.lock.json:2:47: $.python["debian-cpu-debian12"].inputs: missing required key "torch_index"'
n8_case "entry without packages" "{\"inputs\": {$IN, \"torch_index\": \"\"}}" \
  '$.python["debian-cpu-debian12"]: missing required key "packages"'
n8_case "package without hashes" "{\"inputs\": {$IN, \"torch_index\": \"\"}, \"packages\": {\"torch\": {\"version\": \"2.9.1\"}}}" \
  '$.python["debian-cpu-debian12"].packages.torch: missing required key "hashes"'
n8_case "inputs a string" '{"inputs": "x", "packages": {"torch": {"version": "2.9.1"}}}' \
  '$.python["debian-cpu-debian12"].inputs: expected an object, found a string'
# Item 9: a package outside the closure of the inputs (nothing required it) is refused, named.
n8_case "package outside the resolved closure" "{\"inputs\": {$IN, \"torch_index\": \"\"}, \"packages\": {
  \"torch\": {\"version\": \"2.9.1\", \"hashes\": [$H], \"required_by\": []},
  \"evil\": {\"version\": \"6.6.6\", \"hashes\": [$H], \"required_by\": []}}}" \
  '$.python["debian-cpu-debian12"].packages.evil: package "evil" 6.6.6 is outside the resolved closure'

finish
