#!/usr/bin/env bash
# End to end: `torchdock validate` against a real engine. The Debian CPU image from the
# build suite (real two-process gloo all-reduce in the torch probe), and purpose-built
# images with real NVIDIA libraries: the toolkit's CUDA 13 libraries copied in, and a CUDA
# 12 runtime from PyPI's nvidia-cuda-runtime-cu12 wheel.
# Usage: validate_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
WORK=$(mktemp -d /tmp/torchdock-validate-e2e-XXXXXX)
trap 'services_stop; rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
# result IMAGE CHECK_ID -> status of that check in $WORK/v.json
result() { python3 - "$WORK/v.json" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for img in d["images"]:
    if img["image"] == sys.argv[2]:
        for c in img["checks"]:
            if c["id"] == sys.argv[3]:
                print(c["status"] + "|" + c["message"]); sys.exit(0)
print("missing|")
PY
}
status_of() { result "$1" "$2" | cut -d'|' -f1; }
message_of() { result "$1" "$2" | cut -d'|' -f2-; }
validate() { "$TD" validate --probes "$PROBES" --json="$WORK/v.json" --junit="$WORK/v.xml" --markdown="$WORK/v.md" --sarif="$WORK/v.sarif" "$@" \
  >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"; }

for p in probe-cuda probe-libs probe-cudnn probe-nccl torch_probe.py; do
  [ -e "$PROBES/$p" ] || { echo "FAIL - probe $p is not built in $PROBES"; echo "0 passed, 1 failed"; exit 1; }
done
services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }

# --- purpose-built images with real NVIDIA libraries (tests/e2e/lib/test_images.sh) ---------
source "$ROOT/tests/e2e/lib/test_images.sh"
build_test_images "$WORK"
check "built the purpose-built images" test $? = 0

# --- validate them all in one run -------------------------------------------------------
H=torchdock-test/cuda13-healthy N=torchdock-test/cudnn-no-runtime T=torchdock-test/cudnn-two-copies L=torchdock-test/cuda13-lying
start=$(date +%s.%N)
validate -j 2 "$H" "$N" "$T" "$L"
echo "# figure: validate of 4 test images (static tier, -j 2): $(echo "$(date +%s.%N) - $start" | bc) s"
check "a failing image makes the exit code 1" test "$(cat "$WORK/rc")" = 1
for id in TD101 TD102 TD103 TD104 TD110 TD111; do
  check "healthy image: $id passes ($(message_of "$H" $id))" test "$(status_of "$H" $id)" = pass
done
check "no GPU here: the GPU tier is skipped, not passed" test "$(status_of "$H" TD140)" = skip
check "no GPU here: the skip says why" bash -c "grep -q 'NVIDIA runtime' <<<'$(message_of "$H" TD140)'"
check "cuDNN without its CUDA runtime fails TD103" test "$(status_of "$N" TD103)" = fail
check "...naming the missing soname" bash -c "grep -q 'libcudart.so.13' <<<'$(message_of "$N" TD103)'"
# The second copy is the same cuDNN under a file name that says 9.1.0: versions come from
# the files themselves, so it is one version twice (a warning), not a conflict.
check "a copy named libcudnn.so.9.1.0 that is really $cudnn_version: TD111 warns (same version twice)" \
  test "$(status_of "$T" TD111)" = warn
check "...naming both copies with the version they report" \
  bash -c "m='$(message_of "$T" TD111)'; grep -q '/opt/other/lib/libcudnn.so.9.1.0 ($cudnn_version)' <<<\"\$m\""
check "lying CUDA label fails TD101" test "$(status_of "$L" TD101)" = fail
check "...saying what it found" bash -c "grep -q 'runs CUDA 13.0 but is labelled 12.4' <<<'$(message_of "$L" TD101)'"
check "the summary table lists every image" test "$(grep -cE '^torchdock-test/' "$WORK/out")" -ge 4
check "JUnit XML is well-formed with a failure per failed check" python3 - "$WORK/v.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites" and len(root) == 4
assert int(root.get("failures")) >= 2 and len(root.findall(".//failure")) == int(root.get("failures"))
assert int(root.get("skipped")) > 0
PY
check "Markdown summary names the failing check" grep -q 'TD103 cudnn.cuda_major | \*\*FAIL\*\*' "$WORK/v.md"
check "SARIF is valid SARIF 2.1.0 (the OASIS schema, tests/e2e/lib/sarif_schema_check.py)" \
  python3 "$ROOT/tests/e2e/lib/sarif_schema_check.py" "$WORK/v.sarif"
check "...one result per failed, warning or unjudged check, ruled by its check ID at its image" python3 - "$WORK" "$N" <<'PY'
import json, sys
work, broken = sys.argv[1], sys.argv[2]
report = json.load(open(work + "/v.json"))
expected = sorted((i["image"], c["id"]) for i in report["images"] for c in i["checks"]
                  if c["status"] in ("fail", "warn", "error"))
run = json.load(open(work + "/v.sarif"))["runs"][0]
got = sorted((r["locations"][0]["logicalLocations"][0]["name"], r["ruleId"]) for r in run["results"])
assert got == expected and (broken, "TD103") in got, (got, expected)
rules = run["tool"]["driver"]["rules"]
assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in run["results"])
td103 = [r for r in run["results"] if r["ruleId"] == "TD103"][0]
assert td103["level"] == "error" and "libcudart.so.13" in td103["message"]["text"], td103
PY
check "JSON results link their reference page" python3 -c "
import json, sys; c = json.load(open('$WORK/v.json'))['images'][0]['checks'][0]
assert c['reference'] == 'torchdock checks ' + c['id'] and c['docs'] == 'docs/checks.md#' + c['id'].lower()"

# --- waivers: the lying image's failures waived by flag and by settings file --------------
# Its failing checks from the run above: the first by --waive, the rest by a settings file.
# Checks whose page says they are not waivable (TD119: torch does not import) stay failures.
"$TD" checks --json="$WORK/ref.json"
failing=$(python3 -c "
import json; d = json.load(open('$WORK/v.json')); ref = json.load(open('$WORK/ref.json'))['entries']
fixed = {e['id'] for e in ref if e['waive'].startswith('not waivable')}
print(' '.join(c['id'] for i in d['images'] if i['image'] == '$L' for c in i['checks'] if c['status'] == 'fail' and c['id'] not in fixed))")
errors=$(python3 -c "
import json; d = json.load(open('$WORK/v.json')); ref = json.load(open('$WORK/ref.json'))['entries']
fixed = {e['id'] for e in ref if e['waive'].startswith('not waivable')}
print(sum(c['status'] == 'error' or (c['status'] == 'fail' and c['id'] in fixed) for i in d['images'] if i['image'] == '$L' for c in i['checks']))")
first=${failing%% *} rest=${failing#"$first"}
python3 -c "import json, sys; print(json.dumps({'schema': 1, 'waivers': {i: 'accepted in CI: ' + i for i in sys.argv[1:]}}))" \
  $rest >"$WORK/settings.json"
validate --waive "$first=the label is fixed in the next release" --waive TD110=passes-anyway --config "$WORK/settings.json" "$L"
check "waived run of $L ($failing): exit 0 when only waived checks failed" \
  test "$(cat "$WORK/rc")" = "$([ "$errors" = 0 ] && echo 0 || echo 1)"
check "waived checks are 'waived' with outcome, reason and source in JSON, never passed" python3 - "$WORK/v.json" "$first" $rest <<'PY'
import json, sys
img = json.load(open(sys.argv[1]))["images"][0]
by = {c["id"]: c for c in img["checks"]}
ids = sys.argv[2:]
for i in ids:
    c = by[i]
    assert c["status"] == "waived" and c["outcome"] == "fail", c
    assert c["waiver"]["source"] == "--waive" if i == ids[0] else c["waiver"]["source"].startswith("your settings "), c
    assert c["waiver"]["reason"], c
assert img["waived"] == len(ids), img
assert img["failed"] == sum(c["status"] in ("error", "fail") for c in img["checks"]), img
assert any("TD110 (--waive) not used: the check passed" in n for n in img["waiver_notes"]), img["waiver_notes"]
PY
check "JUnit: waived checks are skipped with the waiver, not failures" python3 - "$WORK/v.xml" "$first" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
case = [c for c in root.iter("testcase") if c.get("name").startswith(sys.argv[2] + " ")][0]
sk = case.find("skipped")
assert sk is not None and case.find("failure") is None
assert sk.get("message").startswith("waived (--waive): the label is fixed in the next release; outcome fail")
PY
check "Markdown: WAIVED with the outcome and reason" grep -q "\*\*WAIVED\*\* (fail)" "$WORK/v.md"
check "the table's count line counts waived apart" grep -qE "$errors failed, .* $(wc -w <<<"$failing") waived" "$WORK/out"
check "a waiver of a passing check is a warning naming it" grep -q 'TD110 (--waive) not used: the check passed' "$WORK/out"
validate --waive TD1300=x "$L"
check "--waive of an unknown ID: exit 2 with did-you-mean" bash -c "test $(cat "$WORK/rc") = 2 && grep -q 'did you mean TD130' '$WORK/err'"
validate --waive TD112=x "$L"
check "--waive of a non-waivable check: exit 2 naming it" bash -c "test $(cat "$WORK/rc") = 2 && grep -q 'TD112 (files.intact) is not waivable' '$WORK/err'"
validate --waive TD130= "$L"
check "--waive without a reason: exit 2" bash -c "test $(cat "$WORK/rc") = 2 && grep -q 'has no reason' '$WORK/err'"

# --- the Debian CPU image: real gloo all-reduce in the torch probe ------------------------
# Built (or found in the build cache) from the bundled manifest, as the main job does.
mkdir -p "$WORK/cpu/manifests" && cp "$ROOT/manifests/debian-cpu.json" "$WORK/cpu/manifests/"
(cd "$WORK/cpu" && "$TD" lock --mirror "docker.io=$TD_REGISTRY" >/dev/null && "$TD" render --out dockerfiles >/dev/null &&
 "$TD" build --mirror "docker.io=$TD_REGISTRY" >"$WORK/cpu/build.out" 2>&1)
check "built the Debian CPU image" test $? = 0
start=$(date +%s.%N)
validate torchdock/debian-cpu:debian12
echo "# figure: validate torchdock/debian-cpu:debian12 as a whole process: $(echo "$(date +%s.%N) - $start" | bc) s"
C=torchdock/debian-cpu:debian12
check "Debian CPU image: torch distributed all-reduce is exact" test "$(status_of $C TD123)" = pass
check "...over gloo" bash -c "grep -q 'gloo all-reduce over 2 processes' <<<'$(message_of $C TD123)'"
check "Debian CPU image: torch reports the version its labels promise" test "$(status_of $C TD120)" = pass
check "Debian CPU image: CPU torch in a CPU image" test "$(status_of $C TD121)" = pass
check "Debian CPU image: /dev/shm is reported with advice" bash -c "grep -q 'shm-size' '$WORK/out'"
check "Debian CPU image passes (exit 0)" test "$(cat "$WORK/rc")" = 0

# --- bad input ---------------------------------------------------------------------------
validate no-such/image:1
check "a missing image exits 2 with one clear line" bash -c "test $(cat "$WORK/rc") = 2 && grep -q 'no such image: no-such/image:1' '$WORK/out'"
validate --require-gpu "$H"
check "--require-gpu without a GPU exits 3" test "$(cat "$WORK/rc")" = 3
validate --expect cuda=12.4 "$H"
check "--expect overrides the labels" test "$(status_of "$H" TD101)" = fail
check "no probe container is left behind" test "$(/usr/bin/docker ps -aq --filter label=io.torchdock.run | wc -l)" = 0

# Colour: verdicts coloured with --color always, headers and piped output plain.
"$TD" --color always validate --probes "$PROBES" "$L" >"$WORK/colour" 2>/dev/null
check "--color always: the FAIL verdict is red, the header plain" \
  bash -c "grep -q \$'\x1b\\[1;31mFAIL' '$WORK/colour' && grep -q '^IMAGE .* RESULT\$' '$WORK/colour'"
"$TD" validate --probes "$PROBES" "$L" >"$WORK/plain" 2>&1
check "piped without --color: no escape sequence" bash -c "! grep -q \$'\x1b' '$WORK/plain'"
progress_lines=$(grep -cE '^\[[0-9]{2}:[0-9]{2}:[0-9]{2}\] validate ' "$WORK/plain")
check "progress: timestamped lines name the image ($progress_lines)" test "$progress_lines" -ge 2
"$TD" -q validate --probes "$PROBES" "$L" >/dev/null 2>"$WORK/quiet"
check "-q: no progress line" bash -c "! grep -qE '^\[[0-9:]{8}\] ' '$WORK/quiet'"
finish
