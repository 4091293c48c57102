#!/usr/bin/env bash
# End to end: a CUDA extension built from source. tdext (tests/data/source_extension, a small
# torch extension written for this test: a .cu kernel and its binding) is served as a source
# archive from a local HTTP server; a manifest with torch 2.11.0 from PyPI (its CUDA 13.0
# build) names it by URL and sha256. Render refuses it where no CUDA toolkit can build it
# (CUDA 12: the index's nvcc wheel has no nvcc; a GPU older than the toolkit compiles for);
# lock hash-locks the build stage's set (the CUDA 13.0 toolkit from PyPI and the build
# requirements) beside the Python set; build compiles the wheel in the build stage with
# TORCH_CUDA_ARCH_LIST of the target GPUs and installs it in the final stage (no toolkit, no
# compiler there); validate audits its GPU code (TD125) and counts it beside the lock
# (TD129); an archive whose bytes changed fails the build at pip's hash check.
# Usage: source_extension_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
WORK=$(mktemp -d /tmp/torchdock-srcext-e2e-XXXXXX)
HTTP_PID=
# Its torch image and the build stage's layers (the CUDA toolkit) go at the end.
trap '[ -n "$HTTP_PID" ] && kill "$HTTP_PID" 2>/dev/null; engine_release torchdock-test/srcext; services_stop; rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
DOCKER=/usr/bin/docker
VARIANT=srcext-2.11.0-cu130-debian12
IMAGE=torchdock-test/srcext:2.11.0-cu130-debian12
SITE=/opt/venv/lib/python3.11/site-packages
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[3])); print(next((c[sys.argv[2]] for c in d['images'][0]['checks'] if c['id']==sys.argv[1]), 'missing'))" "$1" "$2" "${3:-$WORK/v.json}"; }
build_locked() { python3 -c "import json,sys; print(json.load(open('manifests/srcext.lock.json'))['build_python']['$VARIANT']['packages'][sys.argv[1]]['version'])" "$1"; }
secs() { echo "$(date +%s.%N) - $1" | bc; }

# The source archive, made reproducibly from the test's tree, and a server for it.
mkdir -p "$WORK/srv" "$WORK/p/manifests"
make_archive() {
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    --transform 's,^tdext,tdext-0.1.0,' -C "$1" -cf - tdext | gzip -n >"$WORK/srv/tdext-0.1.0.tar.gz"
}
make_archive "$ROOT/tests/data/source_extension"
SHA=$(sha256sum "$WORK/srv/tdext-0.1.0.tar.gz" | cut -d' ' -f1)
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$WORK/srv" >"$WORK/http.log" 2>&1 &
HTTP_PID=$!
for _ in $(seq 50); do grep -q 'port [0-9]' "$WORK/http.log" && break; sleep 0.1; done
PORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$WORK/http.log" | head -1)
URL="http://127.0.0.1:$PORT/tdext-0.1.0.tar.gz"

services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
cd "$WORK/p"
printf '{"schema": 1, "mirrors": {"docker.io": "%s"}}\n' "$TD_REGISTRY" >torchdock.json
# manifest TORCH CUDA GPUS: the family with tdext built from source
manifest() {
  cat >manifests/srcext.json <<EOF
{
  "schema": 1,
  "name": "srcext",
  "description": "torch from PyPI with a CUDA extension built from source",
  "image": "torchdock-test/srcext",
  "base": "os-pip",
  "wheel_index": "pypi",
  "matrix": {"torch": ["$1"], "cuda": ["$2"], "os": ["debian12"]},
  "torchaudio": false,
  "extensions": [{"name": "tdext", "source": {"url": "$URL", "sha256": "$SHA",
                  "build_requires": ["setuptools==81.0.0", "ninja==1.13.0"], "max_jobs": 2}}],
  "target_gpus": $3
}
EOF
}

# --- refused at render where nothing can build it ---------------------------------------------
manifest 2.9.1 cu128 '["A100"]'
run render --out "$WORK/cu12"
check "render: torch 2.9.1 (CUDA 12.8) is refused: the index has no nvcc for CUDA 12, the fact's source named (exit 2)" \
  bash -c "test $(rc) = 2 && grep -q 'extensions\[0\].source: tdext is built from source' '$WORK/err' && grep -q 'no nvcc for CUDA 12 (PyPI nvidia-cuda-nvcc-cu12 12.8.93' '$WORK/err' && [ ! -e '$WORK/cu12' ]"
manifest 2.11.0 cu130 '["V100", "A100"]'
run render --out "$WORK/v100"
check "render: a V100 target is refused: the CUDA 13.0 toolkit compiles from sm_75 (exit 2)" \
  bash -c "test $(rc) = 2 && grep -q 'target GPU V100 (sm_70), which the CUDA 13.0 toolkit does not compile for (it compiles for sm_75 sm_80' '$WORK/err'"

# --- lock: the build stage's set beside the Python set ----------------------------------------
manifest 2.11.0 cu130 '["A100", "H100"]'
start=$(date +%s.%N)
run lock
echo "# figure: lock with a build stage (uv cache as it is): $(secs "$start") s"
check "lock: exit 0, the Python set and the build stage's set locked" \
  bash -c "test $(rc) = 0 && grep -q '^$VARIANT  *[0-9]*  *locked' '$WORK/out' && grep -q '^$VARIANT (build)  *7  *locked' '$WORK/out'"
check "lock: the build set is the CUDA 13.0 toolkit (nvcc $(build_locked nvidia-cuda-nvcc), runtime $(build_locked nvidia-cuda-runtime)) and the build requirements" \
  bash -c "[ '$(build_locked nvidia-cuda-nvcc)' = 13.0.88 ] && [ '$(build_locked nvidia-cuda-runtime)' = 13.0.96 ] && [ '$(build_locked ninja)' = 1.13.0 ]"
check "lock: the archive is not in the Python set (it is built, not resolved)" \
  python3 -c "import json,sys; d=json.load(open('manifests/srcext.lock.json')); sys.exit('tdext' in d['python']['$VARIANT']['packages'])"
cp manifests/srcext.lock.json "$WORK/first.lock.json"
run lock --check
check "lock --check: exit 0, both sets unchanged" bash -c "test $(rc) = 0 && grep -q '^$VARIANT (build)  *7  *ok' '$WORK/out'"
run sbom "$VARIANT" -o "$WORK/sbom.json"
check "sbom VARIANT: tdext is listed by its source archive (URL and sha256), the SBOM schema-valid" \
  bash -c "test $(rc) = 0 && python3 '$ROOT/tests/e2e/sbom_schema_check.py' '$WORK/sbom.json' && python3 -c \"import json,sys; c=[c for c in json.load(open('$WORK/sbom.json'))['components'] if c['name']=='tdext']; sys.exit(not (c and c[0]['version']=='0.1.0' and c[0]['hashes'][0]['content']=='$SHA' and any(r['url']=='$URL' for r in c[0].get('externalReferences', []))))\""

# --- render, build and validate ---------------------------------------------------------------
run render --out d
check "render: the build stage's requirements file, a hadolint-clean Dockerfile" \
  bash -c "test $(rc) = 0 && [ -s d/$VARIANT/requirements.build.lock.txt ] && hadolint --failure-threshold warning d/$VARIANT/Dockerfile"
check "render: the wheel is built for TORCH_CUDA_ARCH_LIST 8.0;9.0 (A100, H100) from the sha256-checked archive" \
  bash -c "grep -q 'TORCH_CUDA_ARCH_LIST=\"8.0;9.0\" MAX_JOBS=\"\${MAX_JOBS:-2}\"' d/$VARIANT/Dockerfile && grep -qF '#sha256=$SHA' d/$VARIANT/Dockerfile"
start=$(date +%s.%N)
run build "$VARIANT" --dockerfiles d
echo "# figure: build with the extension compiled from source: $(secs "$start") s"
check "build: exit 0" test "$(rc)" = 0
[ "$(rc)" = 0 ] || { tail -5 "$WORK/err"; tail -30 ".torchdock/build/$VARIANT/build.log" 2>/dev/null | sed 's/^/  log: /'; }
grep -o 'Building wheel for tdext.*finished.*\|#[0-9]* [0-9.]*   Building wheel for tdext.*' ".torchdock/build/$VARIANT/build.log" 2>/dev/null | tail -1 | sed 's/^/# figure: /'
check "the image imports tdext, and has neither the CUDA toolkit nor a compiler (they stayed in the build stage)" \
  $DOCKER run --rm --network=none "$IMAGE" bash -c "python -c 'import tdext, tdext._C' && [ ! -e $SITE/nvidia/cu13/bin/nvcc ] && ! command -v g++ && ! command -v nvcc"
run validate --probes "$PROBES" --json="$WORK/v.json" "$IMAGE"
check "validate: exit 0" test "$(rc)" = 0
check "validate: TD125 passes for A100 and H100, tdext's object among those judged ($(field TD125 observed))" \
  bash -c "[ '$(field TD125 status)' = pass ]"
check "validate: TD129 counts the built tdext beside the lock ($(field TD129 expected))" \
  bash -c "[ '$(field TD129 status)' = pass ] && [[ '$(field TD129 expected)' == *'with the built tdext==0.1.0'* ]]"
run validate --probes "$PROBES" --expect target-gpus=B200 --json="$WORK/v-b200.json" "$IMAGE"
check "validate --expect target-gpus=B200: TD125 fails naming tdext's object and the sm_80, sm_90 it was compiled for" \
  bash -c "test $(rc) = 1 && [[ '$(field TD125 message "$WORK/v-b200.json")' == 'tdext/_C.cpython-311-x86_64-linux-gnu.so has sm_80, sm_90; B200 needs sm_100'* ]]"

# --- an archive whose bytes changed: pip's hash check stops the build --------------------------
# Another MAX_JOBS misses the build cache from the build stage's ARG on, so the archive is
# fetched again (an unchanged build stage keeps the wheel it built from the checked bytes).
mkdir -p "$WORK/tampered" && cp -r "$ROOT/tests/data/source_extension/tdext" "$WORK/tampered/"
echo '# changed' >>"$WORK/tampered/tdext/setup.py"
make_archive "$WORK/tampered"
run build "$VARIANT" --dockerfiles d --build-arg MAX_JOBS=1
check "an archive changed on the server: the build fails at the extension's step on its sha256 (exit 1)" \
  bash -c "test $(rc) = 1 && grep -q 'extension-build' '$WORK/err' && grep -qi 'do not match the hashes' .torchdock/build/$VARIANT/build.log"
[ "$(rc)" = 1 ] || { tail -5 "$WORK/err"; grep -i -B2 -A3 'hash' ".torchdock/build/$VARIANT/build.log" | tail -12 | sed 's/^/  log: /'; }

finish
