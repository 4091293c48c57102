#!/usr/bin/env python3
"""Generates explain's message catalog of pip (data/catalogs/pip.json) from pip's own source.

    pip download --no-deps --no-binary :all: pip==25.1.1 -d /tmp/pipsrc
    tar xzf /tmp/pipsrc/pip-25.1.1.tar.gz -C /tmp/pipsrc
    python3 scripts/catalogs/gen_pip.py --src /tmp/pipsrc/pip-25.1.1 \
        [--src /tmp/pipsrc/pip-24.0] --out data/catalogs

Each --src is an unpacked pip sdist (its version is read from src/pip/__init__.py unless
--version gives it, one per --src). A second, older --src adds the wording that pip releases
still common in images print (pip 24.0 is Ubuntu 24.04's; it says "Could not build wheels for
...", pip >= 24.1 says "Failed to build installable wheels ..."); a message both print is one
entry citing both.

The sources are parsed with Python's `ast` (src/pip/_internal, and the vendored packaging,
requests and urllib3 exception texts pip prints), never imported. Extracted as error messages:
  * the first argument (or message=/context=) of a call that constructs an exception: a class
    derived from an exception (pip's own, found through the class bases, or a builtin one),
    wherever it is built (`raise X("...")`, `return DistributionNotFound(f"...")`, `exc =
    X(msg)`); f-string parts become captures, "...".format(...) and "..." % (...) keep their
    placeholders, a local variable assigned once to a string is followed;
  * logger.error / logger.critical / logger.exception / logger.fatal format strings;
  * the strings returned by `__str__` of exception classes, the `head` of HashError classes,
    and for DiagnosticPipError classes "error: <reference>" (the first line pip prints) plus
    their message and context texts (rich markup such as [red]...[/] removed).
Never warnings, info or debug prints, and never AssertionError / NotImplementedError /
TypeError (programming errors).

This module is also imported by gen_python.py and gen_numpy.py for its extractor.
"""
import argparse, ast, builtins, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

HOLE = "{}"
RICH_MARKUP = re.compile(r"\[/?(?:bold|dim|italic|red|green|yellow|magenta|cyan|blue|white)?"
                         r"(?: ?(?:bold|red|green|yellow|magenta|cyan|dim))*\]")
LOG_METHODS = {"error", "critical", "exception", "fatal"}
LOGGER_NAMES = {"logger", "log", "_logger", "logging", "LOG", "_log"}
PROGRAMMER_ERRORS = {"AssertionError", "NotImplementedError", "TypeError", "StopIteration",
                     "StopAsyncIteration", "KeyboardInterrupt", "SystemExit", "GeneratorExit",
                     "RecursionError"}
BUILTIN_EXC = {n for n in dir(builtins)
               if isinstance(getattr(builtins, n), type)
               and issubclass(getattr(builtins, n), BaseException)
               and not issubclass(getattr(builtins, n), Warning)}


def _escape(s):
    return s.replace("{", "{{").replace("}", "}}")


class StrEval:
    """Turns an expression into a python-style format string ({} for each unknown part)."""

    def __init__(self, consts):
        self.consts = consts   # module-level NAME -> format string
        self.assigns = {}      # function-level NAME -> [(line, value node)]
        self.line = 1 << 30    # the line being evaluated (the last assignment before it counts)

    def __call__(self, node, depth=0):
        if depth > 12 or node is None:
            return None
        ev = lambda n: self(n, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            out = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    out.append(_escape(str(v.value)))
                else:
                    out.append(HOLE)
            return "".join(out)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            l, r = ev(node.left), ev(node.right)
            if l is None and r is None:
                return None
            return (l if l is not None else HOLE) + (r if r is not None else HOLE)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return ev(node.left)
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "format":
                return ev(f.value)
            if isinstance(f, ast.Attribute) and f.attr in ("from_markup", "assemble") or \
                    isinstance(f, ast.Name) and f.id in ("Text", "_", "gettext", "dedent",
                                                         "textwrap.dedent"):
                parts = []
                for a in node.args:
                    if isinstance(a, ast.Tuple) and a.elts:
                        a = a.elts[0]
                    s = ev(a)
                    parts.append(s if s is not None else HOLE)
                return "".join(parts) if any(p != HOLE for p in parts) else None
            if isinstance(f, ast.Attribute) and f.attr in ("strip", "rstrip", "lstrip"):
                s = ev(f.value)
                return s.strip() if s else s
            return None
        if isinstance(node, ast.Name):
            before = [(ln, v) for ln, v in self.assigns.get(node.id, ()) if ln < self.line]
            if before:
                saved, self.line = self.line, before[-1][0]
                try:
                    return self(before[-1][1], depth + 1)
                finally:
                    self.line = saved
            return self.consts.get(node.id)
        return None

    def part(self, node):
        """A part of a concatenation: the string, or a hole."""
        s = self(node)
        return s if s is not None else HOLE


def _name_of(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _base_names(cls):
    return [_name_of(b) for b in cls.bases if _name_of(b)]


def exception_classes(trees):
    """Names of the exception classes defined in the trees (through their bases), plus the
    builtin ones."""
    known = set(BUILTIN_EXC)
    classes = []
    for tree in trees:
        classes += [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    changed = True
    while changed:
        changed = False
        for c in classes:
            if c.name in known:
                continue
            if any(b in known or b.endswith(("Error", "Exception")) for b in _base_names(c)):
                known.add(c.name)
                changed = True
    return known


def module_consts(tree):
    ev = StrEval({})
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            s = ev(node.value)
            if s is not None:
                out[node.targets[0].id] = s
                ev.consts = out
    return out


def _function_assigns(fn):
    """NAME -> [(line, value node)] for the plain assignments in the function, by line."""
    out = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append((node.lineno, node.value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and \
                isinstance(node.op, ast.Add):
            # x += y is x = x + y
            out.setdefault(node.target.id, []).append(
                (node.lineno, ast.BinOp(left=ast.Name(id=node.target.id), op=ast.Add(),
                                        right=node.value)))
    for v in out.values():
        v.sort(key=lambda x: x[0])
    return out


class Extractor(ast.NodeVisitor):
    def __init__(self, exc_names, consts, log_methods=LOG_METHODS, diagnostic_base=None):
        self.exc = exc_names - PROGRAMMER_ERRORS
        self.ev = StrEval(consts)
        self.found = []  # format strings in source order
        self.log_methods = log_methods
        self.class_stack = []
        self.diagnostic_base = diagnostic_base

    def add(self, s):
        if s is None:
            return
        s = RICH_MARKUP.sub("", s).replace("\\[", "[")
        if s.strip(" {}\n\t:.") == "":
            return
        self.found.append(s)

    def visit_ClassDef(self, node):
        self.class_stack.append(node)
        is_exc = node.name in self.exc
        if is_exc:
            for item in node.body:
                if isinstance(item, ast.Assign) and len(item.targets) == 1 and \
                        isinstance(item.targets[0], ast.Name):
                    tname = item.targets[0].id
                    if tname in ("head", "message", "msg", "_message", "_fmt", "fmt"):
                        self.add(self.ev(item.value))
                    elif tname == "reference" and self.diagnostic_base:
                        ref = self.ev(item.value)
                        if ref:
                            self.add(f"error: {ref}")
        self.generic_visit(node)
        self.class_stack.pop()

    def visit_FunctionDef(self, node):
        saved = self.ev.assigns
        self.ev.assigns = dict(saved)
        self.ev.assigns.update(_function_assigns(node))
        self.ev.line = 1 << 30
        if "error_message" in node.name:
            # create_os_error_message(): parts.append("Could not install packages due to ...")
            for c in ast.walk(node):
                if isinstance(c, ast.Call) and _name_of(c.func) == "append" and c.args and \
                        isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str):
                    self.add(c.args[0].value)
                    break
        if node.name == "__str__" and self.class_stack and self.class_stack[-1].name in self.exc:
            for r in ast.walk(node):
                if isinstance(r, ast.Return):
                    self.ev.line = r.lineno + 1
                    self.add(self.ev(r.value))
        self.generic_visit(node)
        self.ev.assigns = saved

    visit_AsyncFunctionDef = visit_FunctionDef

    def first_string(self, args):
        for a in args:
            if isinstance(a, ast.Name) and a.id == "self":
                continue
            s = self.ev(a)
            if s is not None:
                return s
        return None

    def visit_Call(self, node):
        self.ev.line = node.lineno + 1
        name = _name_of(node.func)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in self.log_methods and \
                _name_of(f.value) in LOGGER_NAMES and node.args:
            self.add(self.ev(node.args[0]))
        elif name in self.exc:
            self.add(self.first_string(node.args))
            for kw in node.keywords:
                if kw.arg in ("message", "msg", "context", "error_msg", "reason"):
                    self.add(self.ev(kw.value))
        elif name == "__init__" and isinstance(f, ast.Attribute) and self.class_stack and \
                self.class_stack[-1].name in self.exc:
            # super().__init__(message=..., context=...) of a DiagnosticPipError
            for kw in node.keywords:
                if kw.arg in ("message", "context"):
                    self.add(self.ev(kw.value))
            if node.args and not node.keywords:
                self.add(self.first_string(node.args))
        self.generic_visit(node)


def extract_files(root, files, **kw):
    """[(relative path, [format strings])] for the files under root."""
    trees = {}
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            try:
                trees[rel] = ast.parse(fh.read(), filename=rel)
            except SyntaxError:
                continue
    exc = exception_classes(trees.values()) | set(kw.pop("extra_exc", ()))
    out = []
    for rel in sorted(trees):
        x = Extractor(exc, module_consts(trees[rel]), **kw)
        x.visit(trees[rel])
        out.append((rel, x.found))
    return out


def py_files(root, subdirs, exclude=()):
    files = []
    for sub in subdirs:
        base = os.path.join(root, sub)
        if os.path.isfile(base):
            files.append(sub)
            continue
        for dp, dn, fn in os.walk(base):
            dn[:] = sorted(d for d in dn if d not in ("tests", "test", "testing", "__pycache__"))
            for f in sorted(fn):
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dp, f), root)
                    if not any(rel.startswith(e) for e in exclude):
                        files.append(rel)
    return sorted(set(files))


def messages_of(tool, version, extracted):
    seen, out = set(), []
    for rel, fmts in extracted:
        for s in fmts:
            key = (s, rel)
            if key in seen:
                continue
            seen.add(key)
            out.append((s, f"{tool} {version} {rel}"))
    return out


# ---------------------------------------------------------------------------------- pip

PIP_DIRS = ["src/pip/_internal", "src/pip/_vendor/packaging/requirements.py",
            "src/pip/_vendor/packaging/version.py", "src/pip/_vendor/packaging/specifiers.py",
            "src/pip/_vendor/packaging/_parser.py", "src/pip/_vendor/packaging/_tokenizer.py",
            "src/pip/_vendor/requests/exceptions.py", "src/pip/_vendor/urllib3/exceptions.py",
            "src/pip/_vendor/urllib3/connectionpool.py", "src/pip/_vendor/urllib3/connection.py",
            "src/pip/_vendor/urllib3/util/retry.py", "src/pip/_vendor/requests/adapters.py"]


def pip_version(src):
    with open(os.path.join(src, "src/pip/__init__.py")) as fh:
        m = re.search(r'__version__\s*=\s*"([^"]+)"', fh.read())
    return m.group(1) if m else "unknown"


def pip_messages(src, version):
    files = [f for f in py_files(src, PIP_DIRS) if os.path.exists(os.path.join(src, f))]
    extracted = extract_files(src, files, diagnostic_base="DiagnosticPipError")
    return messages_of("pip", version, extracted)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", action="append", required=True, help="an unpacked pip sdist")
    ap.add_argument("--version", action="append", default=[], help="its version, one per --src")
    ap.add_argument("--out", default="data/catalogs")
    ap.add_argument("--meanings", default=os.path.join(HERE, "meanings", "pip.json"))
    ap.add_argument("--list", action="store_true", help="print the messages, write nothing")
    a = ap.parse_args()
    messages, generated_from = [], []
    for k, src in enumerate(a.src):
        version = a.version[k] if k < len(a.version) else pip_version(src)
        messages += pip_messages(src, version)
        generated_from.append(f"PyPI pip {version} (sdist, src/pip)")
    catalog_lib.emit("pip", messages, "python", generated_from, a.out, a.meanings, a.list)


if __name__ == "__main__":
    main()
