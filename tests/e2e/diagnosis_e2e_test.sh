#!/usr/bin/env bash
# End to end: doctor, diff, explain and preflight against a real engine, the Debian CPU
# image and the purpose-built images (tests/e2e/lib/test_images.sh), and this host (CUDA
# libraries, no driver). Usage: diagnosis_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
source "$ROOT/tests/e2e/lib/test_images.sh"
WORK=$(mktemp -d /tmp/torchdock-diagnosis-e2e-XXXXXX)
trap 'services_stop; rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
# finding FILE ID : exit 0 when the fingerprint FILE has that finding
finding() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if any(f['id']=='$2' for f in d['findings']) else 1)"; }
export TORCHDOCK_PROBES="$PROBES"

# --- doctor --host on this machine: CUDA libraries, no driver ------------------------------
start=$(date +%s.%N)
run doctor --host --json="$WORK/host.json"
echo "# figure: doctor --host as a whole process: $(echo "$(date +%s.%N) - $start" | bc) s"
check "doctor --host exits 0 (no error findings)" test "$(rc)" = 0
check "doctor --host: no driver is reported as such" finding "$WORK/host.json" DR101
check "doctor --host: the CUDA runtime found is reported" \
  python3 -c "import json,sys; d=json.load(open('$WORK/host.json')); sys.exit(0 if d['cuda_runtime'] and d['cuda_runtime']['version'].startswith('13.') else 1)"
check "doctor --host: cuDNN and NCCL versions are read" \
  python3 -c "import json,sys; d=json.load(open('$WORK/host.json')); sys.exit(0 if d['cudnn_loader']['version'] and d['nccl_loader']['version'] else 1)"
check "doctor --host: no driver means no GPUs" \
  python3 -c "import json,sys; d=json.load(open('$WORK/host.json')); sys.exit(0 if d['gpus']==[] and d['driver']['version'] is None else 1)"

services_start || { echo "FAIL - services did not start"; echo "$pass passed, $((fail + 1)) failed"; exit 1; }
build_test_images "$WORK"
check "built the purpose-built images" test $? = 0
mkdir -p "$WORK/cpu/manifests" && cp "$ROOT/manifests/debian-cpu.json" "$WORK/cpu/manifests/"
(cd "$WORK/cpu" && "$TD" lock --mirror "docker.io=$TD_REGISTRY" >/dev/null && "$TD" render --out dockerfiles >/dev/null &&
 "$TD" build --mirror "docker.io=$TD_REGISTRY" >"$WORK/cpu/build.out" 2>&1)
check "built the Debian CPU image" test $? = 0

# --- doctor --image ----------------------------------------------------------------------------
run doctor --image torchdock/debian-cpu:debian12 --json="$WORK/cpu.json"
check "doctor on the Debian CPU image exits 0" test "$(rc)" = 0
check "...reports Debian's torch" python3 -c "import json,sys; d=json.load(open('$WORK/cpu.json')); sys.exit(0 if d['torch']['version']=='1.13.0a0' else 1)"
check "...reports the small /dev/shm of a default run" finding "$WORK/cpu.json" DR110
run doctor --image torchdock-test/cudnn-no-runtime --json="$WORK/broken.json"
check "doctor on the cuDNN-without-runtime image exits 1" test "$(rc)" = 1
check "...names the finding DR114" finding "$WORK/broken.json" DR114
check "...and the missing soname" has out "libcudart.so.13"
run doctor --image torchdock-test/cudnn-two-copies --json="$WORK/two.json"
# Its second copy is the same cuDNN under a file name that says 9.1.0: by content it is one
# version twice, listed as a duplicate, not reported as two versions (DR105).
check "doctor on the two-cuDNN image lists both copies with the version each reports" python3 -c "
import json, sys
d = json.load(open('$WORK/two.json'))
copies = [c for dup in d['duplicates'] if dup['name'] == 'cudnn' for c in dup['copies']]
sys.exit(0 if len(copies) == 2 and len({c['content_version'] for c in copies}) == 1 else 1)"
check "...and does not call them two versions (no DR105)" bash -c "! grep -q DR105 '$WORK/out'"
run doctor --image torchdock-test/cuda13-healthy --json="$WORK/healthy.json"
check "doctor on the healthy image has no error finding" test "$(rc)" = 0
run doctor --image no-such/image:1
check "doctor on a missing image exits 2 with one line" bash -c "test $(rc) = 2 && test \$(wc -l <'$WORK/err') = 1"
run doctor
check "doctor needs --host or --image" test "$(rc)" = 2

# --- diff ------------------------------------------------------------------------------------
run diff --json "$WORK/healthy.json" "$WORK/broken.json"
check "diff exits 1 when the fingerprints differ" test "$(rc)" = 1
check "diff puts the cause (the CUDA runtime) first" \
  python3 -c "import json,sys; d=json.load(open('$WORK/out')); sys.exit(0 if d['differences'][0]['path']=='cuda_runtime.version' else 1)"
run diff "$WORK/healthy.json" "$WORK/healthy.json"
check "diff of a fingerprint with itself: no differences, exit 0" bash -c "test $(rc) = 0 && grep -q 'no differences' '$WORK/out'"
# The Debian CPU image against a CUDA image: the answer first, a short screen, the rest counted.
run diff --json "$WORK/cpu.json" "$WORK/healthy.json"
cp "$WORK/out" "$WORK/cpu-vs-cuda.json"
run diff "$WORK/cpu.json" "$WORK/healthy.json"
echo "# figure: diff CPU image vs CUDA image: $(python3 -c "import json; print(json.load(open('$WORK/cpu-vs-cuda.json'))['summary'])"), $(wc -l <"$WORK/out") lines on screen"
check "diff CPU image vs CUDA image: exit 1, one screen (at most 20 lines)" \
  bash -c "test $(rc) = 1 && test \$(wc -l <'$WORK/out') -le 20"
check "...the first line is the answer: the CUDA runtime" \
  bash -c "head -1 '$WORK/out' | grep -q 'the most likely to break a GPU job: the CUDA runtime differs (cuda_runtime.version: (absent) vs 13.0)'"
check "...the first five rows are CUDA, cuDNN, NCCL or torch differences" python3 - "$WORK/out" <<'PY'
import sys
import re
rows = [l.split() for l in open(sys.argv[1]) if re.match(r"\d+  ", l)]  # "RANK  CATEGORY ..."
assert [r[1] for r in rows[:5]] and all(r[1] in ("cuda", "cudnn", "nccl", "torch", "driver", "arch") for r in rows[:5]), rows[:5]
PY
check "...rows shown plus the counts of the rest add up to the --json total" python3 - "$WORK/out" "$WORK/cpu-vs-cuda.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
report = json.load(open(sys.argv[2]))
shown = sum(1 for l in text.splitlines() if re.match(r"\d+  ", l))
rest = re.search(r"^and (\d+) more not shown: (.*) \(--all", text, re.M)
counts = {c: int(n) for n, c in re.findall(r"(\d+) (\w+)", rest.group(2))}
total = report["summary"]["total"]
assert int(text.split()[0]) == total == len(report["differences"]) == shown + int(rest.group(1)), (shown, rest.group(1), total)
assert sum(counts.values()) == int(rest.group(1)) and counts.get("cosmetic", 0) == report["summary"]["by_category"]["cosmetic"], counts
PY
run diff "$WORK/cpu.json" "$WORK/healthy.json" --only cosmetic --top 3
check "diff --only cosmetic --top 3: three cosmetic rows" \
  bash -c "test \$(grep -cE '^[0-9]+  +cosmetic ' '$WORK/out') = 3 && test \$(grep -cE '^[0-9]+  ' '$WORK/out') = 3"
run diff "$WORK/cpu.json" "$WORK/healthy.json" --only cudaa
check "diff --only with an unknown category: exit 2 with did-you-mean" bash -c "test $(rc) = 2 && grep -q 'did you mean cuda' '$WORK/err'"
run diff "$WORK/cpu.json" "$WORK/healthy.json" --top -1
check "diff --top -1: exit 2" test "$(rc)" = 2
# Lists are matched by identity: the same fingerprint with every list reversed is no difference.
python3 -c "
import json, sys
def rev(x):
    if isinstance(x, dict): return {k: (v if k == 'arch_list' else rev(v)) for k, v in x.items()}
    if isinstance(x, list): return [rev(v) for v in reversed(x)]
    return x
json.dump(rev(json.load(open(sys.argv[1]))), open(sys.argv[2], 'w'))" "$WORK/cpu.json" "$WORK/cpu-reversed.json"
run diff "$WORK/cpu.json" "$WORK/cpu-reversed.json"
check "diff of a fingerprint with its lists reversed (findings, libraries, kernels): no differences" \
  bash -c "test $(rc) = 0 && grep -q 'no differences' '$WORK/out'"
echo '{"not": "a fingerprint"}' >"$WORK/bad.json"
run diff "$WORK/bad.json" "$WORK/healthy.json"
check "diff of a non-fingerprint exits 2" test "$(rc)" = 2

# --- preflight -----------------------------------------------------------------------------
run preflight torchdock-test/cuda13-healthy --driver 580.95.05 --gpu H100,A100
check "preflight: CUDA 13 image on driver 580.95.05 with H100 and A100: yes" bash -c "test $(rc) = 0 && grep -q ': YES' '$WORK/out'"
run preflight torchdock-test/cuda13-healthy --driver 535.104.05 --gpu "RTX 4090"
check "preflight: CUDA 13 image, driver 535, RTX 4090: no (forward compat is data-center only)" \
  bash -c "test $(rc) = 1 && grep -q 'does not work on GeForce/RTX' '$WORK/out'"
run preflight torchdock-test/cuda13-healthy --driver 580.95.05 --gpu V100
check "preflight: CUDA 13 image on a V100: no" bash -c "test $(rc) = 1 && grep -q 'V100' '$WORK/out'"
check "preflight gives the run flags" has out "--ipc=host"
run preflight torchdock-test/cuda13-healthy --gpu H100
check "preflight without a driver exits 2" test "$(rc)" = 2

# --- explain ------------------------------------------------------------------------------
cat >"$WORK/torch-import.log" <<'LOG'
2026-11-29 10:12:01 INFO starting trainer rank=0
Traceback (most recent call last):
  File "/workspace/train.py", line 3, in <module>
    import torch
  File "/opt/venv/lib/python3.10/site-packages/torch/__init__.py", line 237, in <module>
    from torch._C import *  # noqa: F403
ImportError: libcudart.so.13: cannot open shared object file: No such file or directory
LOG
start=$(date +%s.%N)
run explain "$WORK/torch-import.log"
echo "# figure: explain as a whole process: $(echo "$(date +%s.%N) - $start" | bc) s"
check "explain names a missing libcudart with the version from the log" bash -c "test $(rc) = 0 && grep -q 'EX101' '$WORK/out' && grep -q 'libcudart.so.13' '$WORK/out'"
check "explain quotes the log line it matched" has out "L7: ImportError: libcudart.so.13"
"$TD" explain - <"$WORK/torch-import.log" >"$WORK/out" 2>"$WORK/err"
check "explain reads standard input" has out "EX101"
# With the fingerprint of the image whose cuDNN needs libcudart.so.13: the cause is confirmed
# only where the library is really missing.
run explain "$WORK/torch-import.log" --fingerprint "$WORK/healthy.json"
check "a fingerprint where libcudart.so.13 loads rules the cause out" has out "ruled out"
printf 'RuntimeError: CUDA error: no kernel image is available for execution on the device\n' >"$WORK/kernel.log"
run explain "$WORK/kernel.log"
check "explain: no kernel image" has out "EX110"
printf 'all good\nepoch 3 loss 0.12\n' >"$WORK/fine.log"
run explain "$WORK/fine.log"
check "an unknown log is said plainly, exit 1" bash -c "test $(rc) = 1 && grep -q 'does not guess' '$WORK/err'"
run explain /nonexistent.log
check "a missing log file exits 2" test "$(rc)" = 2

# Logs as people paste them: progress bars that end lines with CR only, CRLF, several failures.
python3 -c "
import sys
bars = ''.join('Downloading shards: %d%%|#### | 2/5\r' % (i % 100) for i in range(2000))
sys.stdout.write(bars + 'ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\r')
" >"$WORK/cr-only.log"
run explain "$WORK/cr-only.log"
check "explain finds an error after 2000 CR-only progress lines" bash -c "test $(rc) = 0 && grep -q 'EX101' '$WORK/out' && grep -q 'L2001:' '$WORK/out'"
printf 'nothing\rto see\rhere\r' >"$WORK/cr-none.log"
run explain "$WORK/cr-none.log"
check "explain counts CR-only lines when nothing is known (3 lines read)" has err "(3 lines read)"
printf 'NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory\r\n[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\r\n' >"$WORK/two.log"
run explain --json "$WORK/two.log"
check "two failures in one CRLF log: the root cause first, the timeout after, each with its family" \
  python3 -c "import json,sys; d=json.load(open('$WORK/out')); e=d['explanations']; sys.exit(0 if [x['id'] for x in e]==['EX601','EX604'] and e[0]['family']=='nccl' and d['lines_read']==2 else 1)"
# Streaming: a 256 MiB log through a pipe stays in bounded memory.
python3 - "$TD" "$WORK" <<'PY'
import os, resource, subprocess, sys
td, work = sys.argv[1], sys.argv[2]
line = b"2024-06-01 12:00:00,000 [rank3]: step 1 loss 2.3456 lr 3.0e-04 tokens/s 182345.6\n"
p = subprocess.Popen([td, "explain", "-"], stdin=subprocess.PIPE, stdout=open(os.path.join(work, "big.out"), "wb"), stderr=subprocess.DEVNULL)
chunk = line * (1 << 14)
for _ in range((256 << 20) // len(chunk)):
    p.stdin.write(chunk)
p.stdin.write(b"OSError: libnccl.so.2: cannot open shared object file: No such file or directory\n")
p.stdin.close()
p.wait()
rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
open(os.path.join(work, "big.rss"), "w").write(str(rss_kib))
PY
echo "# figure: explain of a 256 MiB piped log: peak RSS $(cat "$WORK/big.rss") KiB"
check "a 256 MiB piped log: the error at the end is found" grep -q EX103 "$WORK/big.out"
check "a 256 MiB piped log stays under 64 MiB RSS" test "$(cat "$WORK/big.rss")" -lt 65536

finish
