#!/usr/bin/env python3
"""Generates explain's message catalog of PyTorch's own Python-side errors
(data/catalogs/torch.json) from the Python files the torch wheel ships.

    pip download --no-deps --only-binary :all: --python-version 3.11 \
        --platform manylinux_2_28_x86_64 torch==2.9.1 -d /tmp/torchwhl
    cd /tmp/torchwhl && unzip -q torch-2.9.1-*.whl 'torch/*.py' -d /tmp/catalog-src/torch-2.9.1
    python3 scripts/catalogs/gen_torch.py --src /tmp/catalog-src/torch-2.9.1 --version 2.9.1 \
        --out data/catalogs
(the version is read from torch/version.py unless --version says it.)

Read (parsed with Python's `ast` by gen_pip.py's extractor, never imported), only the parts
where installation, environment and job failures are raised:
  torch/__init__.py, torch/cuda/**, torch/utils/cpp_extension.py, torch/utils/data/**,
  torch/distributed/** (c10d, elastic/torchrun, rendezvous), torch/_dynamo/exc.py,
  torch/_inductor/exc.py, torch/backends/**, torch/hub.py, torch/serialization.py.
Extracted: exception constructions (`raise RuntimeError(f"...")`, the exception classes found
through their bases; AssertionError too: torch raises "Torch not compiled with CUDA enabled"
as one), logger.error/critical/exception format strings, exception __str__ returns, the
texts passed to a local `_error(...)`/`_env_error(...)` helper (rendezvous.py's
"environment variable %s expected, but not set"), the `error_prefix=` texts cpp_extension
raises a failed build with ("Error building extension 'NAME'"), and the qualified name
Python's traceback prints for the exception classes these files define
("torch.distributed.elastic.multiprocessing.errors.ChildFailedError", with or without a
message after it).
A message of several lines is taken by its most specific line (catalog_lib).
Only the messages a rule of meanings/torch.json names are kept (`"keep_unruled": false`):
torch's other errors are its API's (wrong shapes, dtypes, arguments), not an image's or a
job's. Messages PyTorch raises from C++ (c10/ATen: "Found no NVIDIA driver on your system",
TCPStore's "The client socket has timed out ...", "CUDA error: ...") are not in the Python
files and not in this catalog."""
import ast, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402
import gen_pip  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;]*m")  # "\033[1mdo those steps only if ...\033[0m"
HERE = os.path.dirname(os.path.abspath(__file__))
PARTS = ["torch/__init__.py", "torch/cuda", "torch/utils/cpp_extension.py", "torch/utils/data",
         "torch/distributed", "torch/_dynamo/exc.py", "torch/_inductor/exc.py", "torch/backends",
         "torch/hub.py", "torch/serialization.py"]
# torch raises environment failures as AssertionError ("Torch not compiled with CUDA
# enabled"); only ruled messages are kept, so the programming-error filter is relaxed here.
gen_pip.PROGRAMMER_ERRORS = gen_pip.PROGRAMMER_ERRORS - {"AssertionError"}


def torch_version(src):
    try:
        with open(os.path.join(src, "torch", "version.py")) as fh:
            return re.search(r"^__version__\s*=\s*['\"]([^'\"+]+)", fh.read(), re.M).group(1)
    except (OSError, AttributeError):
        return "unknown"


def extra_messages(src, rel, known):
    """error_prefix= texts and 'module.Class:' names of the exception classes of one file."""
    with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as fh:
        try:
            tree = ast.parse(fh.read(), filename=rel)
        except SyntaxError:
            return []
    ev = gen_pip.StrEval(gen_pip.module_consts(tree))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "error_prefix":
                    s = ev(kw.value)
                    if s:
                        out.append(s)
    for cls in ast.walk(tree):
        if not (isinstance(cls, ast.ClassDef) and cls.name in known):
            continue
        for fn in cls.body:  # super().__init__("...", first_useful_frame=...) of a class
            if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                ev.assigns = gen_pip._function_assigns(fn)
                for c in ast.walk(fn):
                    if isinstance(c, ast.Call) and gen_pip._name_of(c.func) == "__init__" \
                            and c.args and c.keywords:
                        ev.line = c.lineno + 1
                        s = ev(c.args[0])
                        if s:
                            out.append(s)
                ev.assigns, ev.line = {}, 1 << 30
    for c in ast.walk(tree):  # _error(f"environment variable {var} expected, but not set")
        if isinstance(c, ast.Call) and re.match(r"_\w*error$", gen_pip._name_of(c.func) or "") \
                and c.args:
            s = ev(c.args[0])
            if s and not s.startswith("{}"):
                out.append(s)
    for fn in ast.walk(tree):  # def _get_wo_message(...): the texts it assigns and returns
        if isinstance(fn, ast.FunctionDef) and re.search(r"_(message|msg)$", fn.name):
            ev.assigns = gen_pip._function_assigns(fn)
            for c in ast.walk(fn):
                if isinstance(c, (ast.Assign, ast.Return)) and c.value is not None:
                    ev.line = c.lineno + 1
                    s = ev(c.value)
                    if s and s.strip(" {}\n") and not s.startswith("{}"):
                        out.append(s)
            ev.assigns, ev.line = {}, 1 << 30
    module = rel[:-3].replace("/", ".")
    if module.endswith(".__init__"):
        module = module[:-len(".__init__")]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in known and \
                node.name not in gen_pip.BUILTIN_EXC:
            out.append(f"{module}.{node.name}")
    return out


def messages(src, version):
    files = gen_pip.py_files(src, PARTS)
    # exceptions built from torch._C (DistStoreError, DistNetworkError, ...) are not defined
    # in the Python files: any called name that ends in Error/Exception is one
    called = set()
    for rel in files:
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as fh:
            called |= set(re.findall(r"\b([A-Z]\w*(?:Error|Exception))\(", fh.read()))
    extracted = gen_pip.extract_files(src, files, extra_exc=sorted(called))
    trees = []
    for rel in files:
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as fh:
            try:
                trees.append(ast.parse(fh.read(), filename=rel))
            except SyntaxError:
                pass
    known = gen_pip.exception_classes(trees)
    extracted = [(rel, [ANSI.sub("", m) for m in msgs + extra_messages(src, rel, known)])
                 for rel, msgs in extracted]
    return gen_pip.messages_of("torch", version, extracted)


def main():
    a = catalog_lib.generator_args(__doc__, "torch", "the torch/*.py files of an unzipped wheel").parse_args()
    version = a.version or torch_version(a.src)
    msgs = messages(a.src, version)
    gen = [f"PyPI torch {version} (the cp311 manylinux_2_28_x86_64 wheel's Python files): "
           + ", ".join(PARTS) + " by scripts/catalogs/gen_torch.py"]
    catalog_lib.emit("torch", msgs, "python", gen, a.out, a.meanings, a.list)


if __name__ == "__main__":
    main()
