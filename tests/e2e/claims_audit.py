#!/usr/bin/env python3
"""Every place the code reads what an image says of itself, and why it may.

An image's labels and config (architecture, variant, os, env, entrypoint, cmd, user) are
claims (ARCHITECTURE.md "Who may say what"): they may make a check expect something, never
decide a pass, waive, or choose a tier. This test lists every read of an `ImageInfo` claim
field in src/ (the engine's image inspect is the only way they enter torchdock) and compares
the list with tests/data/claim_reads.json, where each read is entered with the check or
comparison that holds it to evidence. A read that is not entered, or an entry whose read is
gone, fails the test naming file, line and field: a new use of a claim has to be looked at.

    claims_audit.py            check
    claims_audit.py --list     print the reads found (to write new entries)
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = ROOT / "tests/data/claim_reads.json"
FIELDS = ("labels", "architecture", "variant", "os", "env", "entrypoint", "cmd", "user")
# An ImageInfo is named `info` (a Result or optional of one: info.value(), *info, info->) or
# `image_info` wherever the code holds one; docker_api.cpp builds it from the engine's answer.
READ = re.compile(
    r"\b(?:image_)?info(?:\.value\(\))?\s*(?:->|\.)\s*(" + "|".join(FIELDS) + r"|platform\(\))"
    r"(?![\w(])|\b(?:image_)?info(?:\.value\(\))?\s*(?:->|\.)\s*(platform)\(\)")
SKIP = {"src/engine/docker_api.cpp"}


def reads():
    found = {}
    for path in sorted((ROOT / "src").rglob("*.cpp")):
        rel = str(path.relative_to(ROOT))
        if rel in SKIP:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//")[0]
            for m in READ.finditer(code):
                field = m.group(1) or m.group(2)
                field = "platform" if field.startswith("platform") else field
                found.setdefault(rel, {}).setdefault(field, []).append(n)
    return found


def main():
    found = reads()
    if "--list" in sys.argv:
        for rel, fields in found.items():
            for field, lines in fields.items():
                print(f"{rel} {field} x{len(lines)} (lines {', '.join(map(str, lines))})")
        return 0
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    problems = []
    for rel, fields in found.items():
        for field, lines in fields.items():
            entry = table.get(rel, {}).get(field)
            if entry is None:
                problems.append(f"{rel}:{lines[0]}: reads the image's `{field}` ({len(lines)} "
                                f"place(s)), and {TABLE.relative_to(ROOT)} does not say why it may")
            elif entry.get("count") != len(lines):
                problems.append(f"{rel}: reads the image's `{field}` in {len(lines)} place(s) "
                                f"(lines {', '.join(map(str, lines))}), "
                                f"{TABLE.relative_to(ROOT)} says {entry.get('count')}")
            elif not entry.get("held_by", "").strip():
                problems.append(f"{rel} `{field}`: the entry names no check or comparison")
    for rel, fields in table.items():
        if rel.startswith("_"):
            continue
        for field in fields:
            if field not in found.get(rel, {}):
                problems.append(f"{rel}: {TABLE.relative_to(ROOT)} lists a read of `{field}` "
                                "that is gone: remove the entry")
    total = sum(len(lines) for fields in found.values() for lines in fields.values())
    for p in problems:
        print("FAIL:", p)
    print(f"{total} reads of image claims in {len(found)} files; "
          f"{len(problems)} not accounted for")
    print(f"{1 if not problems else 0} passed, {1 if problems else 0} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
