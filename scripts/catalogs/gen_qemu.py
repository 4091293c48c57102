#!/usr/bin/env python3
"""Generates explain's message catalog of qemu-user (data/catalogs/qemu.json), the emulator
binfmt_misc runs foreign-architecture programs with (docker buildx / BuildKit builds of
another platform, `docker run --platform`), from qemu's own source.

    python3 scripts/catalogs/gen_qemu.py --src /tmp/catalog-src/qemu --version 10.0.2 \
        --commit "tag v10.0.2" --out data/catalogs
(see README-extra.md for how the tree was got: linux-user/, util/log.c and util/error.c of
qemu's release tarball; the version is read from its VERSION file unless --version says it.)

Read as C text (comments blanked, adjacent string literals and the format macros PRIx64,
TARGET_ABI_FMT_lx, TARGET_NAME ... joined):
  * error_report / error_setg / error_setg_errno / error_reportf_err / error_printf
    / cpu_abort / EXCP_DUMP / perror / warn_report call sites, and fprintf(stderr, ...)
    and printf("Error ...") (qemu-user's fatal paths print with them): errors;
  * qemu_log_mask(LOG_UNIMP, ...) ("Unsupported syscall: %d", "Unknown host QEMU_IFLA type"):
    printed only with -d unimp / QEMU_LOG=unimp (older releases printed them always), kept as
    warnings;
  * util/error.c's error_setg_file_open text ("Could not open '%s'": the loader named by
    PT_INTERP missing in the image), taken as qemu-user prints it: "qemu-%s: Could not open
    '%s': %s" (the program name error_report puts first, strerror error_setg_errno appends).
Never the debug prints (qemu_log_mask(CPU_LOG_*), DBG_FLT, nwfpe), strace.c's syscall
tracing, thunk.c's struct dumps, or the build-time vdso generator (gen-vdso*).
"""
import argparse, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402
from gen_c_messages import strip_comments, unescape, enclosing_calls  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DIRS = ["linux-user", "util/log.c", "util/error.c"]
SKIP_FILES = ("strace.c", "thunk.c", "gen-vdso.c", "gen-vdso-elfn.c.inc")
SKIP_DIRS = ("nwfpe",)
CALLS = {"error_report": "error", "error_setg": "error", "error_setg_errno": "error",
         "error_reportf_err": "error", "error_printf": "error", "cpu_abort": "error",
         "EXCP_DUMP": "error", "perror": "error", "warn_report": "warning",
         "error_prepend": "error"}
# format macros between literals: their printf conversion
MACROS = {"PRIx64": "llx", "PRIu64": "llu", "PRId64": "lld", "PRIx32": "x", "PRIu32": "u",
          "PRIxPTR": "lx",
          "TARGET_ABI_FMT_lx": "%lx", "TARGET_ABI_FMT_ld": "%ld", "TARGET_ABI_FMT_lu": "%lu",
          "TARGET_ABI_FMT_ptr": "%lx", "TARGET_FMT_lx": "%lx", "TARGET_NAME": "%s",
          "QEMU_FULL_VERSION": "%s", "HWADDR_FMT_plx": "%016llx"}
CALL = re.compile(r"\b(" + "|".join(CALLS) + r"|fprintf|printf|qemu_log_mask)\s*\(")
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
TOKEN = re.compile(r'\s*(?:"((?:[^"\\\n]|\\.)*)"|([A-Za-z_][A-Za-z0-9_]*))')


def format_arg(text, i):
    """The format string starting at text[i] (a quote or a macro): literals and format
    macros joined, or None."""
    parts, j, n = [], i, 0
    while True:
        m = TOKEN.match(text, j)
        if not m:
            break
        if m.group(1) is not None:
            parts.append(unescape(m.group(1)))
        elif m.group(2) in MACROS:
            parts.append(MACROS[m.group(2)])
        else:
            break
        n += 1
        j = m.end()
    if not any(p for p in parts):
        return None
    return "".join(parts)


def split_args(text, start):
    """Top-level argument start offsets of the call whose '(' ends at start (and its end)."""
    depth, i, starts = 0, start, [start]
    while i < len(text):
        c = text[i]
        if c == '"':
            m = STRING.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return starts, i
            depth -= 1
        elif c == "," and depth == 0:
            starts.append(i + 1)
        elif c == ";" and depth == 0:
            break
        i += 1
    return starts, i


def messages(src):
    out = []
    for d in DIRS:
        root = os.path.join(src, d)
        paths = [root] if os.path.isfile(root) else []
        for dp, dn, fn in os.walk(root):
            dn[:] = sorted(x for x in dn if x not in SKIP_DIRS)
            paths += [os.path.join(dp, f) for f in sorted(fn)
                      if f.endswith((".c", ".h", ".c.inc")) and f not in SKIP_FILES]
        for path in paths:
            rel = os.path.relpath(path, src)
            with open(path, errors="replace") as fh:
                text = strip_comments(fh.read())
            if rel == "util/error.c":
                # error_setg_file_open: the one text of util/error.c a qemu-user user sees.
                # error_report prints it after the program's name (qemu-x86_64: ...) and
                # error_setg_errno after it strerror; the bare text is too short a template.
                for m in re.finditer(r'"(Could not open [^"]*)"', text):
                    out.append(("qemu-%s: " + unescape(m.group(1)) + ": %s", "error", rel))
                continue
            for m in CALL.finditer(text):
                name = m.group(1)
                starts, end = split_args(text, m.end())
                args = [text[s:e - 1 if k + 1 < len(starts) else end].strip()
                        for k, (s, e) in enumerate(zip(starts, starts[1:] + [end + 1]))]
                sev = CALLS.get(name)
                if name == "fprintf":
                    if not args or args[0] != "stderr":
                        continue
                    sev = "error"
                elif name == "printf":
                    fmt0 = format_arg(text, starts[0])
                    if not fmt0 or not re.match(r"\s*(Error|qemu:)", fmt0):
                        continue  # usage, version and debug output
                    sev = "error"
                elif name == "qemu_log_mask":
                    if not args or args[0] != "LOG_UNIMP":
                        continue  # CPU_LOG_* debug logging
                    sev = "warning"
                # the format string: the first argument that is a literal (or starts with one)
                fmt = None
                for k, s in enumerate(starts):
                    if name in ("error_setg", "error_setg_errno", "error_reportf_err",
                                "cpu_abort", "EXCP_DUMP", "fprintf", "qemu_log_mask",
                                "error_prepend") and k == 0:
                        continue
                    if name == "error_setg_errno" and k == 1:
                        continue
                    fmt = format_arg(text, s)
                    if fmt is not None:
                        break
                if not fmt or not fmt.strip(" \n%s:"):
                    continue
                if name == "error_setg_errno" or name == "perror":
                    fmt = fmt.rstrip("\n") + ": %s"  # qemu appends strerror(errno)
                out.append((fmt, sev, rel))
    return out


def qemu_version(src):
    try:
        with open(os.path.join(src, "VERSION")) as fh:
            return fh.read().strip()
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True, help="qemu source tree (linux-user/, util/)")
    ap.add_argument("--version", default=None)
    ap.add_argument("--commit", default="")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "data", "catalogs"))
    ap.add_argument("--meanings", default=os.path.join(HERE, "meanings", "qemu.json"))
    ap.add_argument("--list", action="store_true", help="print the messages, write nothing")
    a = ap.parse_args()
    version = a.version or qemu_version(a.src)
    found = sorted(set(messages(a.src)), key=lambda t: (t[1] != "error", t[2], t[0]))
    msgs = [(f, f"qemu {version} {rel}", sev) for f, sev, rel in found]
    if a.list:
        for f, source, sev in msgs:
            print(f"{sev}\t{source}\t{f!r}")
        return
    meanings = catalog_lib.load_meanings(a.meanings)
    entries, stats = catalog_lib.build_entries("qemu", msgs, meanings, "printf")
    gen = [f"qemu {version}" + (f" ({a.commit})" if a.commit else "") + ": " +
           ", ".join(DIRS) + " by scripts/catalogs/gen_qemu.py"]
    catalog_lib.write_catalog(a.out, "qemu", meanings.get("about"), gen, entries, stats)


if __name__ == "__main__":
    main()
