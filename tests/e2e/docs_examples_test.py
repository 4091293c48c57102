#!/usr/bin/env python3
"""Docs that cannot drift: every `$ torchdock ...` example in README.md and docs/*.md is run
and its output compared with the output shown, or listed as skipped with the reason.

Rules: an example's output is the lines after its `$` line up to the next `$` line or the end
of its ```console block; `...` stands for any number of lines; a trailing `# comment` on the
command is not part of it. A file named "`/tmp/NAME/FILE`:" at the end of a line, followed by a ```json block is
written before the examples run. Paths under /tmp/ are moved under this test's scratch
directory, in commands and expected output alike. Commands run in a scratch copy of the
project's manifests/ and dockerfiles/, in document order, so one example sees what the
previous ones did.

Usage: docs_examples_test.py TORCHDOCK
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TD = os.path.abspath(sys.argv[1])
# Commands that need more than the binary and its data; why they are not run here.
NEEDS = {
    "build": "needs the Docker engine (e2e_build covers it)",
    "lock": "needs the registry and the package index (e2e_build_lock covers it)",
    "validate": "needs the engine and an image (e2e_validate, e2e_real_images cover it)",
    "doctor": "needs the engine and the test suites' images (e2e_diagnosis covers it)",
    "diff": "needs fingerprints doctor writes from test images (e2e_diagnosis covers it)",
    "preflight": "needs a test suite's image (e2e_diagnosis covers it)",
    "kb": "needs the package index (e2e_kb_refresh covers it)",
    "node-check": "needs the engine and an image (e2e_fleet_slurm covers it)",
    "fleet": "needs a Slurm cluster and engines (e2e_fleet_slurm covers it)",
    "allreduce": "needs a Slurm cluster and an image with torch (e2e_fleet_slurm covers it)",
    "allreduce-rank": "runs as a task of an srun step (e2e_fleet_slurm covers it)",
}
passed = failed = skipped = 0


def report(kind, name, detail=""):
    global passed, failed, skipped
    word = {"ok": "ok  ", "fail": "FAIL", "skip": "skip"}[kind]
    print(f"{word} - {name}" + (f": {detail}" if detail else ""))
    if kind == "ok":
        passed += 1
    elif kind == "fail":
        failed += 1
    else:
        skipped += 1


def examples(path):
    """(line number, command, expected lines) of every `$` line in a console block, and the
    files the document shows, in document order."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i, pending_file = [], 0, None
    while i < len(lines):
        m = re.search(r"`(/tmp/[^`]+)`:$", lines[i].strip())
        if m:
            pending_file = m.group(1)
        elif lines[i].startswith("```json") and pending_file:
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            out.append(("file", i + 1, pending_file, "\n".join(lines[i + 1:j]) + "\n"))
            pending_file, i = None, j
        elif lines[i].startswith("```console"):
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            block, k = lines[i + 1:j], 0
            while k < len(block):
                if block[k].startswith("$ "):
                    cmd = re.sub(r"\s+#.*$", "", block[k][2:]).strip()
                    k2 = k + 1
                    while k2 < len(block) and not block[k2].startswith("$ "):
                        k2 += 1
                    expected = [l for l in block[k + 1:k2]]
                    while expected and expected[-1] == "":
                        expected.pop()
                    out.append(("cmd", i + 2 + k, cmd, expected))
                    k = k2
                else:
                    k += 1
            i = j
        elif lines[i].strip() and not lines[i].startswith("`"):
            pending_file = None
        i += 1
    return out


def matches(expected, actual):
    """Every expected line in order; `...` matches any run of lines."""
    def go(e, a):
        if e == len(expected):
            return a == len(actual)
        if expected[e].strip() == "...":
            return any(go(e + 1, k) for k in range(a, len(actual) + 1))
        return a < len(actual) and expected[e].rstrip() == actual[a].rstrip() and go(e + 1, a + 1)
    return go(0, 0)


def main():
    work = tempfile.mkdtemp(prefix="torchdock-docs-")
    try:
        docs = [os.path.join(ROOT, "README.md")]
        docs_dir = os.path.join(ROOT, "docs")
        if os.path.isdir(docs_dir):
            docs += sorted(os.path.join(docs_dir, f) for f in os.listdir(docs_dir) if f.endswith(".md"))
        for doc in docs:
            rel = os.path.relpath(doc, ROOT)
            cwd = os.path.join(work, rel.replace("/", "_") + ".d")
            os.makedirs(cwd)
            for d in ("manifests", "dockerfiles"):
                shutil.copytree(os.path.join(ROOT, d), os.path.join(cwd, d))
            tmp = os.path.join(work, "tmp")
            moved = lambda s: s.replace("/tmp/", tmp + "/")
            for kind, line, what, body in examples(doc):
                if kind == "file":
                    os.makedirs(os.path.dirname(moved(what)), exist_ok=True)
                    open(moved(what), "w").write(body)
                    continue
                name = f"{rel}:{line}: $ {what}"
                argv = shlex.split(what)
                if argv[0] != "torchdock":
                    report("skip", name, "not a torchdock command (a benchmark: bench/)")
                    continue
                sub = next((a for a in argv[1:] if not a.startswith("-")), "")
                if sub in NEEDS:
                    report("skip", name, NEEDS[sub])
                    continue
                expected = [moved(l) for l in body]
                # `render --check` shown with stale files: make them stale as the text says.
                for l in expected:
                    m = re.match(r"stale:\s+(\S+)", l)
                    if m and sub == "render":
                        with open(os.path.join(cwd, m.group(1)), "a") as f:
                            f.write("# edited by hand\n")
                r = subprocess.run([TD] + [moved(a) for a in argv[1:]], cwd=cwd,
                                   capture_output=True, text=True, timeout=120)
                actual = (r.stdout + r.stderr).rstrip("\n").split("\n") if (r.stdout + r.stderr) else []
                if r.returncode not in (0, 1, 2):
                    report("fail", name, f"exit {r.returncode}")
                elif not expected:
                    report("ok", name, f"exit {r.returncode}, output not shown")
                elif matches(expected, actual):
                    report("ok", name)
                else:
                    report("fail", name, "output differs; got:\n    " + "\n    ".join(actual[:12]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
