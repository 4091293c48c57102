#!/usr/bin/env python3
"""docs/manifest-reference.md from schema/manifest.schema.json: every key of a manifest with
its type, whether it is required, what it means and what it accepts. The schema is the one
source; the `docs_generated` test fails when the committed page differs from this output.

Usage: gen_manifest_reference.py [SCHEMA] > docs/manifest-reference.md
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def resolve(node, defs):
    ref = node.get("$ref", "")
    return defs.get(ref.rsplit("/", 1)[-1], {}) if ref else node


def type_of(node, defs):
    node = resolve(node, defs)
    t = node.get("type", "")
    if t == "array":
        return "array of " + (type_of(node.get("items", {}), defs) or "values")
    if isinstance(t, list):
        return " or ".join(t)
    return t or ("one of" if "oneOf" in node or "anyOf" in node else "")


def accepts(node, defs):
    node = resolve(node, defs)
    if node.get("type") == "array":
        return accepts(node.get("items", {}), defs)
    if "enum" in node:
        return ", ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    if "pattern" in node:
        return f"pattern `{node['pattern']}`"
    parts = []
    for k, word in (("minimum", "at least"), ("maximum", "at most"), ("minLength", "length at least"),
                    ("maxLength", "length at most")):
        if k in node:
            parts.append(f"{word} {node[k]}")
    return ", ".join(parts)


def rows(props, required, defs, prefix):
    out = []
    for key, node in props.items():
        path = f"{prefix}.{key}" if prefix else key
        real = resolve(node, defs)
        desc = node.get("description") or real.get("description", "")
        out.append(f"| `{path}` | {cell(type_of(node, defs))} | {'yes' if key in required else ''} | "
                   f"{cell(desc)} | {cell(accepts(node, defs))} |")
        if real.get("type") == "object" and "properties" in real:
            out += rows(real["properties"], real.get("required", []), defs, path)
    return out


def main():
    schema_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "schema/manifest.schema.json")
    schema = json.load(open(schema_path, encoding="utf-8"))
    defs = schema.get("$defs", {})
    print("# Manifest reference (schema 1)\n")
    print("Generated from `schema/manifest.schema.json` by `scripts/gen_manifest_reference.py`; "
          "do not edit by hand (the `docs_generated` test compares). What a manifest is and how "
          "families expand: [manifest.md](manifest.md).\n")
    print(cell(schema.get("description", "")) + "\n")
    print("| key | type | required | meaning | accepts |")
    print("|---|---|---|---|---|")
    print("\n".join(rows(schema["properties"], schema.get("required", []), defs, "")))


if __name__ == "__main__":
    main()
