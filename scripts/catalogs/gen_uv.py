#!/usr/bin/env python3
"""Generates explain's message catalog of uv (data/catalogs/uv.json) from uv's Rust sources.

    # the `fetch` tool's snapshot of github:astral-sh/uv, exported at a release tag:
    git --git-dir=/work/.mirror/astral-sh+uv/repo archive 0.12.5 crates | tar -x -C /tmp/uv-0.12.5
    python3 scripts/catalogs/gen_uv.py --src /tmp/uv-0.12.5 --version 0.12.5 \
        [--commit C] --out data/catalogs
(a uv sdist from PyPI holds the same crates/ directory.)

--src is a tree holding uv's crates/ (a git checkout also gives `git describe` / the commit).
The crates' src/ files are read as text (never tests/, `#[cfg(test)]` modules, uv-dev,
uv-bench, uv-test, uv-macros, uv-trampoline*, uv-windows) and these error sites taken, with
their literal (raw or escaped) format string:
  #[error("...")] attributes of thiserror enums/structs (not #[error(transparent)]);
  anyhow!("...") / bail!("...") (also anyhow::...), .context("...") and
  .with_context(|| format!("...")) (what uv prints as "error: ..." / "Caused by: ...");
  write!(f, "...") / f.write_str("...") of Display impls of *Error types, of error.rs files and
  of the
  resolver's PubGrub report (uv-resolver/src/pubgrub/report.rs, which also gives the
  "Because ... we can conclude that ..." format! strings); DistErrorKind's texts are taken in
  the form uv prints them: "Failed to download `{dist}`" ("{kind} `{dist}`").
Never warn_user!, debug!, trace! or info! texts.
"""
import argparse, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_CRATES = {"uv-dev", "uv-bench", "uv-test", "uv-macros", "uv-trampoline",
               "uv-trampoline-builder", "uv-windows", "uv-performance-memory-allocator"}

SITE = re.compile(
    r"#\[error\(\s*(?=r?#*\")"                                   # thiserror
    r"|\b(?:anyhow::)?(?:anyhow|bail)!\(\s*(?=r?#*\")"           # anyhow
    r"|\.(?:context|wrap_err)\(\s*(?=r?#*\")"                    # .context("...")
    r"|\b(?:io::)?Error::new\(\s*[\w:]+,\s*format!\(\s*(?=r?#*\")"   # io::Error::new(kind, format!)
    r"|\.with_context\(\s*\|\|\s*(?:format!\(\s*)?(?=r?#*\")"     # .with_context(|| format!(..))
)
DISPLAY_SITE = re.compile(r"\b(?:write|writeln)!\(\s*f\s*,\s*(?=r?#*\")"
                          r"|\bf\.write_str\(\s*(?=r?#*\")")
IMPL_DISPLAY = re.compile(r"\bimpl\b[^{;]*?\bfor\s+([A-Za-z_][\w:]*)")
ERROR_TYPE = re.compile(r"Error|NotFound")
REPORT_FORMAT = re.compile(r"\bformat!\(\s*(?=r?#*\")")


def rust_string(text, i):
    """Parses the Rust string literal at text[i]; returns (value, end) or (None, i)."""
    m = re.match(r'r(#*)"', text[i:])
    if m:
        close = '"' + m.group(1)
        j = text.find(close, i + len(m.group(0)))
        if j < 0:
            return None, i
        return text[i + len(m.group(0)):j], j + len(close)
    if text[i] != '"':
        return None, i
    out, j = [], i + 1
    while j < len(text):
        c = text[j]
        if c == '"':
            return "".join(out), j + 1
        if c == "\\":
            n = text[j + 1]
            if n == "\n":  # line continuation: skip the newline and leading blanks
                j += 2
                while j < len(text) and text[j] in " \t\r\n":
                    j += 1
                continue
            out.append({"n": "\n", "t": "\t", "r": "", "0": "", "\\": "\\", '"': '"',
                        "'": "'"}.get(n, ""))
            if n == "u":
                k = text.find("}", j)
                j = k + 1 if k > 0 else j + 2
                continue
            if n == "x":
                j += 4
                continue
            j += 2
            continue
        out.append(c)
        j += 1
    return None, i


def strip_tests(text):
    m = re.search(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*mod\s+\w+", text)
    return text[:m.start()] if m else text


def extract(src):
    crates = os.path.join(src, "crates")
    found = []
    for crate in sorted(os.listdir(crates)):
        if crate in SKIP_CRATES or not os.path.isdir(os.path.join(crates, crate, "src")):
            continue
        for dp, dn, fn in os.walk(os.path.join(crates, crate, "src")):
            dn[:] = sorted(d for d in dn if d not in ("tests", "test"))
            for f in sorted(fn):
                if not f.endswith(".rs") or f in ("tests.rs", "test.rs"):
                    continue
                path = os.path.join(dp, f)
                rel = os.path.relpath(path, src)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = strip_tests(fh.read())
                is_report = rel.endswith("pubgrub/report.rs")
                is_errfile = "error" in f or is_report
                msgs = []
                for m in SITE.finditer(text):
                    s, _ = rust_string(text, m.end())
                    if s is not None:
                        msgs.append((m.start(), s))
                impls = [(m.start(), m.group(1)) for m in IMPL_DISPLAY.finditer(text)]
                for m in DISPLAY_SITE.finditer(text):
                    owner = [n for p, n in impls if p < m.start()]
                    if not (is_errfile or owner and ERROR_TYPE.search(owner[-1])):
                        continue
                    s, _ = rust_string(text, m.end())
                    if s is not None:
                        msgs.append((m.start(), s))
                if is_report:
                    for m in REPORT_FORMAT.finditer(text):
                        s, _ = rust_string(text, m.end())
                        if s is not None and re.search(r"conclude|unsatisfiable|Because", s):
                            msgs.append((m.start(), s))
                if rel.endswith("uv-distribution-types/src/dist_error.rs"):
                    # DistErrorKind is printed as "{kind} `{dist}`"
                    msgs = [(p, s + " `{}`" if s.startswith("Failed to") else s)
                            for p, s in msgs]
                msgs.sort()
                found += [(s, rel) for _, s in msgs]
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True, help="a tree holding uv's crates/")
    ap.add_argument("--version", default=None)
    ap.add_argument("--commit", default=None)
    ap.add_argument("--out", default="data/catalogs")
    ap.add_argument("--meanings", default=os.path.join(HERE, "meanings", "uv.json"))
    ap.add_argument("--list", action="store_true", help="print the messages, write nothing")
    a = ap.parse_args()
    version, commit = a.version, a.commit
    if not version:
        try:
            version = subprocess.check_output(["git", "-C", a.src, "describe", "--tags"],
                                              text=True, stderr=subprocess.DEVNULL).strip()
        except Exception:
            version = "unknown"
    seen, messages = set(), []
    for s, rel in extract(a.src):
        s = s.strip()
        if not s or (s, rel) in seen:
            continue
        seen.add((s, rel))
        messages.append((s, f"uv {version} {rel}"))
    generated_from = [f"astral-sh/uv {version}" + (f" (commit {commit})" if commit else "")]
    catalog_lib.emit("uv", messages, "rust", generated_from, a.out, a.meanings, a.list)


if __name__ == "__main__":
    main()
