#!/usr/bin/env python3
"""Generates the catalogs of tools written in C and C++ whose messages are marked for
translation (gettext `_("...")`/`N_("...")`): apt, dpkg and glibc's dynamic loader.

Usage: gen_c_messages.py --tool apt|dpkg|glibc --src DIR --version V [--commit SHA]
                         [--out data/catalogs]
DIR is the tool's source tree at the pinned version (see README-c.md). A message is kept
when the innermost call that holds it is one of the tool's error reporters (apt's
_error->Error/Errno/Fatal/Warning, dpkg's ohshit/ohshite/badusage/warning/notice, the
loader's _dl_signal_error and the errstring assignments of elf/*.c); warnings rank below
errors through their meanings file's default."""
import argparse, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402

TOOLS = {
    "apt": {
        "dirs": ["apt-pkg", "apt-private", "cmdline", "methods", "ftparchive"],
        "ext": (".cc", ".h"),
        "calls": {"Error": "error", "Errno": "error", "Fatal": "error", "Warning": "warning",
                  "FatalE": "error", "WarningE": "warning", "strprintf": "error",
                  "Message": "error", "Fail": "error", "Insert": "error"},
        "about": "apt's error and warning messages (apt-get, apt, apt-cache and the acquire "
                 "methods), from apt's sources",
    },
    "dpkg": {
        "dirs": ["src", "lib/dpkg", "utils", "dpkg-deb", "dpkg-split"],
        "ext": (".c", ".h"),
        "calls": {"ohshit": "error", "ohshite": "error", "ohshitv": "error",
                  "badusage": "error", "notice": "error", "warning": "warning",
                  "print_error_perpackage": "error", "dpkg_put_error": "error",
                  "dpkg_put_errno": "error", "varbuf_printf": "error"},
        "about": "dpkg's error and warning messages (dpkg, dpkg-deb, dpkg-split and the "
                 "libdpkg they share), from dpkg's sources",
    },
    "glibc": {
        "dirs": ["elf", "dlfcn"],
        "ext": (".c", ".h"),
        "calls": {"_dl_signal_error": "error", "_dl_signal_cerror": "error",
                  "_dl_exception_create_format": "error", "_dl_exception_create": "error",
                  "_dl_fatal_printf": "error", "_dl_error_printf": "error",
                  "lose": "error", "_dl_signal_cexception": "error"},
        "direct": ["_dl_exception_create_format", "_dl_signal_error", "_dl_fatal_printf",
                   "_dl_error_printf"],
        "skip_files": ["rtld.c", "ldconfig.c", "sprof.c", "pldd.c", "cache.c",
                       "readlib.c", "dl-usage.c", "chroot_canon.c", "pldd-xx.c",
                       "readelflib.c", "dl-diagnostics.c", "dl-main.h", "dl-tunables.c"],
        "about": "glibc's dynamic loader (ld.so) and dlopen messages, the text of every "
                 "`error while loading shared libraries` and dlopen failure, from glibc's "
                 "sources",
    },
}

ERROR_VARIABLE = r"\b\w*(?:err|Err|ERR|msg|Msg|Message)\w*\s*=\s*(?:N?_\(\s*)?$"
STRING = re.compile(r'"((?:[^"\\\n]|\\.|\\\n)*)"')
ESC = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "r": "\r", "a": "", "0": ""}


def unescape(s):
    s = s.replace("\\\n", "")  # a backslash-newline continues the literal
    return re.sub(r"\\(.)", lambda m: ESC.get(m.group(1), m.group(1)), s)


def strip_comments(text):
    """Comments become blanks of the same length, so offsets stay valid."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'',
                  lambda m: m.group(0) if m.group(0)[0] in "\"'" else blank(m), text,
                  flags=re.S)


def literal_at(text, i):
    """The concatenated string literals starting at text[i] (a quote): (value, end)."""
    parts = []
    while True:
        m = STRING.match(text, i)
        if not m:
            break
        parts.append(unescape(m.group(1)))
        i = m.end()
        j = i
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        if j < len(text) and text[j] == '"':
            i = j
            continue
        break
    return "".join(parts), i


def enclosing_calls(text, pos, limit=1200):
    """Names of the calls around text[pos], innermost first (a backward paren scan)."""
    names, depth, i = [], 0, pos - 1
    stop = max(0, pos - limit)
    while i >= stop:
        c = text[i]
        if c == ")":
            depth += 1
        elif c == "(":
            if depth == 0:
                m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", text[max(0, i - 80):i])
                names.append(m.group(1) if m else "")
                if len(names) == 3:
                    break
            else:
                depth -= 1
        elif c == ";" or c == "{" or c == "}":
            if depth == 0:
                break
        i -= 1
    return names


def messages(tool, src):
    cfg = TOOLS[tool]
    out = []
    for d in cfg["dirs"]:
        root = os.path.join(src, d)
        for dirpath, dirnames, files in os.walk(root):
            dirnames.sort()
            for name in sorted(files):
                if not name.endswith(cfg["ext"]) or name in cfg.get("skip_files", []):
                    continue
                if "test" in name:
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, src)
                with open(path, errors="replace") as f:
                    text = strip_comments(f.read())
                direct = "|".join(re.escape(c) for c in cfg.get("direct", []))
                starts = r'\bN?_\(\s*"' + (rf'|\b(?:{direct})\s*\([^;"]*?"' if direct else "")
                for m in re.finditer(starts, text):
                    value, _ = literal_at(text, m.end() - 1)
                    calls = [c for c in enclosing_calls(text, m.end() - 1) if c not in ("_", "N_")]
                    severity = next((cfg["calls"][c] for c in calls if c in cfg["calls"]), None)
                    before = text[max(0, m.start() - 60):m.start()]
                    if severity is None and re.search(ERROR_VARIABLE, before):
                        severity = "error"  # errstring = N_("..."), msgstr = _("...")
                    if not value.strip():
                        continue
                    # any other translatable string is kept only where a meaning rule names it
                    out.append((value, severity or "candidate", rel))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True, choices=sorted(TOOLS))
    ap.add_argument("--src", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--commit", default="")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "data",
                                                  "catalogs"))
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    meanings = catalog_lib.load_meanings(os.path.join(here, "meanings", f"{args.tool}.json"))
    found = messages(args.tool, args.src)
    # errors first, so a message printed both ways gets the error's meaning
    found.sort(key=lambda t: (t[1] != "error", t[2], t[0]))
    msgs = [(v, f"{args.tool} {args.version} {rel}", sev) for v, sev, rel in found]
    entries, stats = catalog_lib.build_entries(args.tool, msgs, meanings, "printf")
    gen = [f"{args.tool} {args.version}" + (f" (commit {args.commit})" if args.commit else "") +
           ": " + ", ".join(TOOLS[args.tool]["dirs"]) + " by scripts/catalogs/gen_c_messages.py"]
    catalog_lib.write_catalog(args.out, args.tool, TOOLS[args.tool]["about"], gen, entries, stats)


if __name__ == "__main__":
    main()
