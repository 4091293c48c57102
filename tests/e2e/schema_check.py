#!/usr/bin/env python3
"""Checks schema/manifest.schema.json against the bundled manifests.

Every manifests/*.json (except *.lock.json) must validate; a set of manifests built
here, each with one mistake the C++ parser refuses, must be rejected, and a few
unusual but valid ones must be accepted. Manifests are JSON with // and /* */
comments and trailing commas (see src/core/json/source_json.hpp), so those are removed
before json.loads. Prints one line per case and "N passed, M failed".

Usage: python3 tests/e2e/schema_check.py [MANIFEST.json ...]
Exit status: 0 all passed, 1 a case failed, 2 jsonschema is not installed.
"""
import copy
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = ROOT / "schema" / "manifest.schema.json"

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError:
    print("schema_check: the Python package 'jsonschema' (4.0 or newer, for draft 2020-12) is not "
          "installed; run: python3 -m pip install jsonschema", file=sys.stderr)
    sys.exit(2)


def strip_jsonc(text):
    """Removes // and /* */ comments and trailing commas outside strings.

    Comments become spaces (newlines are kept), so line numbers in json errors still
    match the file."""
    out = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
        elif c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("unterminated /* comment")
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:end + 2]))
            i = end + 2
        else:
            out.append(c)
            i += 1
    return _drop_trailing_commas("".join(out))


def _drop_trailing_commas(text):
    out = []
    in_string = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                out.append(text[i:i + 2])
                i += 2
                continue
            if c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == ",":
            j = i + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if j < len(text) and text[j] in "}]":
                i += 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _no_duplicate_keys(pairs):
    # The C++ parser refuses duplicate keys; json.loads would silently keep the last.
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def load_manifest(path):
    return json.loads(strip_jsonc(path.read_text(encoding="utf-8")), object_pairs_hook=_no_duplicate_keys)


def error_path(error, instance):
    """The JSON path of an error as a tuple.

    Some jsonschema versions report a refused key (a `false` subschema under
    "properties") at the object that holds it; the key is put back here."""
    path = tuple(error.absolute_path)
    if error.validator is None:  # a `false` schema
        parent = instance
        for part in path:
            parent = parent[part]
        if isinstance(parent, dict):
            for key, value in parent.items():
                if value is error.instance:
                    return path + (key,)
    return path


def describe(error, instance, defs):
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error_path(error, instance))
    message = error.message
    if error.validator is None:
        message = "not allowed here"
    elif error.validator == "pattern":
        # Name the grammar instead of printing a long regular expression.
        name = next((k for k, d in defs.items() if d is error.schema), None)
        message = f"{error.instance!r} does not match the {name + ' ' if name else ''}pattern"
    return f"{where}: {message}"


def errors_of(validator, instance):
    return sorted(validator.iter_errors(instance), key=lambda e: list(map(str, error_path(e, instance))))


# A valid manifest for every base kind; each bad case breaks one thing in one of them.
GOOD = {
    "nvidia-cuda": {
        "schema": 1, "name": "fam", "image": "torchdock/fam", "base": "nvidia-cuda",
        "matrix": {"torch": ["2.4.1"], "cuda": ["cu121"], "flavor": ["runtime"], "os": ["ubuntu22.04"]},
        "pip": ["numpy==1.26.4"], "user": {"name": "trainer"}, "env": {"A": "1"},
    },
    "ngc": {
        "schema": 1, "name": "fam", "image": "torchdock/fam", "base": "ngc",
        "matrix": {"ngc": ["24.05"]},
    },
    "debian-torch": {
        "schema": 1, "name": "fam", "image": "torchdock/fam", "base": "debian-torch",
        "matrix": {"os": ["debian12"]},
    },
    "os-pip": {
        "schema": 1, "name": "fam", "image": "torchdock/fam", "base": "os-pip",
        "matrix": {"torch": ["2.9.1"], "cuda": ["cu128"], "os": ["debian12"]},
    },
}


def variant(base, change):
    m = copy.deepcopy(GOOD[base])
    change(m)
    return m


def setting(*path_and_value):
    *path, value = path_and_value

    def change(m):
        target = m
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def removing(*path):
    def change(m):
        target = m
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


# (label, manifest, JSON path the rejection must point into[, words its message must contain])
BAD = [
    ("unknown top-level key", variant("nvidia-cuda", setting("pyhton", "3.10")), (), "'pyhton'"),
    ("unknown matrix key", variant("nvidia-cuda", setting("matrix", "flavour", ["runtime"])), ("matrix",)),
    ("pip range instead of an exact pin", variant("nvidia-cuda", setting("pip", ["numpy>=1.0"])), ("pip", 0)),
    ("pip requirement with a marker", variant("nvidia-cuda", setting("pip", ["numpy==1.26;python_version<'3.9'"])), ("pip", 0)),
    ("unknown base kind", variant("nvidia-cuda", setting("base", "cuda")), ("base",)),
    ("newline in a torch version", variant("nvidia-cuda", setting("matrix", "torch", ["2.4.1\n"])), ("matrix", "torch", 0)),
    ("newline after a pip pin", variant("nvidia-cuda", setting("pip", ["numpy==1.26.4\nRUN curl x"])), ("pip", 0)),
    ("trailing newline in a pip version", variant("nvidia-cuda", setting("pip", ["numpy==1.26.4\n"])), ("pip", 0)),
    ("trailing newline in openmpi", variant("nvidia-cuda", setting("openmpi", "4.1.4-3\n")), ("openmpi",)),
    ("newline in description", variant("nvidia-cuda", setting("description", "x\ny")), ("description",)),
    ("missing matrix", variant("nvidia-cuda", removing("matrix")), (), "'matrix' is a required property"),
    ("missing image", variant("nvidia-cuda", removing("image")), (), "'image' is a required property"),
    ("flavor axis on base ngc", variant("ngc", setting("matrix", "flavor", ["devel"])), ("matrix", "flavor")),
    ("torch axis on base debian-torch", variant("debian-torch", setting("matrix", "torch", ["2.4.1"])), ("matrix", "torch")),
    ("missing os axis on base nvidia-cuda", variant("nvidia-cuda", removing("matrix", "os")), ("matrix",),
     "'os' is a required property"),
    ("empty cuda axis", variant("nvidia-cuda", setting("matrix", "cuda", [])), ("matrix", "cuda")),
    ("CUDA variant cu12", variant("nvidia-cuda", setting("matrix", "cuda", ["cu12"])), ("matrix", "cuda", 0)),
    ("flavor slim", variant("nvidia-cuda", setting("matrix", "flavor", ["slim"])), ("matrix", "flavor", 0)),
    ("duplicate pip entry", variant("nvidia-cuda", setting("pip", ["numpy==1.26.4", "numpy==1.26.4"])), ("pip",)),
    ("empty exclude rule", variant("nvidia-cuda", setting("matrix", "exclude", [{}])), ("matrix", "exclude", 0)),
    ("apt package name in capitals", variant("nvidia-cuda", setting("apt", ["Git"])), ("apt",)),
    ("apt version ending in a dash", variant("nvidia-cuda", setting("apt", ["git=1.0-"])), ("apt",)),
    ("apt per OS with a bad name", variant("nvidia-cuda", setting("apt", {"ubuntu22.04": ["Git"]})), ("apt",)),
    ("uppercase image path", variant("nvidia-cuda", setting("image", "Torchdock/fam")), ("image",)),
    ("image with a tag", variant("nvidia-cuda", setting("image", "torchdock/fam:latest")), ("image",)),
    ("family name with --", variant("nvidia-cuda", setting("name", "cuda--13")), ("name",)),
    ("schema 2", variant("nvidia-cuda", setting("schema", 2)), ("schema",)),
    ("python 2.7", variant("nvidia-cuda", setting("python", "2.7")), ("python",)),
    ("user root", variant("nvidia-cuda", setting("user", {"name": "root"})), ("user", "name")),
    ("uid 0", variant("nvidia-cuda", setting("user", {"name": "trainer", "uid": 0})), ("user", "uid")),
    ("env name starting with a digit", variant("nvidia-cuda", setting("env", {"1X": "y"})), ("env",)),
    ("cudnn_major 5", variant("nvidia-cuda", setting("expect", {"cudnn_major": 5})), ("expect", "cudnn_major")),
    ("unknown GEMM precision", variant("nvidia-cuda", setting("validate", {"gemm_tflops_min": {"int8": 1}})),
     ("validate", "gemm_tflops_min")),
    ("torchvision on base ngc", variant("ngc", setting("torchvision", False)), ("torchvision",)),
    ("target_gpus on base debian-torch", variant("debian-torch", setting("target_gpus", ["H100"])), ("target_gpus",)),
    ("expect on base debian-torch", variant("debian-torch", setting("expect", {"nccl": "2.21.5"})), ("expect",)),
    ("wheel_index on base ngc", variant("ngc", setting("wheel_index", "pypi")), ("wheel_index",)),
    ("wheel_index pipy", variant("nvidia-cuda", setting("wheel_index", "pipy")), ("wheel_index",)),
    ("waiver of an unknown ID", variant("nvidia-cuda", setting("waivers", {"XX130": "r"})), ("waivers",)),
    ("waiver of the non-waivable TD112", variant("nvidia-cuda", setting("waivers", {"TD112": "r"})), ("waivers",)),
    ("waiver without a reason", variant("nvidia-cuda", setting("waivers", {"TD130": ""})), ("waivers", "TD130")),
    ("waiver reason with a newline", variant("nvidia-cuda", setting("waivers", {"TD130": "a\nLABEL x=y"})),
     ("waivers", "TD130")),
    ("a source archive that is a wheel", variant("os-pip", setting("extensions", [
        {"name": "x", "source": {"url": "https://e.org/x-1.0-py3-none-any.whl", "sha256": "a" * 64}}])),
     ("extensions", 0, "source", "url")),
    ("a source build with max_jobs 0", variant("os-pip", setting("extensions", [
        {"name": "x", "source": {"url": "https://e.org/x-1.0.tar.gz", "sha256": "a" * 64, "max_jobs": 0}}])),
     ("extensions", 0, "source", "max_jobs")),
    ("a source build requirement with a range", variant("os-pip", setting("extensions", [
        {"name": "x", "source": {"url": "https://e.org/x-1.0.tar.gz", "sha256": "a" * 64,
                                 "build_requires": ["ninja>=1"]}}])),
     ("extensions", 0, "source", "build_requires", 0)),
]

# Unusual manifests the C++ parser accepts; the schema must not be stricter.
ACCEPT = [
    (f"minimal manifest on base {base}", m) for base, m in GOOD.items()
] + [
    ("pip extras, local label, epoch and post/dev releases",
     variant("nvidia-cuda", setting("pip", ["jax[cuda12]==0.4.30", "torch==2.4.1+cu121", "x_y-z==2!1.0.dev3",
                                            "zope.interface==6.0.post1", "a==1.0rc1"]))),
    ("apt epochs and revisions, openmpi, jupyter",
     variant("nvidia-cuda", lambda m: m.update(apt=["git=1:2.39.5-0+deb12u1", "g++=4:12.2.0-3", "libfoo=1.0~rc1"],
                                               openmpi="4.1.4-3", jupyter="4.3.4"))),
    ("registry host with a port", variant("nvidia-cuda", setting("image", "127.0.0.1:5000/team/torch"))),
    ("exclude rule, python, expect and validate",
     variant("nvidia-cuda", lambda m: m.update(
         matrix={"torch": ["2.4.1"], "cuda": ["cu121", "cu124"], "flavor": ["runtime", "devel"], "os": ["ubuntu22.04"],
                 "exclude": [{"cuda": "cu124", "flavor": "devel"}]},
         python="3.12", expect={"cudnn_major": 9, "nccl": "2.21.5"},
         validate={"gemm_tflops_min": {"fp8": 800.5}, "allreduce_busbw_min_gbps": 0, "shm_min_mb": 1}))),
    ("empty pip, apt and target_gpus lists on debian-torch",
     variant("debian-torch", lambda m: m.update(pip=[], apt=[], target_gpus=[]))),
    ("wheel_index pypi where torch is pip-installed", variant("os-pip", setting("wheel_index", "pypi"))),
    ("wheel_index pytorch on nvidia-cuda", variant("nvidia-cuda", setting("wheel_index", "pytorch"))),
    ("a waiver", variant("nvidia-cuda", setting("waivers", {"TD130": "jobs run with --ipc=host"}))),
    ("an extension built from source", variant("os-pip", setting("extensions", [
        {"name": "tdext", "source": {"url": "http://127.0.0.1:8000/tdext-0.1.0.tar.gz", "sha256": "a" * 64,
                                     "build_requires": ["setuptools==81.0.0", "ninja==1.13.0"], "max_jobs": 4}}]))),
]


def main(argv):
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    passed = failed = 0

    def report(ok, label, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
        print(f"{'PASS' if ok else 'FAIL'} {label}{': ' + detail if detail else ''}")

    try:
        Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        report(False, f"schema {SCHEMA_PATH.relative_to(ROOT)} is a valid draft 2020-12 schema", e.message)
        print(f"{passed} passed, {failed} failed")
        return 1
    report(True, f"schema {SCHEMA_PATH.relative_to(ROOT)} is a valid draft 2020-12 schema")
    validator = Draft202012Validator(schema)
    defs = schema.get("$defs", {})

    if argv:
        manifests = [Path(a) for a in argv]
    else:
        manifests = sorted(p for p in (ROOT / "manifests").glob("*.json") if not p.name.endswith(".lock.json"))
        if not manifests:
            report(False, "manifests/*.json", "no manifests found")
    for path in manifests:
        label = f"accept {path.relative_to(ROOT) if path.is_absolute() and ROOT in path.parents else path}"
        try:
            data = load_manifest(path)
        except (OSError, ValueError) as e:
            report(False, label, f"cannot read: {e}")
            continue
        errors = errors_of(validator, data)
        report(not errors, label, "; ".join(describe(e, data, defs) for e in errors))

    for label, manifest in ACCEPT:
        errors = errors_of(validator, manifest)
        report(not errors, f"accept built: {label}", "; ".join(describe(e, manifest, defs) for e in errors))

    for label, manifest, where, *mention in BAD:
        errors = errors_of(validator, manifest)
        if not errors:
            report(False, f"reject built: {label}", "the schema accepted it")
            continue
        # The rejection must be about the mistake, not something else in the manifest.
        on_target = [e for e in errors if error_path(e, manifest)[:len(where)] == tuple(where)
                     and all(words in e.message for words in mention)]
        if on_target:
            report(True, f"reject built: {label}", describe(on_target[0], manifest, defs))
        else:
            report(False, f"reject built: {label}",
                   "rejected for another reason: " + "; ".join(describe(e, manifest, defs) for e in errors))

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
