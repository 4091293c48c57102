#!/usr/bin/env python3
"""Generates explain's message catalog of the Python interpreter's import machinery and its
common runtime errors (data/catalogs/python.json) from CPython's own source, one pinned version.

    # CPython 3.11.2, as Debian 12 ships it (python3.11 source package, its orig tarball):
    apt-get source --download-only python3.11      # needs a deb-src line for bookworm
    tar xzf python3.11_3.11.2.orig.tar.gz -C /tmp  # -> /tmp/Python-3.11.2
    python3 scripts/catalogs/gen_python.py --src /tmp/Python-3.11.2 --out data/catalogs
(any CPython tree works: a release tarball or a checkout of github:python/cpython at a tag.)

Read from the tree (the version comes from Include/patchlevel.h):
  * Lib/importlib/_bootstrap.py, _bootstrap_external.py, importlib/__init__.py and util.py,
    parsed with Python's `ast` by gen_pip.py's extractor: exception constructions
    (ImportError / ModuleNotFoundError(...), "...".format and f-strings become captures);
  * Python/import.c, importdl.c, dynload_shlib.c, ceval.c, Objects/moduleobject.c, read as C
    text: PyErr_Format / PyErr_SetString / _PyErr_Format / _PyErr_SetString with their
    exception type (never SystemError, which reports interpreter bugs, nor warnings), the
    PyUnicode_FromFormat messages import builds for ImportError, and the `const char *fmt =
    cond ? "..." : "..."` choices of ceval.c's import_from. C format strings (%R %S %U %V %s
    %d ...) are turned into python-style {} placeholders.
"No module named ..." is taken as "ModuleNotFoundError: No module named ..." (the line a
traceback ends with; the bare text is too short for a template).
dlopen's own texts (undefined symbol, cannot open shared object file) are the loader's and
are left to data/vocabularies/loader.json.
"""
import argparse, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402
import gen_pip  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PY_FILES = ["Lib/importlib/_bootstrap.py", "Lib/importlib/_bootstrap_external.py",
            "Lib/importlib/__init__.py", "Lib/importlib/util.py"]
C_FILES = ["Python/import.c", "Python/importdl.c", "Python/dynload_shlib.c", "Python/ceval.c",
           "Objects/moduleobject.c"]
C_CALL = re.compile(r"\b(_?PyErr_Format|_?PyErr_SetString|PyUnicode_FromFormat)\s*\(")
C_FMT_VAR = re.compile(r"\bconst\s+char\s*\*\s*fmt\s*=")
C_STR_RUN = re.compile(r'"((?:[^"\\\n]|\\.)*)"(?:\s*"((?:[^"\\\n]|\\.)*)")*')
C_STR = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
C_FORMAT = re.compile(r"%(?:\d+\$)?[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:ll|l|z|j|t)?"
                      r"[diouxXcsSRUVAfgp%]")
SKIP_EXC = {"SystemError", "DeprecationWarning", "ImportWarning", "RuntimeWarning",
            "MemoryError"}


def c_unescape(s):
    return (s.replace('\\"', '"').replace("\\n", "\n").replace("\\t", "\t")
            .replace("\\\\", "\\"))


def c_to_python(s):
    s = s.replace("{", "{{").replace("}", "}}")
    return C_FORMAT.sub(lambda m: "%" if m.group(0) == "%%" else "{}", s)


def _strip_comments(text):
    return re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)), text, flags=re.S)


def c_messages(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = _strip_comments(fh.read())
    out = []
    for m in C_CALL.finditer(text):
        # the arguments up to the end of the statement
        end = text.find(";", m.end())
        args = text[m.end():end]
        exc = re.search(r"PyExc_(\w+)", args)
        if m.group(1) != "PyUnicode_FromFormat":
            if not exc or exc.group(1) in SKIP_EXC:
                continue
        run = C_STR_RUN.search(args)
        if not run:
            continue
        s = "".join(C_STR.findall(run.group(0)))
        out.append((m.start(), c_to_python(c_unescape(s))))
    for m in C_FMT_VAR.finditer(text):
        end = text.find(";", m.end())
        for part in re.split(r"[?:]", text[m.end():end]):
            strs = C_STR.findall(part)
            if strs:
                out.append((m.start(), c_to_python(c_unescape("".join(strs)))))
    return [s for _, s in sorted(out)]


def cpython_version(src):
    with open(os.path.join(src, "Include/patchlevel.h")) as fh:
        m = re.search(r'#define\s+PY_VERSION\s+"([^"]+)"', fh.read())
    return m.group(1) if m else "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True, help="a CPython source tree")
    ap.add_argument("--version", default=None)
    ap.add_argument("--origin", default="Debian python3.11 source package (orig tarball)",
                    help="where the tree came from, for generated_from")
    ap.add_argument("--out", default="data/catalogs")
    ap.add_argument("--meanings", default=os.path.join(HERE, "meanings", "python.json"))
    ap.add_argument("--list", action="store_true", help="print the messages, write nothing")
    a = ap.parse_args()
    version = a.version or cpython_version(a.src)
    extracted = gen_pip.extract_files(a.src, [f for f in PY_FILES
                                              if os.path.exists(os.path.join(a.src, f))])
    for rel in C_FILES:
        if os.path.exists(os.path.join(a.src, rel)):
            extracted.append((rel, c_messages(os.path.join(a.src, rel))))
    # "No module named 'x'" is too short a template by itself; Python prints it as the last
    # line of a traceback, "ModuleNotFoundError: No module named 'x'", which is taken instead.
    extracted = [(rel, ["ModuleNotFoundError: " + m if m.startswith("No module named") else m
                        for m in msgs]) for rel, msgs in extracted]
    messages = gen_pip.messages_of("CPython", version, extracted)
    generated_from = [f"CPython {version} ({a.origin}): " + ", ".join(PY_FILES + C_FILES)]
    catalog_lib.emit("python", messages, "python", generated_from, a.out, a.meanings, a.list)


if __name__ == "__main__":
    main()
