#!/usr/bin/env python3
"""Checks SBOM files against the official CycloneDX 1.6 JSON schema.

The schema is the one PyPI's cyclonedx-python-lib ships (cyclonedx/schema/_res/
bom-1.6.SNAPSHOT.schema.json with the SPDX license list and JSF schemas it refers to), pinned
in scripts/install-deps.sh. It is located through the installed package without importing
the library's code, and its references are resolved from those files only: nothing is read
from the network.

The schema leaves specVersion free ("type": "string"), so a file that says anything but
"1.6" is refused here: this schema is the only one it was checked against.

Usage: sbom_schema_check.py FILE.json [FILE.json ...]
Exit status: 0 every file is valid; 1 a file is not (each error printed with its JSON path);
2 the schema is not installed (or no file was named).
"""
import importlib.util
import json
import pathlib
import sys
import urllib.parse

try:
    import jsonschema
    import referencing
    import referencing.exceptions
    import referencing.jsonschema
except ImportError:
    print("sbom_schema_check: the pip package jsonschema (4.18 or newer, with referencing) is not "
          "installed (scripts/install-deps.sh installs it)", file=sys.stderr)
    sys.exit(2)

USAGE = "usage: sbom_schema_check.py FILE.json [FILE.json ...]"
PIP_PACKAGE = "cyclonedx-python-lib"
SPEC_VERSION = "1.6"
BOM_SCHEMA = "bom-1.6.SNAPSHOT.schema.json"
REFERENCED = ("spdx.SNAPSHOT.schema.json", "jsf-0.82.SNAPSHOT.schema.json")


def schema_dir():
    spec = importlib.util.find_spec("cyclonedx")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = pathlib.Path(location) / "schema" / "_res"
        if all((path / name).is_file() for name in (BOM_SCHEMA, *REFERENCED)):
            return path
    return None


def no_network(uri):
    raise referencing.exceptions.NoSuchResource(ref=uri)


def load_validator(directory):
    bom = json.loads((directory / BOM_SCHEMA).read_text(encoding="utf-8"))
    registry = referencing.Registry(retrieve=no_network)
    for name in REFERENCED:
        contents = json.loads((directory / name).read_text(encoding="utf-8"))
        resource = referencing.Resource.from_contents(
            contents, default_specification=referencing.jsonschema.DRAFT7)
        # The BOM schema names these files relative to its own $id, which is not the $id
        # they declare; both spellings lead to the local copy.
        registry = registry.with_resource(urllib.parse.urljoin(bom["$id"], name), resource)
        if "$id" in contents:
            registry = registry.with_resource(contents["$id"], resource)
    cls = jsonschema.validators.validator_for(bom)
    cls.check_schema(bom)
    return cls(bom, registry=registry, format_checker=cls.FORMAT_CHECKER)


def json_path(error):
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)


def describe(error):
    text = f"{json_path(error)}: {error.message}"
    # "not valid under any of the given schemas" says little; the branch that got deepest
    # into the document before failing is usually the one that was meant.
    if error.context:
        deepest = max(error.context, key=lambda e: len(e.absolute_path))
        text += f" (deepest: {json_path(deepest)}: {deepest.message})"
    return text if len(text) <= 400 else text[:397] + "..."


def main(files):
    if not files:
        print(USAGE, file=sys.stderr)
        return 2
    directory = schema_dir()
    if directory is None:
        print(f"sbom_schema_check: the CycloneDX 1.6 JSON schema is not installed; install the pip "
              f"package {PIP_PACKAGE} (scripts/install-deps.sh pins its version)", file=sys.stderr)
        return 2
    validator = load_validator(directory)
    status = 0
    for name in files:
        try:
            document = json.loads(pathlib.Path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            print(f"{name}: not JSON: {e}", file=sys.stderr)
            status = 1
            continue
        errors = sorted(validator.iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
        problems = [describe(e) for e in errors]
        version = document.get("specVersion") if isinstance(document, dict) else None
        if version != SPEC_VERSION:
            problems.insert(0, f"$.specVersion: {version!r} is not {SPEC_VERSION!r} "
                               f"(the only CycloneDX version this checks)")
        for problem in problems:
            print(f"{name}: {problem}", file=sys.stderr)
        if problems:
            status = 1
        else:
            print(f"{name}: valid CycloneDX {SPEC_VERSION}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
