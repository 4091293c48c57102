#!/usr/bin/env bash
# End to end: the bundled PyPI family (manifests/pypi-cuda.json) rendered, hash-locked with
# uv, built from PyPI's genuine CUDA wheels on the debootstrapped Debian base and validated;
# a --no-cache build installs the same Python tree as the first; xformers, the extension, is
# locked at the release that fits each torch, refused at render when pinned for another and
# audited by TD125; TD129 finds the installed set is the lock's and names what was added;
# the lock's faults (a moved package, a stale manifest, an unreachable PyTorch index, no
# uv); the index settings (a PyPI mirror behind credentials from a netrc secret, a pip
# failure naming its index, --build-arg passing through).
# Usage: pypi_cuda_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
WORK=$(mktemp -d /tmp/torchdock-pypi-e2e-XXXXXX)
MIRROR_PID=
# Its 8 GB image goes at the end (engine_release): the next suites build their own.
trap '[ -n "$MIRROR_PID" ] && kill $MIRROR_PID 2>/dev/null; engine_release torchdock/pypi-cuda torchdock/e2e-added; services_stop; rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
DOCKER=/usr/bin/docker
VARIANT=pypi-cuda-2.9.1-cu128-debian12
IMAGE=torchdock/pypi-cuda:2.9.1-cu128-debian12
SITE=/opt/venv/lib/python3.11/site-packages
# locked NAME [VARIANT]: the version the lock file pins
locked() {
  python3 -c "import json,sys; print(json.load(open('manifests/pypi-cuda.lock.json'))['python'][sys.argv[2]]['packages'][sys.argv[1]]['version'])" \
    "$1" "${2:-$VARIANT}"
}
# set_locked_version NAME VERSION: edit the lock file as an upstream move or a hand would
set_locked_version() {
  python3 -c "import json,sys; p='manifests/pypi-cuda.lock.json'; d=json.load(open(p)); d['python'][sys.argv[1]]['packages'][sys.argv[2]]['version']=sys.argv[3]; open(p,'w').write(json.dumps(d, indent=2)+'\\n')" \
    "$VARIANT" "$1" "$2"
}
field() { python3 -c "import json,sys; d=json.load(open('$WORK/v.json')); print(next((c[sys.argv[2]] for c in d['images'][0]['checks'] if c['id']==sys.argv[1]), 'missing'))" "$1" "$2"; }
# tree_digest IMAGE: pip freeze, the RECORD files and every file of the site directory, hashed
tree_digest() {
  $DOCKER run --rm --network=none -v "$ROOT/tests/e2e/lib/python_tree_digest.py:/d.py:ro" "$1" \
    python /d.py "$SITE"
}
secs() { echo "$(date +%s.%N) - $1" | bc; }
# phase NAME: how far into the suite each part starts (CI time is budgeted per suite)
T0=$(date +%s)
phase() { echo "# figure: $(( $(date +%s) - T0 )) s into the suite: $1"; }

services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$WORK/p/manifests" && cd "$WORK/p"
cp "$ROOT/manifests/pypi-cuda.json" manifests/
printf '{"schema": 1, "mirrors": {"docker.io": "%s"}}\n' "$TD_REGISTRY" >torchdock.json

phase "lock"
# --- lock: the whole Python set of each variant, with hashes ----------------------------------
start=$(date +%s.%N)
run lock
echo "# figure: lock of the bundled PyPI family (2 variants; uv cache as it is): $(secs "$start") s"
check "lock: exit 0, both variants locked" \
  bash -c "test $(rc) = 0 && grep -q '$VARIANT .* locked' '$WORK/out' && grep -q 'pypi-cuda-2.8.0-cu128-debian12 .* locked' '$WORK/out'"
check "lock: torch 2.9.1 pinned without a local tag, with hashes" test "$(locked torch)" = 2.9.1
check "lock: torch's own pins come with it (cuDNN $(locked nvidia-cudnn-cu12), NCCL $(locked nvidia-nccl-cu12), triton $(locked triton))" \
  bash -c "[ -n '$(locked nvidia-cudnn-cu12)' ] && [ -n '$(locked nvidia-nccl-cu12)' ] && [ -n '$(locked triton)' ]"
# The extension's release that fits each torch, by the knowledge base's facts (its
# METADATA's Requires-Dist, read from PyPI by kb refresh --extensions).
fits() {
  python3 -c "import json,sys; d=json.load(open('$ROOT/data/extensions.json'));
x=[e for e in d['extensions'] if e['name']=='xformers'][0]
print([r['version'] for r in x['releases'] if r['requires_torch']=='=='+sys.argv[1]][-1])" "$1"
}
check "lock: the extension xformers is locked at the release that fits each torch (2.9.1: $(locked xformers), 2.8.0: $(locked xformers pypi-cuda-2.8.0-cu128-debian12))" \
  bash -c "[ '$(locked xformers)' = '$(fits 2.9.1)' ] && [ '$(locked xformers pypi-cuda-2.8.0-cu128-debian12)' = '$(fits 2.8.0)' ]"
check "lock: the dependencies nobody pinned are locked too (sympy $(locked sympy), jinja2 $(locked jinja2))" \
  bash -c "[ -n '$(locked sympy)' ] && [ -n '$(locked jinja2)' ]"
cp manifests/pypi-cuda.lock.json "$WORK/good.lock.json"
start=$(date +%s.%N)
run lock
echo "# figure: lock again with nothing changed: $(secs "$start") s"
check "lock again: unchanged, the same bytes" \
  bash -c "grep -q '$VARIANT .* unchanged' '$WORK/out' && cmp -s manifests/pypi-cuda.lock.json '$WORK/good.lock.json'"
run lock --check
check "lock --check on a fresh lock: exit 0" test "$(rc)" = 0

# A package moved upstream (simulated by editing the lock): --check names it, writes nothing.
set_locked_version sympy 1.13.3
cp manifests/pypi-cuda.lock.json "$WORK/moved.lock.json"
run lock --check
check "lock --check: exit 1 naming what moved (sympy 1.13.3 -> $(locked sympy pypi-cuda-2.8.0-cu128-debian12))" \
  bash -c "test $(rc) = 1 && grep -q 'MOVED: sympy 1.13.3 -> ' '$WORK/out'"
check "lock --check wrote nothing" cmp -s manifests/pypi-cuda.lock.json "$WORK/moved.lock.json"
cp "$WORK/good.lock.json" manifests/pypi-cuda.lock.json

# The manifest changes a pin: the lock is stale, rendered unlocked and warned about.
sed -i 's/"jupyter": "4.3.4"/"jupyter": "4.3.5"/' manifests/pypi-cuda.json
run render --out "$WORK/stale"
check "a stale lock is warned about and not used" \
  bash -c "test $(rc) = 0 && grep -q 'renders unlocked' '$WORK/err' && [ ! -e '$WORK/stale/$VARIANT/requirements.lock.txt' ] && grep -q 'not hash-locked' '$WORK/stale/$VARIANT/Dockerfile'"
run lock --check
check "lock --check on a stale lock: exit 1 (STALE)" bash -c "test $(rc) = 1 && grep -q STALE '$WORK/out'"
cp "$ROOT/manifests/pypi-cuda.json" manifests/

# An xformers pinned for another torch is refused at render, naming the one that fits.
sed -i 's/{"name": "xformers"}/{"name": "xformers", "version": "0.0.33.post1"}/' manifests/pypi-cuda.json
run render --out "$WORK/mismatch"
check "render: xformers 0.0.33.post1 (torch==2.9.0) for torch 2.9.1 is refused, naming xformers $(fits 2.9.1)" \
  bash -c "test $(rc) = 2 && grep -q 'extensions\[0\].version: xformers 0.0.33.post1 requires torch==2.9.0' '$WORK/err' && grep -q 'xformers $(fits 2.9.1) fits torch 2.9.1' '$WORK/err' && [ ! -e '$WORK/mismatch' ]"
run lock --check
check "...and lock --check refuses it too (exit 2), before resolving anything" bash -c "test $(rc) = 2"
cp "$ROOT/manifests/pypi-cuda.json" manifests/

# Locking without uv, and a PyTorch-index variant whose index cannot be reached.
TORCHDOCK_UV=/nonexistent/uv run lock --check
check "no uv: --check exits 3 (drift unknown, not drift), NOT CHECKED saying uv is missing" \
  bash -c "test $(rc) = 3 && grep -q 'NOT CHECKED: uv not found' '$WORK/out' && grep -q 'whether they drifted is unknown' '$WORK/err'"
printf '#!/bin/sh\necho "uv 0.12.0 (x86_64-unknown-linux-gnu)"\n' >"$WORK/old-uv" && chmod +x "$WORK/old-uv"
TORCHDOCK_UV="$WORK/old-uv" run lock --check
check "another uv version is refused, naming the one locks are resolved with" \
  bash -c "test $(rc) = 3 && grep -q 'is not uv 0.13.8' '$WORK/out'"
# uv's own environment cannot change what is resolved: an override file is ignored.
echo "sympy==1.13.1" >"$WORK/override.txt"
UV_OVERRIDE="$WORK/override.txt" UV_RESOLUTION=lowest run lock
check "UV_OVERRIDE and UV_RESOLUTION in the environment change nothing (lock unchanged)" \
  bash -c "test $(rc) = 0 && grep -q '$VARIANT .* unchanged' '$WORK/out' && cmp -s manifests/pypi-cuda.lock.json '$WORK/good.lock.json'"
# A lock file whose packages contradict its own inputs (torch edited to 2.8.0) is refused.
set_locked_version torch 2.8.0
run render --out "$WORK/contradicted"
check "a lock that pins torch 2.8.0 for torch==2.9.1 is refused (exit 2, path and both versions named)" \
  bash -c "test $(rc) = 2 && grep -q 'packages: the lock has torch .2.8.0., but its inputs pin torch==2.9.1' '$WORK/err' && [ ! -e '$WORK/contradicted' ]"
cp "$WORK/good.lock.json" manifests/pypi-cuda.lock.json
run lock --check --pypi-index http://127.attacker.example/simple
check "plain http to a host that only starts with 127. is refused (exit 2)" \
  bash -c "test $(rc) = 2 && grep -q 'plain http to another host' '$WORK/err'"
mkdir -p "$WORK/ix/manifests"
sed -e 's/"wheel_index": "pypi"/"wheel_index": "pytorch"/' -e 's/"name": "pypi-cuda"/"name": "ix"/' \
  -e 's/"2.8.0", //' "$ROOT/manifests/pypi-cuda.json" >"$WORK/ix/manifests/ix.json"
(cd "$WORK/ix" && cp ../p/torchdock.json . && "$TD" lock --torch-index http://127.0.0.1:9/whl >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "PyTorch index unreachable: exit 0, the variant NOT FULLY LOCKED, said on stderr" \
  bash -c "test $(rc) = 0 && grep -q 'NOT FULLY LOCKED' '$WORK/out' && grep -q 'not fully locked' '$WORK/err'"
(cd "$WORK/ix" && "$TD" render --out d >/dev/null 2>&1)
check "...it still renders, pinned by version and not hash-locked" \
  grep -q 'not hash-locked: manifests/ix.lock.json has no Python lock' "$WORK/ix/d/ix-2.9.1-cu128-debian12/Dockerfile"
(cd "$WORK/ix" && "$TD" build --dockerfiles d >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "...and build refuses it without a PyTorch index setting (exit 2, naming indexes.pytorch)" \
  bash -c "test $(rc) = 2 && grep -q 'indexes.pytorch' '$WORK/err'"

phase "render, build, validate"
# --- render, build and validate the real CUDA image -----------------------------------------
run render --out dockerfiles
check "render: the locked variant gets requirements.lock.txt and installs it with hashes" \
  bash -c "test $(rc) = 0 && grep -q -- '--require-hashes --no-deps' dockerfiles/$VARIANT/Dockerfile && grep -q '^torch==2.9.1 ' dockerfiles/$VARIANT/requirements.lock.txt"
check "render: the locked Dockerfile is hadolint-clean" hadolint --failure-threshold warning "dockerfiles/$VARIANT/Dockerfile"
start=$(date +%s.%N)
run build "$VARIANT"
echo "# figure: build of $VARIANT (pip downloads cached by BuildKit across runs): $(secs "$start") s"
check "build: exit 0" test "$(rc)" = 0
[ "$(rc)" = 0 ] || { tail -30 "$WORK/err"; tail -40 ".torchdock/build/$VARIANT/build.log"; }
run validate "$IMAGE" --probes "$PROBES" --json="$WORK/v.json"
check "validate: the static tier passes (exit 0)" test "$(rc)" = 0
check "validate: cuDNN observed = the lock's nvidia-cudnn-cu12 $(locked nvidia-cudnn-cu12)" \
  test "$(field TD102 observed)" = "$(locked nvidia-cudnn-cu12)"
check "validate: NCCL observed = the lock's nvidia-nccl-cu12 $(locked nvidia-nccl-cu12)" \
  test "$(field TD104 observed)" = "$(locked nvidia-nccl-cu12)"
runtime=$(locked nvidia-cuda-runtime-cu12)
check "validate: CUDA runtime observed = the lock's runtime wheel ${runtime%.*}" \
  bash -c "[[ '$(field TD101 observed)' == '${runtime%.*} '* ]]"
check "validate: torch observed = the lock's $(locked torch)" bash -c "[[ '$(field TD120 observed)' == '$(locked torch)+'* ]]"
tree_digest "$IMAGE" >"$WORK/tree0.json"
check "validate: TD129, the installed Python set is the lock's ($(field TD129 observed), $(field TD129 expected))" \
  test "$(field TD129 status)" = pass
check "validate: TD125 judges every object with GPU code, xformers' with torch's, and passes for A100 and H100 ($(field TD125 observed))" \
  test "$(field TD125 status)" = pass
run validate "$IMAGE" --probes "$PROBES" --expect target-gpus=T4 --json="$WORK/t4.json"
check "validate --expect target-gpus=T4: TD125 fails naming xformers/flash_attn_3/_C.so (its code starts at sm_80)" \
  python3 -c "import json,sys; c=[c for c in json.load(open('$WORK/t4.json'))['images'][0]['checks'] if c['id']=='TD125'][0]; print(c['message'][:300]); sys.exit(0 if c['status']=='fail' and 'xformers/flash_attn_3/_C.so' in c['message'] else 1)"
# A distribution installed after the locked layer (written by hand, no network): TD129 names it.
cat >"$WORK/Dockerfile.added" <<EOF
FROM $IMAGE
USER root
RUN d=$SITE/extra_pkg-1.0.dist-info && mkdir \$d \\
 && printf 'Metadata-Version: 2.1\\nName: extra-pkg\\nVersion: 1.0\\n' >\$d/METADATA \\
 && printf 'extra_pkg-1.0.dist-info/METADATA,,\\n' >\$d/RECORD
EOF
$DOCKER build -q --network=none -t torchdock/e2e-added -f "$WORK/Dockerfile.added" "$WORK" >/dev/null 2>"$WORK/added.err" || tail -5 "$WORK/added.err"
run validate torchdock/e2e-added --probes "$PROBES" --json="$WORK/added.json"
check "validate: a distribution installed after the lock fails TD129, named (not locked: extra-pkg 1.0)" \
  python3 -c "import json,sys; c=[c for c in json.load(open('$WORK/added.json'))['images'][0]['checks'] if c['id']=='TD129'][0]; print(c['message'][:300]); sys.exit(0 if c['status']=='fail' and 'not locked: extra-pkg 1.0' in c['message'] else 1)"
$DOCKER rmi -f torchdock/e2e-added >/dev/null 2>&1
check "the image's pip freeze is the lock, package for package" python3 - "$WORK/tree0.json" "$VARIANT" <<'EOF'
import json, re, sys
freeze = json.load(open(sys.argv[1]))["freeze"]
lock = json.load(open("manifests/pypi-cuda.lock.json"))["python"][sys.argv[2]]["packages"]
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
installed = {norm(l.split("==")[0]): l.split("==")[1] for l in freeze.splitlines() if "==" in l}
missing = {n: v for n, v in lock.items() if installed.get(n) != v["version"]}
extra = set(installed) - set(lock) - {"pip"}
print("differ:", missing, "not locked:", extra)
sys.exit(1 if missing or extra else 0)
EOF

phase "sbom"
# --- SBOM: the variant's from its lock, the image's from its files; both schema-valid -------
run sbom "$VARIANT" -o "$WORK/variant.cdx.json"
check "sbom VARIANT: exit 0" test "$(rc)" = 0
run sbom "$IMAGE" --probes "$PROBES" -o "$WORK/image.cdx.json"
check "sbom IMAGE: exit 0" test "$(rc)" = 0
check "both SBOMs are valid CycloneDX 1.6 (the official JSON schema)" \
  python3 "$ROOT/tests/e2e/sbom_schema_check.py" "$WORK/variant.cdx.json" "$WORK/image.cdx.json"
check "the variant's SBOM: every locked package by its hashes, the base by digest, xformers' GPU objects" \
  python3 - "$WORK/variant.cdx.json" "$VARIANT" <<'EOF'
import json, sys
bom = json.load(open(sys.argv[1]))
lock = json.load(open("manifests/pypi-cuda.lock.json"))
pkgs = lock["python"][sys.argv[2]]["packages"]
comps = bom["components"]
py = {c["name"]: c for c in comps if c.get("purl", "").startswith("pkg:pypi/")}
bad = [n for n, p in pkgs.items() if n not in py or py[n]["version"] != p["version"]
       or sorted("sha256:" + h["content"] for h in py[n].get("hashes", [])) != sorted(p["hashes"])]
base = [c for c in comps if c.get("purl", "").startswith("pkg:oci/")]
digest = lock["images"]["debian:bookworm"]["digest"]
gpu = [c for c in comps if c["type"] == "file" and "xformers" in c["name"]]
print(len(py), "python components,", len(bad), "differ from the lock; base:", [c["purl"] for c in base], "; gpu objects:", [c["name"] for c in gpu])
sys.exit(0 if not bad and len(py) == len(pkgs) and base and digest.replace(":", "%3A") in base[0]["purl"] and len(gpu) == 2 else 1)
EOF
check "the image's SBOM: the installed distributions, torch's CUDA libraries, xformers' objects with their targets" \
  python3 - "$WORK/image.cdx.json" "$VARIANT" <<'EOF'
import json, sys
bom = json.load(open(sys.argv[1]))
lock = json.load(open("manifests/pypi-cuda.lock.json"))["python"][sys.argv[2]]["packages"]
comps = bom["components"]
py = {c["name"].lower().replace("_", "-"): c["version"] for c in comps if c.get("purl", "").startswith("pkg:pypi/")}
missing = [n for n, p in lock.items() if py.get(n) != p["version"]]
props = lambda c: {p["name"]: p["value"] for p in c.get("properties", [])}
objs = [c for c in comps if c["type"] == "file" and "xformers/flash_attn_3/_C.so" in props(c).get("torchdock:path", "")]
libs = [c for c in comps if "libcudnn" in c["name"]]
print(len(py), "installed;", len(missing), "locked but not listed:", missing[:5], "; flash_attn_3 targets:", [props(c).get("torchdock:gpu-targets") for c in objs], "; cuDNN libraries:", len(libs))
sys.exit(0 if not missing and objs and "sm_90a" in props(objs[0]).get("torchdock:gpu-targets", "") and libs else 1)
EOF

phase "the --no-cache rebuild"
# --- reproducible: a --no-cache build installs the same Python tree as the first build -------
# The first build's tree (tree0) was hashed above; one more build from nothing but the lock
# (--no-cache) must give the same bytes. Each image is removed once hashed, and the build
# cache layers only it used (`builder prune --filter type=regular` keeps pip's cache mount).
ids=("$($DOCKER image inspect -f '{{.Id}}' "$IMAGE")") built=0
rm -f "$WORK/tree1.json"
# The first image goes before the second is built: two 8 GB images and a build's snapshot
# at once do not fit every disk (this one ran out with 37 GB free).
engine_release "$IMAGE"
run build --no-cache "$VARIANT"
check "build --no-cache: exit 0" test "$(rc)" = 0
if [ "$(rc)" = 0 ]; then
  built=1
  tree_digest "$IMAGE" >"$WORK/tree1.json"
  ids+=("$($DOCKER image inspect -f '{{.Id}}' "$IMAGE")")
else
  tail -5 "$WORK/err"; tail -30 ".torchdock/build/$VARIANT/build.log" 2>/dev/null | sed "s/^/  log: /"
fi
$DOCKER image prune -f >/dev/null
$DOCKER builder prune -f --filter type=regular >/dev/null
check "two builds (the first, then --no-cache): the same pip freeze, RECORD files and site-packages bytes" \
  python3 - "$WORK" "$built" <<'EOF'
import json, sys
if sys.argv[2] != "1":
    print("not compared: the --no-cache build failed")
    sys.exit(1)
a, b = (json.load(open(f"{sys.argv[1]}/tree{i}.json")) for i in (0, 1))
print("files:", a["files"], "tree:", a["tree_sha256"][:16], b["tree_sha256"][:16])
sys.exit(0 if a == b else 1)
EOF
[ "$built" = 1 ] && echo "# figure: image IDs of the two builds: ${ids[0]:7:12} ${ids[1]:7:12} ($([ "${ids[0]}" = "${ids[1]}" ] && echo same || echo differ))"

phase "index settings"
# --- index settings: a PyPI mirror behind credentials, pip failures naming their index --------
# The index is a build argument declared just before the pip layer, so each build below
# (a mirror on a port of its own each time: a new value) reruns the pip layer and keeps the
# apt layers of the first: no --no-cache needed, and apt runs once.
mkdir -p "$WORK/wheels" "$WORK/cpu/manifests"
python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$WORK/wheels" tqdm==4.67.1
# apt_steps_cached BUILD_LOG: BuildKit ran no apt step (each "#N ... apt-get install" is "#N CACHED")
apt_steps_cached() {
  awk '/^#[0-9]+ \[.*apt-get install/ { apt[$1] = 1 } /^#[0-9]+ CACHED$/ { cached[$1] = 1 }
       END { n = 0; for (s in apt) { n++; if (!(s in cached)) { print "not cached: step " s; bad = 1 } }
             print n " apt steps"; exit (bad || n == 0) }' "$1"
}
mirror() {  # mirror NAME: a mirror behind credentials on a free port; prints the port
  python3 "$ROOT/tests/e2e/lib/pypi_mirror.py" "$WORK/wheels" "$WORK/$1.port" "$WORK/$1.log" td-user:s3cret-pw \
    >"$WORK/$1.out" 2>&1 &  # not on the test's stdout: ctest waits for every holder of it
  MIRROR_PID="$MIRROR_PID $!"
  for _ in $(seq 50); do [ -s "$WORK/$1.port" ] && break; sleep 0.1; done
  cat "$WORK/$1.port"
}
PORT=$(mirror mirror) PORT2=$(mirror mirror2)
printf 'machine 127.0.0.1\nlogin td-user\npassword s3cret-pw\n' >"$WORK/netrc"
cd "$WORK/cpu"
cp "$ROOT/manifests/debian-cpu.json" manifests/
cp ../p/torchdock.json .
"$TD" render --out d >/dev/null 2>&1
run build --dockerfiles d --pypi-index "http://127.0.0.1:$PORT/simple" --index-netrc "$WORK/netrc"
check "a PyPI mirror with credentials from --index-netrc: the build installs from it" \
  bash -c "test $(rc) = 0 && grep -q '/files/tqdm-4.67.1-.* auth' '$WORK/mirror.log'"
check "...and the password is in no layer, label or history of the image" \
  bash -c "! $DOCKER history --no-trunc torchdock/debian-cpu:debian12 | grep -q s3cret-pw && ! $DOCKER image inspect torchdock/debian-cpu:debian12 | grep -q s3cret-pw && ! $DOCKER run --rm --network=none torchdock/debian-cpu:debian12 grep -rqs s3cret-pw /root /home /etc /run /tmp"
run build --dockerfiles d --pypi-index "http://127.0.0.1:$PORT2/simple"
check "the mirror without credentials: the pip step fails, naming the index and its setting" \
  bash -c "test $(rc) = 1 && grep -q 'hint: pip used http://127.0.0.1:$PORT2/simple for PyPI packages (setting indexes.pypi or --pypi-index' '$WORK/err'"
check "...the apt layers came from the first build's cache (the index is declared after them)" \
  apt_steps_cached ".torchdock/build/debian-cpu-debian12/build.log"
run build --dockerfiles d --build-arg "PIP_INDEX_URL=http://127.0.0.1:9/simple"
check "--build-arg passes through (PIP_INDEX_URL to a dead port fails, and the hint says so)" \
  bash -c "test $(rc) = 1 && grep -q 'hint: pip used the --build-arg PIP_INDEX_URL' '$WORK/err'"
run build --dockerfiles d --pypi-index "https://td-user:pw@127.0.0.1:$PORT/simple"
check "an index URL with credentials is refused (exit 2), pointing at the netrc setting" \
  bash -c "test $(rc) = 2 && grep -q 'indexes.netrc' '$WORK/err'"
run build --dockerfiles d --build-arg "X=https://u:p@host/simple"
check "a --build-arg with credentials is refused (exit 2)" test "$(rc)" = 2
run build --dockerfiles d --build-arg "PIP_INDEX_URL=http://mirror.example/simple"
check "a PIP_INDEX_URL build argument obeys the index rules (plain http to a remote host: exit 2)" \
  bash -c "test $(rc) = 2 && grep -q 'plain http to another host' '$WORK/err'"
cp "$WORK/netrc" "$WORK/a,id=pip-ca"
run build --dockerfiles d --index-netrc "$WORK/a,id=pip-ca"
check "a netrc path with a comma (it would add --secret fields) is refused (exit 2)" \
  bash -c "test $(rc) = 2 && grep -q 'secret field list' '$WORK/err'"
phase "end"
finish
