#!/usr/bin/env python3
"""Generates explain's message catalog of NumPy (data/catalogs/numpy.json) from numpy's own
source, above all the import-time ABI checks an extension module built against another NumPy
fails with ("A module that was compiled using NumPy 1.x cannot be run in NumPy 2...",
"numpy._core.multiarray failed to import", "module compiled against ABI version ...").

    pip download --no-deps --no-binary :all: numpy==2.5.2 -d /tmp/pysrc
    tar xzf /tmp/pysrc/numpy-2.5.2.tar.gz -C /tmp/pysrc
    python3 scripts/catalogs/gen_numpy.py --src /tmp/pysrc/numpy-2.5.2 --out data/catalogs
(the version is read from the sdist's PKG-INFO or numpy/version.py unless --version says it.)

Read from the tree:
  * numpy/**/*.py (not tests, testing, f2py, typing, the build helpers), parsed with Python's
    `ast` by gen_pip.py's extractor: exception constructions (`raise ValueError(f"...")`),
    never AssertionError/NotImplementedError/TypeError (programming errors) nor warnings.
    A message of several lines is taken by its first line (numpy's headline, the line a
    traceback's last line starts with);
  * numpy/_core/src/**/*.{c,cpp,h,c.src} as C text by gen_python.py's reader: PyErr_Format /
    PyErr_SetString with their exception type (never SystemError, MemoryError or warnings);
  * the C code numpy writes into __multiarray_api.h / __ufunc_api.h, which every extension
    module compiled against numpy carries (numpy/_core/code_generators/generate_numpy_api.py,
    generate_ufunc_api.py): `_import_array`'s ABI/C-API checks and import_array's
    "numpy._core.multiarray failed to import".
"numpy.dtype size changed, may indicate binary incompatibility" is Cython's text (its
generated module init), not numpy's: it is not in this catalog.
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402
import gen_pip  # noqa: E402
import gen_python  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PY_EXCLUDE = ("numpy/f2py", "numpy/typing", "numpy/_typing", "numpy/_build_utils",
              "numpy/testing", "numpy/_pyinstaller", "numpy/_core/code_generators",
              "numpy/conftest.py", "numpy/_pytesttester.py", "numpy/doc")
C_DIRS = ["numpy/_core/src"]
C_EXT = (".c", ".cpp", ".h", ".c.src", ".h.src", ".cpp.src")
API_GENERATORS = ["numpy/_core/code_generators/generate_numpy_api.py",
                  "numpy/_core/code_generators/generate_ufunc_api.py"]


def numpy_version(src):
    for rel, rx in (("PKG-INFO", r"^Version:\s*(\S+)"),
                    ("numpy/version.py", r'version\s*[:=][^"\']*["\']([^"\']+)')):
        try:
            with open(os.path.join(src, rel)) as fh:
                m = re.search(rx, fh.read(), re.M)
            if m:
                return m.group(1)
        except OSError:
            pass
    return "unknown"


def headline(msg):
    lines = [l.strip() for l in msg.split("\n") if l.strip()]
    return lines[0] if len(lines) > 1 else msg


def c_files(src):
    out = []
    for d in C_DIRS:
        for dp, dn, fn in os.walk(os.path.join(src, d)):
            dn[:] = sorted(x for x in dn if x not in ("tests", "highway", "dummymodule"))
            out += [os.path.relpath(os.path.join(dp, f), src) for f in sorted(fn)
                    if f.endswith(C_EXT)]
    return sorted(out)


def api_header_messages(path):
    """The PyErr_* texts of the C code a generate_*_api.py writes (its %% are %)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read().replace("%%", "%").replace("\\\n", "\n")
    text = text.replace("NPY_FEATURE_VERSION_STRING", '"%s"')  # "(NumPy " "2.x" ")"
    return _c_messages_of_text(text)


def _c_messages_of_text(text):
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as fh:
        fh.write(text)
        name = fh.name
    try:
        return gen_python.c_messages(name)
    finally:
        os.unlink(name)


class _StrEval(gen_pip.StrEval):
    """gen_pip's StrEval, also following textwrap.dedent(...) (numpy's multi-line texts)."""

    def __call__(self, node, depth=0):
        import ast
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "dedent" and node.args:
            return super().__call__(node.args[0], depth + 1)
        return super().__call__(node, depth)


gen_pip.StrEval = _StrEval  # the extractor builds its evaluator through this name


def messages(src, version):
    files = gen_pip.py_files(src, ["numpy"], exclude=PY_EXCLUDE)
    extracted = gen_pip.extract_files(src, files)
    extracted = [(rel, [headline(m) for m in msgs]) for rel, msgs in extracted]
    for rel in API_GENERATORS:
        if os.path.exists(os.path.join(src, rel)):
            extracted.append((rel, api_header_messages(os.path.join(src, rel))))
    for rel in c_files(src):
        extracted.append((rel, gen_python.c_messages(os.path.join(src, rel))))
    return gen_pip.messages_of("numpy", version, extracted)


def main():
    a = catalog_lib.generator_args(__doc__, "numpy", "an unpacked numpy sdist").parse_args()
    version = a.version or numpy_version(a.src)
    msgs = messages(a.src, version)
    gen = [f"PyPI numpy {version} (sdist" + (f", commit {a.commit}" if a.commit else "") +
           "): numpy/**/*.py, numpy/_core/src, " + ", ".join(API_GENERATORS) +
           " by scripts/catalogs/gen_numpy.py"]
    catalog_lib.emit("numpy", msgs, "python", gen, a.out, a.meanings, a.list)


if __name__ == "__main__":
    main()
