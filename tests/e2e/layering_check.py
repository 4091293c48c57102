#!/usr/bin/env python3
"""Fails on an #include that crosses a layer or a core domain the wrong way.

The allowed arrows are ARCHITECTURE.md's tables; this file is their executable copy.
Layers: util <- core <- report/engine <- app. Inside core, each domain folder may include
only the domains listed for it. core also must not include headers that do I/O or read
the clock or environment.
"""
import pathlib
import re
import sys

LAYERS = {
    "util": set(),
    "core": {"util"},
    "report": {"util", "core"},
    "engine": {"util", "core"},
    "app": {"util", "core", "report", "engine"},
}
CORE_DOMAINS = {
    "json": set(),
    "grammar": set(),
    "knowledge": {"grammar"},
    "render": {"json", "knowledge", "pypi", "grammar", "validate", "kernels"},
    "build": {"json", "knowledge", "render", "grammar"},
    "validate": {"json", "knowledge", "kernels", "grammar", "pypi"},
    "diagnose": {"json", "knowledge", "validate", "kernels"},
    # Compiled into probes/kernels too: C++17, standard library only (not even util).
    "kernels": set(),
    "pypi": {"knowledge", "grammar"},
    # CycloneDX SBOMs: from a variant's lock (render) or an image's probes (validate).
    "sbom": {"pypi", "render", "validate", "knowledge", "kernels", "json", "grammar"},
    # The reference pages of every ID: validate's checks, doctor's findings, explain's
    # signatures.
    "reference": {"validate", "diagnose"},
    "fleet": {"diagnose", "validate", "json"},
}
# Domains that probes/ compile as well (C++17, standard library only): not even util, and
# no third-party header.
STANDALONE_DOMAINS = {"kernels"}
# System headers that would mean I/O, processes, the clock or the environment in core.
CORE_FORBIDDEN = re.compile(
    r"^(fstream|filesystem|chrono|thread|ctime|iostream|curl/.*|unistd\.h|fcntl\.h|sys/.*|CLI/.*)$")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def main() -> int:
    root = pathlib.Path(__file__).resolve().parents[2]
    src = root / "src"
    problems = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".hpp"):
            continue
        rel = path.relative_to(src)
        layer = rel.parts[0]
        if layer not in LAYERS:
            problems.append(f"{rel}: not in a known layer ({', '.join(LAYERS)})")
            continue
        domain = None
        if layer == "core":
            if len(rel.parts) < 3:
                problems.append(f"src/{rel}: core files live in a domain folder")
                continue
            domain = rel.parts[1]
            if domain not in CORE_DOMAINS:
                problems.append(f"src/{rel}: unknown core domain {domain!r}")
                continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, header = m.groups()
            where = f"src/{rel}:{n}"
            if domain in STANDALONE_DOMAINS and (
                    header.startswith(("nlohmann/", "util/", "CLI/", "catch2/"))):
                problems.append(f"{where}: core/{domain} is compiled into probes/ too, so it "
                                f"uses the standard library only, not {header}")
                continue
            if kind == "<":
                if layer == "core" and CORE_FORBIDDEN.match(header):
                    problems.append(f"{where}: core is pure, but includes <{header}>")
                if header.startswith("CLI/") and layer != "app":
                    problems.append(f"{where}: CLI11 belongs to app only")
                continue
            target = header.split("/")
            if target[0] not in LAYERS:
                continue
            if target[0] != layer and target[0] not in LAYERS[layer]:
                problems.append(f"{where}: {layer} must not include {header}")
            if layer == "core" and target[0] == "core":
                if len(target) < 3:
                    problems.append(f"{where}: {header} is not in a core domain")
                    continue
                other = target[1]
                if other != domain and other not in CORE_DOMAINS[domain]:
                    allowed = ", ".join(sorted(CORE_DOMAINS[domain])) or "no other domain"
                    problems.append(f"{where}: core/{domain} must not include {header} "
                                    f"(it may use: {allowed})")
    for p in problems:
        print(p)
    checked = sum(1 for p in src.rglob("*") if p.suffix in (".cpp", ".hpp"))
    if checked == 0:
        print("layering_check: no sources found")
        return 1
    print(f"layering_check: {checked} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
