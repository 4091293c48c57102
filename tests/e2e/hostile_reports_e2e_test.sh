#!/usr/bin/env bash
# An image that answers for its own Python (its python3 prints a torch probe result full of
# markup, terminal controls and XML-illegal characters): the reports stay well formed and
# inert, and say whose code the evidence came from (../shared/reports/adversarial-2.md N1,
# N3, N4). JUnit is read with a real XML parser; the Markdown is rendered with a CommonMark
# renderer (PyPI markdown-it-py) and the HTML is checked for live markup.
# Usage: hostile_reports_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
WORK=$(mktemp -d /tmp/torchdock-hostile-e2e-XXXXXX)
export TORCHDOCK_CACHE_DIR=$WORK/cache
trap 'services_stop; /usr/bin/docker rmi -f tdhostile/fake:1 >/dev/null 2>&1; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }

# The fake interpreter's answer: every string an attacker controls carries markup.
python3 - "$WORK/answer.json" <<'PY'
import json, sys
evil = ('2.9.1<script>alert(1)</script><img src=https://evil.example/x.png>'
        '[click](https://evil.example) \x1b]8;;https://evil.example\x07 \u202e \ufffe\uffff \u061c | `x`')
data = {"torch": evil, "cuda": "12.8", "cudnn": 91002, "nccl": "2.27.5", "arch_list": ["sm_90"],
        "python": "3.11.2", "python_executable": "/usr/bin/python3</testcase><x>",
        "interpreters_tried": [evil], "site_dirs": ["/nonexistent"], "distributions": {},
        "distributed": {"backend": "gloo", "world_size": 2, "expected": 1, "observed": 1, "exact": True}}
line = {"probe": "torch", "schema": 1, "status": "pass", "reason": "", "data": data}
open(sys.argv[1], "w").write(json.dumps(line) + "\n")
PY
mkdir -p "$WORK/img"
cp "$WORK/answer.json" "$WORK/img/answer.json"
cat >"$WORK/img/Dockerfile" <<DF
FROM $TD_REGISTRY/library/debian:bookworm
COPY answer.json /answer.json
RUN printf '#!/bin/sh\ncat /answer.json\n' > /usr/bin/python3 && chmod +x /usr/bin/python3
LABEL io.torchdock.torch="2.9.1"
DF
DOCKER_BUILDKIT=1 /usr/bin/docker build -q --network=host -t tdhostile/fake:1 "$WORK/img" >"$WORK/build.log" 2>&1
check "built the image that fakes its own python" test $? = 0

"$TD" validate tdhostile/fake:1 --probes "$PROBES" --json="$WORK/v.json" --junit="$WORK/v.xml" \
  --markdown="$WORK/v.md" --sarif="$WORK/v.sarif" >"$WORK/out" 2>&1
echo $? >"$WORK/rc"
# Its fake torch reports a version other than its label promises, and probe-record finds no
# site directory to check: a failure (exit 1), whatever the image says of itself.
check "validate fails the image (exit $(cat "$WORK/rc"))" test "$(cat "$WORK/rc")" = 1
check "JUnit is well-formed XML 1.0 (Python's XML parser reads it)" \
  python3 -c "import xml.etree.ElementTree as E, sys; E.parse(sys.argv[1])" "$WORK/v.xml"
check "the JSON report is valid and names the image ID" \
  python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert d['images'][0]['image_id'].startswith('sha256:')" "$WORK/v.json"
check "TD119's evidence is named: the image's own python, checked by torchdock's static reader" \
  python3 -c "import json, sys; d = json.load(open(sys.argv[1])); c = [c for c in d['images'][0]['checks'] if c['id'] == 'TD119'][0]; assert c['evidence_from'] == ['image-python', 'torchdock'], c" "$WORK/v.json"
check "...and TD119 fails: the files do not back the fake python's answer" \
  python3 -c "import json, sys; d = json.load(open(sys.argv[1])); c = [c for c in d['images'][0]['checks'] if c['id'] == 'TD119'][0]; assert c['status'] == 'fail' and 'not backed' in c['message'], c" "$WORK/v.json"
check "TD112's evidence is torchdock's own static reader" \
  python3 -c "import json, sys; d = json.load(open(sys.argv[1])); c = [c for c in d['images'][0]['checks'] if c['id'] == 'TD112'][0]; assert c['evidence_from'] == ['torchdock'], c" "$WORK/v.json"
if python3 -c 'import markdown_it' 2>/dev/null; then
  python3 - "$WORK/v.md" "$WORK/v.html" <<'PY'
import sys
from markdown_it import MarkdownIt
html = MarkdownIt("commonmark").render(open(sys.argv[1]).read())
open(sys.argv[2], "w").write(html)
PY
  check "the Markdown renders with no script, image or link from the image" \
    bash -c "! grep -qiE '<script|<img|<a |href=' '$WORK/v.html'"
  check "the Markdown still shows the text (escaped)" grep -q 'alert(1)' "$WORK/v.html"
else
  skipped "markdown-it-py is not installed (scripts/install-deps.sh installs it)"
fi
check "SARIF is valid SARIF 2.1.0 (the OASIS schema)" \
  python3 "$ROOT/tests/e2e/lib/sarif_schema_check.py" "$WORK/v.sarif"
check "...and its texts, decoded, hold no control character, ESC or bidi override" python3 - "$WORK/v.sarif" <<'PY'
import json, sys
def strings(x):
    if isinstance(x, dict): return [s for v in x.values() for s in strings(v)]
    if isinstance(x, list): return [s for v in x for s in strings(v)]
    return [x] if isinstance(x, str) else []
texts = strings(json.load(open(sys.argv[1])))
bad = [t for t in texts if any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 or c in "\u202e\u061c" for c in t)]
assert not bad, bad[:3]
assert any("alert(1)" in t for t in texts), "the image's text is still shown"
PY
check "the terminal table shows no raw ESC or bidi override" \
  bash -c "! grep -qP '\x1b|\xe2\x80\xae' '$WORK/out'"
finish
