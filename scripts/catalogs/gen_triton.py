#!/usr/bin/env python3
"""Generates data/catalogs/triton.json: the error messages of Triton (the GPU kernel compiler
torch.compile/inductor uses), each with its meaning from scripts/catalogs/meanings/triton.json.

  python3 scripts/catalogs/gen_triton.py --src DIR [--version V] [--commit C] --out data/catalogs

DIR holds the `triton` Python package: triton-lang/triton's python/ directory, or the files
the PyPI wheel ships (`pip download --no-deps triton==V`, unzipped). Read:
  * `raise X("...")` in triton/**.py whose message is a literal, an f-string, "..." % x or
    "...".format(...) (implicitly joined literals included);
  * the f-string an exception class's __str__ returns (OutOfResources' "out of resource:
    ...", PTXASError's "PTXAS error: ...");
  * PyErr_SetString/PyErr_Format in the backends' driver.c (printf; read as Python %s/%d).
Not read: the C++ of libtriton (the wheel ships it compiled; emitError/report_fatal_error
strings are not in the Python package)."""
import ast, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402
from gen_nccl import c_call_formats  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_DIRS = re.compile(r"(^|/)(tests?|_C|include|FileCheck|tools|instrumentation|profiler|experimental)(/|$)"
                       r"|^_(test_runner|internal_testing|compile_warmup\w*)\.py$")


def _esc(s):
    return s.replace("{", "{{").replace("}", "}}")


def fmt_of(node):
    """The message format (Python style) of an expression, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _esc(node.value)
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(_esc(str(v.value)))
            else:
                out.append("{}")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            return _esc(node.left.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = fmt_of(node.left), fmt_of(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format" and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)):
        return node.func.value.value
    return None


def py_messages(text):
    out = []
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            f = fmt_of(node.exc.args[0])
            if f:
                out.append(f)
        elif isinstance(node, ast.ClassDef):
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "__str__":
                    for sub in ast.walk(fn):
                        if isinstance(sub, ast.Return) and isinstance(sub.value, ast.JoinedStr):
                            f = fmt_of(sub.value)
                            if f:
                                out.append(f)
    return out


def c_to_python(fmt):
    """A printf format as a Python-style one (braces escaped, %-specs as %s / %d)."""
    fmt = _esc(fmt).replace("%%", "\0")
    fmt = catalog_lib.PRINTF.sub(lambda m: "%d" if m.group(0)[-1] in "diuxXn" else "%s", fmt)
    return fmt.replace("\0", "%")


def triton_version(pkg):
    try:
        with open(os.path.join(pkg, "__init__.py")) as f:
            return re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", f.read(), re.M).group(1)
    except (OSError, AttributeError):
        return "unknown"


def find_pkg(src):
    for cand in (os.path.join(src, "triton"), os.path.join(src, "python", "triton"), src):
        if os.path.isfile(os.path.join(cand, "__init__.py")):
            return cand
    raise SystemExit(f"no triton package under {src}")


def collect(pkg, version):
    msgs = []
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames.sort()
        for fn in sorted(filenames):
            path = os.path.join(dirpath, fn)
            rel = "python/triton/" + os.path.relpath(path, pkg).replace(os.sep, "/")
            if SKIP_DIRS.search(os.path.relpath(path, pkg)):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read() if fn.endswith((".py", ".c")) else None
            if text is None:
                continue
            if fn.endswith(".py"):
                found = py_messages(text)
            else:
                found = [c_to_python(f) for f, _, _ in
                         c_call_formats(re.sub(r"PyErr_(SetString|Format)\s*\(\s*[\w.]+\s*,",
                                               r"PyErr_\1(", text),
                                        ["PyErr_SetString", "PyErr_Format"])]
            msgs += [(m, f"triton {version} {rel}") for m in found]
    msgs.sort(key=lambda m: (m[1], m[0]))
    return msgs


def main():
    a = catalog_lib.generator_args(__doc__, "triton").parse_args()
    pkg = find_pkg(a.src)
    version = a.version or triton_version(pkg)
    msgs = collect(pkg, version)
    gen = [f"triton {version}" + (f" ({a.commit})" if a.commit else "")
           + ": raise sites and exception __str__ f-strings in python/triton/**.py, "
           "PyErr_SetString/PyErr_Format in backends/*/driver.c"]
    catalog_lib.emit("triton", msgs, "python", gen, a.out, a.meanings, a.list)


if __name__ == "__main__":
    main()
