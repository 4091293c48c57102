#!/usr/bin/env bash
# What an image says of itself is a claim, never an authority (issue 33; variants of
# ../shared/reports/adversarial-3.md R3-1, R3-2, R3-3, not their repros):
#  * a #!/bin/dash script at the python PATH runs, answering for a torch whose file exists but
#    no installer recorded, fails TD119, and so does an answer naming an interpreter that is
#    not in the image;
#  * an image whose config claims linux/s390x or linux/arm64 over amd64 files is read in the
#    full tier and fails TD132 naming both; --files-only on an image with torch labels and no
#    torch fails TD119;
#  * the image's io.torchdock.waive.* labels are shown as claims and never applied; the user's
#    own --expect cannot be waived, even by --waive; a manifest's waivers apply only with
#    validate --manifests, and SARIF accepts only the user's own waivers.
# Usage: claims_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
WORK=$(mktemp -d /tmp/torchdock-claims-e2e-XXXXXX)
export TORCHDOCK_CACHE_DIR=$WORK/cache
IMAGES="tdclaims/script-python:1 tdclaims/absent-python:1 tdclaims/plain:1 tdclaims/s390x:1
        tdclaims/arm64:1 tdclaims/debian-cpu:debian12"
trap 'services_stop; [ -n "${KEEP:-}" ] || { /usr/bin/docker rmi -f $IMAGES >/dev/null 2>&1; rm -rf "$WORK"; }' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
BASE=$TD_REGISTRY/library/debian:bookworm
D=/usr/bin/docker

# field IMAGE ID KEY: a check's field in $WORK/v.json ("missing" when there is no such check)
field() { python3 - "$WORK/v.json" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for img in d["images"]:
    if img["image"] == sys.argv[2]:
        if sys.argv[3] == "-":
            print(json.dumps(img[sys.argv[4]])); sys.exit(0)
        for c in img["checks"]:
            if c["id"] == sys.argv[3]:
                v = c.get(sys.argv[4], "")
                print(v if isinstance(v, str) else json.dumps(v)); sys.exit(0)
print("missing")
PY
}
# field_has IMAGE ID KEY TEXT: the check's field holds TEXT (read from the file, never through a
# shell string: messages hold quotes)
field_has() { field "$1" "$2" "$3" | grep -qF -- "$4"; }
export -f field field_has
export WORK
validate() { "$TD" validate --probes "$PROBES" --json="$WORK/v.json" --sarif="$WORK/v.sarif" "$@" \
  >"$WORK/out" 2>&1; echo $? >"$WORK/rc"; }
rc() { cat "$WORK/rc"; }

# --- R3-3 variants: a python that is not one ------------------------------------------------
answer() {  # answer FILE PYTHON_EXECUTABLE TORCH_FILE
  python3 - "$@" <<'PY'
import json, sys
data = {"torch": "2.9.1+cu128", "cuda": "12.8", "cudnn": 91002, "nccl": "2.27.5",
        "arch_list": ["sm_90"], "python": "3.11.2", "python_executable": sys.argv[2],
        "torch_file": sys.argv[3], "site_dirs": ["/opt/lib"], "distributions": {},
        "loaded_libraries": [], "cuda_available": False,
        "distributed": {"backend": "gloo", "world_size": 2, "expected": 3, "observed": 3, "exact": True}}
line = {"probe": "torch", "schema": 1, "status": "pass", "reason": "", "data": data}
open(sys.argv[1], "w").write(json.dumps(line) + "\n")
PY
}
make_fake() {  # make_fake TAG PYTHON_EXECUTABLE
  local dir=$WORK/$(echo "$1" | tr '/:' '__')
  mkdir -p "$dir"
  answer "$dir/answer.json" "$2" /opt/lib/torch/__init__.py
  cat >"$dir/Dockerfile" <<DF
FROM $BASE
COPY answer.json /answer.json
RUN mkdir -p /opt/lib/torch && : > /opt/lib/torch/__init__.py && \
    printf '#!/bin/dash\ncat /answer.json\n' > /usr/local/bin/python3 && chmod +x /usr/local/bin/python3
LABEL io.torchdock.torch="2.9.1" io.torchdock.cuda="12.8" io.torchdock.python="3.11" \
      io.torchdock.waive.TD101="accepted by the vendor" io.torchdock.waive.TD133="accepted by the vendor"
DF
  DOCKER_BUILDKIT=1 $D build -q --network=none -t "$1" "$dir" >"$dir/build.log" 2>&1
}
make_fake tdclaims/script-python:1 /usr/local/bin/python3
check "built an image whose python3 is a #!/bin/dash script that answers for torch" test $? = 0
make_fake tdclaims/absent-python:1 /usr/bin/python3.11
check "built an image whose answer names an interpreter it does not have" test $? = 0

validate tdclaims/script-python:1
S=tdclaims/script-python:1
check "a script answering for its python fails (exit $(rc))" test "$(rc)" = 1
check "...TD119 fails" test "$(field $S TD119 status)" = fail
check "...naming the python that answered a #! script, not CPython" \
  bash -c 'field_has "$1" TD119 message "not a CPython interpreter" && field_has "$1" TD119 message "#!/bin/dash"' _ "$S"
check "...the image's waiver labels are shown as claims, not applied" python3 - "$WORK/v.json" <<'PY'
import json, sys
img = json.load(open(sys.argv[1]))["images"][0]
assert not [c for c in img["checks"] if c["status"] == "waived"], "a label waived a check"
notes = [n for n in img["waiver_notes"] if "claims a waiver, not applied" in n]
assert len(notes) == 2, img["waiver_notes"]
PY
check "...and SARIF suppresses nothing on the image's word" bash -c "! grep -q suppressions '$WORK/v.sarif'"

validate tdclaims/absent-python:1
A=tdclaims/absent-python:1
check "an answer naming an interpreter the image lacks fails (exit $(rc))" test "$(rc)" = 1
check "...TD119 fails, naming the missing interpreter" \
  bash -c 'test "$(field "$1" TD119 status)" = fail && field_has "$1" TD119 message "/usr/bin/python3.11 is not there"' _ "$A"

# --- R3-1 variants: the platform comes from the files ----------------------------------------
$D rm -f tdclaims-export >/dev/null 2>&1
$D create --name tdclaims-export "$BASE" /bin/true >/dev/null && $D export tdclaims-export -o "$WORK/rootfs.tar"
check "exported the base's root file system" test $? = 0
$D rm -f tdclaims-export >/dev/null 2>&1
python3 - "$WORK/rootfs.tar" "$WORK/spec-%s.json" <<'PY'
import json, sys
labels = {"io.torchdock.torch": "2.9.1", "io.torchdock.cuda": "12.8", "io.torchdock.python": "3.11"}
for tag, platform in (("tdclaims/plain:1", "linux/amd64"), ("tdclaims/s390x:1", "linux/s390x"),
                      ("tdclaims/arm64:1", "linux/arm64")):
    spec = {"platform": platform, "layers": {"root": {"tar": sys.argv[1]}},
            "images": [{"tag": tag, "layers": ["root"], "labels": labels, "cmd": ["/bin/sh"]}]}
    open(sys.argv[2] % tag.split("/")[1].split(":")[0], "w").write(json.dumps(spec))
PY
for name in plain s390x arm64; do
  python3 "$ROOT/tests/e2e/lib/docker_archive.py" "$WORK/spec-$name.json" | $D load -q >/dev/null
  check "loaded tdclaims/$name:1 (amd64 files, config says $(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['platform'])" "$WORK/spec-$name.json"))" test $? = 0
done

validate -j 2 tdclaims/s390x:1 tdclaims/arm64:1
for img in tdclaims/s390x:1 tdclaims/arm64:1; do
  claimed=$(python3 -c "import sys; print({'tdclaims/s390x:1': 's390x', 'tdclaims/arm64:1': 'arm64'}[sys.argv[1]])" "$img")
  check "$img is read in the full tier (its files are amd64), not files-only" \
    test "$(field $img - tier)" = '"full"'
  check "$img: TD132 fails naming the claim and the files" \
    bash -c 'test "$(field "$1" TD132 status)" = fail && field_has "$1" TD132 message "config says linux/$2" && field_has "$1" TD132 message "linux/amd64"' _ "$img" "$claimed"
  check "$img: no torch, so TD119 fails" test "$(field $img TD119 status)" = fail
done
check "the claimed-platform images fail (exit $(rc))" test "$(rc)" = 1
"$TD" node-check tdclaims/s390x:1 --probes "$PROBES" --node claims-node >"$WORK/nc.out" 2>&1
nc=$?
check "node-check does not call the claimed-s390x image healthy (exit $nc)" \
  bash -c "test $nc != 0 && ! grep -q 'healthy' '$WORK/nc.out'"

validate --files-only tdclaims/plain:1
check "--files-only on an image with torch labels and no python or torch fails (exit $(rc))" test "$(rc)" = 1
check "...TD119 fails: no python, so no torch it could import" \
  bash -c 'test "$(field tdclaims/plain:1 TD119 status)" = fail && field_has tdclaims/plain:1 TD119 message "no python interpreter"' 
check "...in the files-only tier" test "$(field tdclaims/plain:1 - tier)" = '"files-only"'

# --- R3-2 variants: who may waive ------------------------------------------------------------
$D tag tdclaims/plain:1 tdclaims/debian-cpu:debian12
validate --expect cuda=12.8 --waive "TD101=we ship it anyway" --waive "TD130=jobs run with --ipc=host" tdclaims/plain:1
P=tdclaims/plain:1
check "the user's own --expect cuda=12.8 fails TD101 even with --waive TD101 (exit $(rc))" \
  bash -c "test '$(rc)' = 1 && test '$(field $P TD101 status)' = fail"
check "...and the waiver note says why it was not used" grep -q 'your own --expect cuda' "$WORK/out"
check "...while --waive TD130 (no --expect involved) waives it, as the user's accepted suppression" python3 - "$WORK/v.json" "$WORK/v.sarif" <<'PY'
import json, sys
img = json.load(open(sys.argv[1]))["images"][0]
td130 = [c for c in img["checks"] if c["id"] == "TD130"][0]
assert td130["status"] == "waived" and td130["waiver"]["source"] == "--waive", td130
sarif = json.load(open(sys.argv[2]))
res = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "TD130"][0]
assert res["suppressions"][0]["status"] == "accepted", res
PY

mkdir -p "$WORK/repo/manifests"
python3 - "$ROOT/manifests/debian-cpu.json" "$WORK/repo/manifests/debian-cpu.json" <<'PY'
import json, re, sys
text = re.sub(r"^\s*//.*$", "", open(sys.argv[1]).read(), flags=re.M)
m = json.loads(text)
m["image"] = "tdclaims/debian-cpu"
m["waivers"] = {"TD130": "the repository's jobs run with --ipc=host"}
open(sys.argv[2], "w").write(json.dumps(m, indent=2))
PY
validate tdclaims/debian-cpu:debian12
M=tdclaims/debian-cpu:debian12
check "without --manifests the manifest's waivers do not apply" test "$(field $M TD130 status)" != waived
validate --manifests "$WORK/repo/manifests" tdclaims/debian-cpu:debian12
check "with --manifests DIR, the manifest that renders the image waives TD130" \
  bash -c 'test "$(field "$1" TD130 status)" = waived && field_has "$1" TD130 waiver "manifest "' _ "$M"
check "...and SARIF lists it without accepting it (not the user's own waiver)" python3 - "$WORK/v.sarif" <<'PY'
import json, sys
sarif = json.load(open(sys.argv[1]))
res = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "TD130"][0]
assert "suppressions" not in res, res
assert res["properties"]["waiver"]["source"].startswith("manifest "), res
PY
validate --manifests "$WORK/repo/manifests" tdclaims/plain:1
check "an image no variant renders gets no manifest waiver, and is told so" \
  bash -c 'test "$(field "$1" TD130 status)" != waived && grep -q "no variant of --manifests renders tdclaims/plain:1" "$2/out"' _ "$P" "$WORK"
check "no probe container is left behind" test "$($D ps -aq --filter label=io.torchdock.run | wc -l)" = 0
finish
