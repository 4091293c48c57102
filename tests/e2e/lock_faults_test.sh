#!/usr/bin/env bash
# End to end: `torchdock lock` against a fault-injecting fake registry
# (tests/e2e/lib/fake_registry.py on 127.0.0.1, reached through a torchdock.json mirror).
# Each fault must give one clear line, the documented exit code, and leave the lock file
# byte for byte as it was. No Docker needed. Usage: lock_faults_test.sh TORCHDOCK
set -uo pipefail
TD=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/torchdock-lockfaults-XXXXXX)
source "$ROOT/tests/e2e/lib/check.sh"

python3 "$ROOT/tests/e2e/lib/fake_registry.py" "$WORK" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || { echo "FAIL - the fake registry did not start"; exit 1; }
PORT=$(cat "$WORK/port")

export TORCHDOCK_DATA="$ROOT/data"
unset TORCHDOCK_CONFIG
mkdir -p "$WORK/p/manifests"
# Without its apt list: the fake registry serves manifests but no layers, so no apt could
# run in its base (the apt lock is exercised against a real base by e2e_build_lock).
grep -v '"apt"' "$ROOT/manifests/debian-cpu.json" >"$WORK/p/manifests/debian-cpu.json"
printf '{"schema": 1, "mirrors": {"docker.io": "127.0.0.1:%s"}}\n' "$PORT" >"$WORK/p/torchdock.json"
cd "$WORK/p"
LOCK=manifests/debian-cpu.lock.json
OLD=sha256:1111111111111111111111111111111111111111111111111111111111111111
INDEX_DIGEST=$(python3 -c "import sys; sys.path.insert(0, '$ROOT/tests/e2e/lib'); import fake_registry; print(fake_registry.INDEX_DIGEST)")

# fault MODE: the next requests get MODE; the lock file is reset to a known old digest.
fault() {
  echo "$1" >"$WORK/mode"
  : >"$WORK/requests.log"
  printf '{\n  "images": {\n    "debian:bookworm": {\n      "digest": "%s"\n    }\n  },\n  "schema": 1\n}\n' "$OLD" >"$LOCK"
  cp "$LOCK" "$WORK/lock.before"
}
unchanged() { cmp -s "$LOCK" "$WORK/lock.before"; }
no_escape() { ! grep -q $'\x1b' "$WORK/out" "$WORK/err"; }
short_lines() { awk 'length > 400 { bad = 1 } END { exit bad }' "$WORK/out" "$WORK/err"; }
locked() { grep -qF "\"digest\": \"$1\"" "$LOCK"; }

# 1. The good paths still lock: digest header, computed digest, Bearer token, a redirect.
fault ok; run lock
check "ok: exit 0" test "$(rc)" = 0
check "ok: locked the registry's digest" locked "$INDEX_DIGEST"
fault nodigest; run lock
check "no digest header: exit 0, digest of the verified body" bash -c "test $(rc) = 0 && grep -qF '$INDEX_DIGEST' $LOCK"
fault bearer; run lock
check "Bearer token over a loopback http realm: exit 0" test "$(rc)" = 0
fault redirect; run lock
check "a 307 to the manifest is followed: exit 0" test "$(rc)" = 0
check "the redirect target was asked" grep -q "GET .*/moved\|HEAD .*/moved" "$WORK/requests.log"

# 2. D6: a 200 answer is a manifest only if it has a manifest media type, parses as one,
#    fits in 4 MiB and matches its digest header. Never locked; --check says ERROR.
# says MODE TEXT: the status line for MODE contains TEXT
declare -A says=([portal]='"text/html", which is not an OCI or Docker manifest'
  [octet]='"application/octet-stream", which is not' [shape]='"schemaVersion" is not 2'
  [notjson]='not JSON' [mismatch]='does not match the SHA-256')
for m in portal octet shape notjson mismatch; do
  fault $m; run lock
  check "$m: exit 3" test "$(rc)" = 3
  check "$m: says why it is not a manifest" has out "${says[$m]}"
  check "$m: lock file unchanged" unchanged
done
fault portal; run lock --check
check "portal: lock --check exits 3, not 1" test "$(rc)" = 3
check "portal: lock --check is not CHANGED upstream" bash -c "! grep -q 'CHANGED' $WORK/out"
check "portal: lock --check says ERROR" has out "ERROR"
fault stream
/usr/bin/time -f '%M' -o "$WORK/rss" "$TD" lock >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "256 MiB streamed body: exit 3" test "$(rc)" = 3
check "256 MiB streamed body: says 4 MiB" has out "4 MiB"
check "256 MiB streamed body: lock file unchanged" unchanged
RSS=$(tail -n 1 "$WORK/rss")
check "256 MiB streamed body: under 64 MB RSS (saw $RSS KB)" test "$RSS" -lt 65536

# 3. D12: invalid UTF-8 in Content-Type is a clear refusal, never "internal error".
fault badctype; run lock
check "bad Content-Type bytes: exit 3" test "$(rc)" = 3
check "bad Content-Type bytes: no internal error" bash -c "! grep -q 'internal error' $WORK/err"
check "bad Content-Type bytes: escaped in the message" has out 'application/\xff\xfe'
check "bad Content-Type bytes: lock file unchanged" unchanged

# 4. D7: token realms are http(s) only (http only for a loopback registry); curl itself
#    is restricted to http and https, for redirects too.
fault realm_file; run lock
check "file:// realm: exit 3" test "$(rc)" = 3
check "file:// realm: refused as not https" has out "not https"
check "file:// realm: the file was not read (no \"HTTP 0\" answer)" bash -c "! grep -q 'HTTP 0' $WORK/out"
fault realm_dict; run lock
check "dict:// realm: exit 3" test "$(rc)" = 3
check "dict:// realm: no DICT connection was made" bash -c "! grep -v '^RAW \(HEAD\|GET\) \|^HEAD \|^GET ' $WORK/requests.log | grep -q ."
fault redirect_file; run lock
check "redirect to file://: exit 3, refused" test "$(rc)" = 3
fault loop; run lock
check "redirect loop: exit 3" test "$(rc)" = 3
check "redirect loop: says redirects" has out "redirect"

# 5. D15: a token with CR LF is refused; no injected header reaches the registry.
fault crlf_token; run lock
check "CRLF token: exit 3" test "$(rc)" = 3
check "CRLF token: refused" has out "token"
check "CRLF token: no injected header was sent" bash -c "! grep -q 'injected=yes' $WORK/requests.log"
check "CRLF token: lock file unchanged" unchanged

# 6. D14, D20: registry text is one line, escaped, short; two digests that disagree are refused.
fault escapes; run lock
check "escape sequences: exit 3" test "$(rc)" = 3
check "escape sequences: no ESC byte reaches the terminal" no_escape
check "escape sequences: the body stays on one line" has out 'red error'
check "escape sequences: the newline is escaped" grep -q 'red error.*\\nsecond line' "$WORK/out"
fault longdigest; run lock
check "10,000-char digest: exit 3" test "$(rc)" = 3
check "10,000-char digest: no line over 400 characters" short_lines
fault twodigests; run lock
check "two disagreeing digest headers: exit 3" test "$(rc)" = 3
check "two disagreeing digest headers: named" has out "disagree"
check "two disagreeing digest headers: lock file unchanged" unchanged
fault nochallenge; run lock
check "401 without a challenge: exit 3" test "$(rc)" = 3
check "401 without a challenge: no empty scheme" bash -c "! grep -q 'asks for  ' $WORK/out"
check "401 without a challenge: says so" has out "no WWW-Authenticate"
fault ratelimit; run lock
check "429: exit 3" test "$(rc)" = 3
check "429: mentions Retry-After" has out "Retry-After: 5"

# 7. D20: a vanished tag is a data problem on a plain lock (exit 2); drift for --check (1).
fault gone; run lock
check "GONE on lock: exit 2" test "$(rc)" = 2
check "GONE on lock: the registry's words" has out "MANIFEST_UNKNOWN"
check "GONE on lock: lock file unchanged" unchanged
run lock --check
check "GONE on lock --check: exit 1" test "$(rc)" = 1

# 8. D22: an overall deadline; a timeout is exit 4; --timeout is checked before any work.
fault hang
start=$SECONDS; run lock --timeout 2; took=$((SECONDS - start))
check "hanging registry with --timeout 2: exit 4" test "$(rc)" = 4
check "hanging registry with --timeout 2: gave up within 6 s (took $took s)" test "$took" -le 6
check "hanging registry: lock file unchanged" unchanged
check "hanging registry: says the time limit" has out "timed out"
run lock --check --timeout 1
check "hanging registry, lock --check --timeout 1: exit 4" test "$(rc)" = 4
# The deadline is for the whole run: with 2 families (11 base images), the images left when
# time is up are not asked at all, instead of 30 s each.
mkdir -p "$WORK/many"
cp "$ROOT/manifests/debian-cpu.json" "$ROOT/manifests/cuda-classic.json" "$WORK/many/"
start=$SECONDS; run lock --manifests "$WORK/many" --timeout 2; took=$((SECONDS - start))
check "11 base images on a hanging registry with --timeout 2: exit 4 within 6 s (took $took s)" \
  test "$(rc)" = 4 -a "$took" -le 6
check "the images left when time is up are not asked" has out "not sent: the time limit was used up"
for t in 0 -1 abc; do
  fault ok; run lock --timeout "$t"
  check "--timeout $t: exit 2" test "$(rc)" = 2
  check "--timeout $t: no request was made" test ! -s "$WORK/requests.log"
done

# 9. D18 (ports): a port outside 1..65535 is refused in mirrors and manifests.
fault ok; run lock --mirror docker.io=127.0.0.1:99999999
check "mirror port 99999999: exit 2" test "$(rc)" = 2
check "mirror port 99999999: says port" has err "port"
check "mirror port 99999999: no request was made" test ! -s "$WORK/requests.log"
mkdir -p "$WORK/bp/manifests"
sed 's|"image": "torchdock/debian-cpu"|"image": "evil.com:99999999999/x"|' "$ROOT/manifests/debian-cpu.json" \
  >"$WORK/bp/manifests/debian-cpu.json"
run lock --manifests "$WORK/bp/manifests"
check "manifest image port 99999999999: exit 2" test "$(rc)" = 2
check "manifest image port 99999999999: says port" has err "port 99999999999"
run render --manifests "$WORK/bp/manifests" --out "$WORK/bp/out"
check "manifest image port 99999999999: render refuses too" test "$(rc)" = 2

# 10. Platforms (issue 24): a manifest built for linux/amd64 and linux/arm64 needs a base whose
#     index lists both; the lock records each platform's manifest digest. The amd64-only
#     index, and a single manifest, are refused (exit 2) with the lock file unchanged.
mkdir -p "$WORK/mp/manifests"
python3 - "$WORK/p/manifests/debian-cpu.json" "$WORK/mp/manifests/debian-cpu.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
doc = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))
doc["platforms"] = ["linux/amd64", "linux/arm64"]
open(sys.argv[2], "w").write(json.dumps(doc, indent=2) + "\n")
PY
MLOCK="$WORK/mp/manifests/debian-cpu.lock.json"
fault ok; cp "$LOCK" "$MLOCK"; cp "$MLOCK" "$WORK/mlock.before"
run lock --manifests "$WORK/mp/manifests"
check "platforms amd64+arm64 on an index of linux/amd64 only: exit 2, naming what it lacks and lists" \
  bash -c "test $(rc) = 2 && grep -q 'its index has no linux/arm64 manifest (it lists linux/amd64); the manifest builds linux/amd64, linux/arm64' '$WORK/out' && grep -q 'lack.* a platform the manifest builds for' '$WORK/err'"
check "...and the lock file is unchanged" cmp -s "$MLOCK" "$WORK/mlock.before"
fault single; cp "$WORK/mlock.before" "$MLOCK"
run lock --manifests "$WORK/mp/manifests"
check "a single-platform manifest for two platforms: exit 2, saying an index is needed" \
  bash -c "test $(rc) = 2 && grep -q 'is a single-platform manifest, not an index' '$WORK/out' && cmp -s '$MLOCK' '$WORK/mlock.before'"
fault multiarch; cp "$WORK/mlock.before" "$MLOCK"
run lock --manifests "$WORK/mp/manifests"
check "an index of linux/amd64 and linux/arm64/v8 (and an attestation): exit 0, each platform's digest locked" \
  python3 - "$MLOCK" "$(rc)" <<'PY'
import json, sys
image = json.load(open(sys.argv[1]))["images"]["debian:bookworm"]
print(sys.argv[2], image)
ok = sys.argv[2] == "0" and image.get("platforms") == {"linux/amd64": "sha256:" + "ab" * 32,
                                                       "linux/arm64": "sha256:" + "cd" * 32}
sys.exit(0 if ok else 1)
PY
# 12. R3-9 (adversarial round 3): a wheel by URL is hashed by torchdock itself, not taken from
#     the manifest (uv echoes the URL's #sha256= back). Variant of the report's repro: the
#     manifest fixes the real hash of the wheel, but the file the server now gives differs by
#     one appended byte (the file changed upstream). Needs no network: the wheel comes from
#     a loopback http.server, and the refusal comes before uv runs.
mkdir -p "$WORK/wh/manifests" "$WORK/wh/files"
cp "$ROOT/tests/data/pypi/tiny-1.0-py3-none-any.whl" "$WORK/wh/files/"
FIXED=$(sha256sum "$WORK/wh/files/tiny-1.0-py3-none-any.whl" | cut -c1-64)
printf 'x' >>"$WORK/wh/files/tiny-1.0-py3-none-any.whl"
REAL=$(sha256sum "$WORK/wh/files/tiny-1.0-py3-none-any.whl" | cut -c1-64)
BYTES=$(stat -c %s "$WORK/wh/files/tiny-1.0-py3-none-any.whl")
python3 -c '
import functools, http.server, sys
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.command, self.path)); sys.stderr.flush()
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(H, directory=sys.argv[1]))
print(s.server_address[1], flush=True)
s.serve_forever()' "$WORK/wh/files" >"$WORK/wh/port" 2>"$WORK/wh/requests.log" &
WHEEL_SERVER=$!
trap 'kill "$SERVER" "$WHEEL_SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do [ -s "$WORK/wh/port" ] && break; sleep 0.1; done
WURL="http://127.0.0.1:$(cat "$WORK/wh/port")/tiny-1.0-py3-none-any.whl"
cat >"$WORK/wh/manifests/wh.json" <<JSON
{"schema": 1, "name": "wh", "image": "t/wh", "base": "os-pip", "wheel_index": "pypi",
 "torchaudio": false, "matrix": {"torch": ["2.11.0"], "cuda": ["cu130"], "os": ["debian12"]},
 "extensions": [{"name": "tiny", "wheel": {"url": "$WURL", "sha256": "$FIXED"}}]}
JSON
fault ok
run lock --manifests "$WORK/wh/manifests"
check "R3-9: lock refuses a wheel whose file is not the manifest's sha256 (exit 2, was $(rc))" test "$(rc)" = 2
check "R3-9: ...naming the URL, the computed hash and the manifest's" \
  has out "ERROR (wheel hash): the wheel \"$WURL\" ($BYTES bytes) has sha256 $REAL, but the manifest fixes $FIXED for tiny"
check "R3-9: ...and no lock file is written" test ! -e "$WORK/wh/manifests/wh.lock.json"
check "R3-9: torchdock downloaded the wheel itself" grep -q "^GET /tiny-1.0-py3-none-any.whl" "$WORK/wh/requests.log"
run lock --check --manifests "$WORK/wh/manifests"
check "R3-9: lock --check notices the file's real hash differs (exit 1, was $(rc))" test "$(rc)" = 1
check "R3-9: ...WHEEL HASH DIFFERS with both hashes" \
  bash -c "grep -qF 'WHEEL HASH DIFFERS: the wheel' '$WORK/out' && grep -qF '$REAL' '$WORK/out' && grep -qF '$FIXED' '$WORK/out'"
# The wheel gone from the server: not a hash problem, the set cannot be checked (NOT CHECKED;
# the exit is 1 here only because the family has no lock file yet).
rm "$WORK/wh/files/tiny-1.0-py3-none-any.whl"
run lock --check --manifests "$WORK/wh/manifests"
check "R3-9: a wheel that cannot be fetched is NOT CHECKED, never ok (exit $(rc))" \
  bash -c "test $(rc) != 0 && grep -qF 'NOT CHECKED: downloading the wheel' '$WORK/out' && grep -qF 'HTTP status 404' '$WORK/out'"

# 11. The Python set of each platform, hash-locked by uv against PyPI (network): torch 2.11.0,
#     whose linux/arm64 wheel carries CUDA 13.0 like its linux/amd64 one. The rendered
#     Dockerfile installs the set of the platform BuildKit builds (TARGETARCH).
mkdir -p "$WORK/gh/manifests"
cat >"$WORK/gh/manifests/gh.json" <<'JSON'
{"schema": 1, "name": "gh", "image": "t/gh", "base": "os-pip", "wheel_index": "pypi",
 "torchaudio": false, "matrix": {"torch": ["2.11.0"], "cuda": ["cu130"], "os": ["debian12"]},
 "platforms": ["linux/amd64", "linux/arm64"]}
JSON
fault multiarch
run lock --manifests "$WORK/gh/manifests"
if grep -q 'NOT FULLY LOCKED' "$WORK/out"; then
  skipped "per-platform Python sets: uv could not reach PyPI ($(grep -o 'NOT FULLY LOCKED.*' "$WORK/out" | head -1 | cut -c1-120))"
else
  check "lock: both platforms' Python sets locked (gh-2.11.0-cu130-debian12 and @linux/arm64)" \
    bash -c "test $(rc) = 0 && grep -q '^gh-2.11.0-cu130-debian12 .* locked' '$WORK/out' && grep -q '^gh-2.11.0-cu130-debian12@linux/arm64 .* locked' '$WORK/out'"
  check "the sets are resolved for x86_64 and for aarch64 wheels, and pin the same versions" \
    python3 - "$WORK/gh/manifests/gh.lock.json" <<'PY'
import json, sys
py = json.load(open(sys.argv[1]))["python"]
amd, arm = py["gh-2.11.0-cu130-debian12"], py["gh-2.11.0-cu130-debian12@linux/arm64"]
print(amd["inputs"]["platform"], arm["inputs"]["platform"], len(amd["packages"]), len(arm["packages"]))
pins = lambda s: {n: p["version"] for n, p in s["packages"].items()}
ok = (amd["inputs"]["platform"].startswith("x86_64-") and arm["inputs"]["platform"].startswith("aarch64-")
      and pins(amd) == pins(arm) and pins(arm)["torch"] == "2.11.0")
sys.exit(0 if ok else 1)
PY
  run render --manifests "$WORK/gh/manifests" --out "$WORK/gh/out"
  D="$WORK/gh/out/gh-2.11.0-cu130-debian12"
  check "render: requirements.amd64 and .arm64 lock files, the Dockerfile picks one by TARGETARCH" \
    bash -c "test $(rc) = 0 && test -s '$D/requirements.amd64.lock.txt' && test -s '$D/requirements.arm64.lock.txt' && grep -q 'requirements.\${TARGETARCH}.lock.txt' '$D/Dockerfile' && ! cmp -s '$D/requirements.amd64.lock.txt' '$D/requirements.arm64.lock.txt'"
  check "render: the multi-platform Dockerfile is hadolint-clean" hadolint --failure-threshold warning "$D/Dockerfile"
  check "render: one io.torchdock.python-set label serves both (same pins), io.torchdock.platforms names them" \
    bash -c "grep -q 'io.torchdock.python-set=\".*torch==2.11.0' '$D/Dockerfile' && grep -q 'io.torchdock.platforms=\"linux/amd64,linux/arm64\"' '$D/Dockerfile'"
fi
finish
