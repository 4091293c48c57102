#!/usr/bin/env python3
"""Generates data/catalogs/torchdock.json: torchdock's own verdicts as its build, validate and
doctor output print them, from the code that defines each ID (src/core/validate/
check_catalog.cpp, src/core/diagnose/finding_catalog.cpp) as `torchdock checks --json` reads
it out. A failing check's table row ("TD119  torch.imports  FAIL  ...") and a doctor finding's
("DR125  error  torch is built for another Python  ...") get the check's or finding's own
what, why and fix, so explain answers every failure in torchdock's own output.

Usage: gen_torchdock.py --binary build/dev/bin/torchdock [--out data/catalogs]"""
import argparse, json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402

SOURCES = {"check": "src/core/validate/check_catalog.cpp",
           "finding": "src/core/diagnose/finding_catalog.cpp"}


def literal(text):
    return text.replace("{", "{{").replace("}", "}}")


def sentence(text):
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def entries_of(reference, version):
    out = []
    for e in reference["entries"]:
        kind, rid = e["kind"], e["id"]
        if kind not in SOURCES:
            continue
        source = f"torchdock {version} {SOURCES[kind]}"
        if kind == "check":
            name = e["title"]
            patterns = [f"{rid} {literal(name)} FAIL{{detail*}}", f"{rid} {literal(name)} ERROR{{detail*}}"]
            title = f"torchdock validate: check {rid} ({name}) failed"
            cause = (f"validate's check {rid} ({name}) failed: it requires that {e['what']}. "
                     f"{sentence(e['why']).capitalize() if e['why'][:1].islower() else sentence(e['why'])} "
                     f"It reads {e['evidence']}.[[ The row says:{{detail}}]]")
        else:
            severity = e["details"].rsplit(" ", 1)[-1]
            if severity not in ("error", "warning"):
                continue  # an info finding is not a failure
            patterns = [f"{rid} {severity} {literal(e['title'])}"]
            title = f"torchdock doctor: {e['title']} ({rid})"
            cause = (f"doctor's finding {rid} ({severity}): {e['what']}. "
                     f"{sentence(e['why'])}")
        fix = (f"{sentence(e['fix'])} `torchdock checks {rid}` (docs/checks.md#{rid.lower()}) "
               f"says what it reads and how to waive it where that is meant.")
        out.append({"id": f"torchdock/{rid}", "title": title, "rank": 60, "patterns": patterns,
                    "cause": literal(cause).replace("{{detail}}", "{detail}"), "fix": literal(fix),
                    "source": [source]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "data",
                                                  "catalogs"))
    a = ap.parse_args()
    reference = json.loads(subprocess.run([a.binary, "checks", "--json"], check=True,
                                          capture_output=True, text=True).stdout)
    # "torchdock 0.42.0 (commit abc)": the version and, when given, the commit
    words = subprocess.run([a.binary, "--version"], check=True, capture_output=True,
                           text=True).stdout.split()
    version = words[1] if len(words) > 1 else "unknown"
    entries = entries_of(reference, version)
    about = ("torchdock's own verdicts as build, validate and doctor print them: each check's "
             "and finding's what, why and fix, from the code that defines the ID")
    gen = [f"torchdock {version}: `torchdock checks --json` by scripts/catalogs/gen_torchdock.py"]
    catalog_lib.write_catalog(a.out, "torchdock", about, gen, entries,
                              {"entries": len(entries)})


if __name__ == "__main__":
    main()
