#!/usr/bin/env python3
"""Generates data/catalogs/torchdock.json: torchdock's own verdicts and errors as its build,
validate and doctor output print them, so explain answers every failure in torchdock's own
output.
* The verdicts, from the code that defines each ID (src/core/validate/check_catalog.cpp,
  src/core/diagnose/finding_catalog.cpp) as `torchdock checks --json` reads it out: a failing
  check's table row ("TD119  torch.imports  FAIL  ...") and a doctor finding's ("DR125  error
  torch is built for another Python  ...") get the check's or finding's what, why and fix.
* The errors ("torchdock: error: ..."), from torchdock's sources (src/**/*.cpp): every
  `Error{ErrorKind::K, "text" + value + "text"}`, its string literals kept and each other
  term a capture; their meanings from scripts/catalogs/meanings/torchdock.json.

Usage: gen_torchdock.py --binary build/dev/bin/torchdock [--src .] [--out data/catalogs]"""
import argparse, json, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402

SOURCES = {"check": "src/core/validate/check_catalog.cpp",
           "finding": "src/core/diagnose/finding_catalog.cpp"}


def code_chars(text, start=0):
    """(index, char, depth) of each character of C++ code from `start`, string literals
    skipped; depth counts the brackets open before it (a closer has its opener's depth)."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        else:
            if c in ")]}":
                depth -= 1
            yield i, c, depth
            if c in "([{":
                depth += 1
        i += 1


def closing(text, start):
    """The index of the bracket that closes the one open just before text[start]."""
    return next((i for i, c, d in code_chars(text, start) if d < 0), len(text))


def top_level_terms(expr, sep="+"):
    """EXPR split at the `sep` signs outside brackets and strings."""
    cuts = [i for i, c, d in code_chars(expr) if c == sep and d == 0]
    bounds = [-1] + cuts + [len(expr)]
    terms = [expr[a + 1:b].strip() for a, b in zip(bounds, bounds[1:])]
    return [t for t in terms if t]


def error_expressions(text):
    """The message expression of every Error{ErrorKind::K, EXPR} in a C++ file."""
    for m in re.finditer(r"Error\{ErrorKind::\w+,\s*", text):
        yield text[m.end():closing(text, m.end())]


def returned_strings(text, function):
    """The string literals `function` (a std::string function in this file) returns."""
    m = re.search(r"std::string " + function + r"\([^)]*\) \{", text)
    if not m:
        return []
    body = text[m.end():closing(text, m.end())]
    return ['"' + r + '"' for r in re.findall(r'return "((?:[^"\\]|\\.)*)";', body)]


def io_errors(text):
    """io_error("write", path, REASON) (src/engine/files.cpp) prints "cannot write PATH: REASON";
    a REASON of kind_of(mode) is each of the refusals kind_of returns."""
    for m in re.finditer(r"\bio_error\(", text):
        args = top_level_terms(text[m.end():closing(text, m.end())], sep=",")
        if len(args) == 3 and re.fullmatch(r'"\w+"', args[0]):
            head = f'"cannot {args[0][1:-1]} " + path + ": " + '
            reasons = (returned_strings(text, "kind_of") if args[2].startswith("kind_of(")
                       else [args[2]])
            for reason in reasons:
                yield head + reason


LITERALS = re.compile(r'^(?:std::string\(\s*)?((?:"(?:[^"\\]|\\.)*"\s*)+)\)?$')


def message_format(expr):
    """A printf-style format of one message expression: literals kept, other terms %s."""
    out = []
    for term in top_level_terms(expr):
        m = LITERALS.match(term)
        if m:
            parts = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))
            text = "".join(bytes(p, "utf-8").decode("unicode_escape") for p in parts)
            out.append(text.replace("%", "%%"))
        else:
            out.append("%s")
    return "".join(out)


def source_messages(src, version):
    found = []
    for root, dirs, files in os.walk(os.path.join(src, "src")):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".cpp"):
                continue
            path = os.path.join(root, name)
            with open(path) as fh:
                text = fh.read()
            rel = os.path.relpath(path, src)
            # every error is printed as one "torchdock: error: MESSAGE" line (app/output.cpp)
            if '"torchdock: error:"' in text:
                found.append(("torchdock: error: %s", f"torchdock {version} {rel}"))
            for expr in list(error_expressions(text)) + list(io_errors(text)):
                fmt = message_format(expr)
                if fmt.replace("%s", "").strip():
                    found.append((fmt, f"torchdock {version} {rel}"))
    return sorted(set(found))


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
    ap.add_argument("--src", default=os.path.join(os.path.dirname(__file__), "..", ".."))
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
    here = os.path.dirname(os.path.abspath(__file__))
    meanings = catalog_lib.load_meanings(os.path.join(here, "meanings", "torchdock.json"))
    errors, stats = catalog_lib.build_entries("torchdock", source_messages(a.src, version),
                                              meanings, "printf")
    entries += errors
    about = ("torchdock's own verdicts as build, validate and doctor print them (each check's "
             "and finding's what, why and fix, from the code that defines the ID) and its "
             "errors (from its sources)")
    gen = [f"torchdock {version}: `torchdock checks --json` and Error{{ErrorKind::...}} in src/ "
           "by scripts/catalogs/gen_torchdock.py"]
    stats["verdicts"] = len(entries) - len(errors)
    catalog_lib.write_catalog(a.out, "torchdock", about, gen, entries, stats)


if __name__ == "__main__":
    main()
