#!/usr/bin/env python3
"""Generates data/catalogs/nccl.json: the format strings of NCCL's WARN(...) call sites
(src/**, the Linux build), each with its meaning from scripts/catalogs/meanings/nccl.json.

  python3 scripts/catalogs/gen_nccl.py --src DIR [--version V] --out data/catalogs

DIR is an NVIDIA/nccl source tree; the version defaults to makefiles/version.mk's
NCCL_MAJOR.NCCL_MINOR.NCCL_PATCH, the commit (generated_from) to `git rev-parse HEAD` or
the --commit given. NCCL's ncclResult_t codes are not repeated here (data/vocabularies/
nccl.json has them): this catalog holds the WARN lines NCCL prints before returning one.

Also the small C helper used by gen_slurm.py: c_call_formats() finds calls of the named
functions/macros whose first argument is a string literal (adjacent literals joined, a
macro parameter or constant between literals read as %s, PRIu64 & co. as %lu)."""
import os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

_COMMENT_OR_STRING = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S)
_ESC = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "r": "", "0": "", "a": "",
        "e": "", "?": "?"}


def strip_comments(text):
    """C/C++ text with comments blanked (newlines kept), strings untouched."""
    def repl(m):
        s = m.group(0)
        if s.startswith("/"):
            return re.sub(r"[^\n]", " ", s)
        return s
    return _COMMENT_OR_STRING.sub(repl, text)


def unescape_c(body):
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            n = body[i + 1]
            if n == "x":
                m = re.match(r"x[0-9a-fA-F]+", body[i + 1:])
                i += 1 + len(m.group(0)) if m else 2
                continue
            if n.isdigit():
                m = re.match(r"[0-7]{1,3}", body[i + 1:])
                i += 1 + len(m.group(0))
                continue
            out.append(_ESC.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


_TOKEN = re.compile(r'\s*(?:(?:u8|L|u|U)?"((?:[^"\\\n]|\\.)*)"|([A-Za-z_]\w*)|(.))', re.S)


def first_arg_format(text, pos):
    """The format string of the call whose argument list starts at text[pos] (just after
    '('), or None when the first argument is not made of string literals."""
    parts, saw_literal = [], False
    while True:
        m = _TOKEN.match(text, pos)
        if not m:
            return None
        pos = m.end()
        lit, ident, other = m.groups()
        if lit is not None:
            parts.append(unescape_c(lit))
            saw_literal = True
        elif ident is not None:
            if re.fullmatch(r"PRI[diouxX](?:8|16|32|64|MAX|PTR|LEAST\d+|FAST\d+)", ident):
                parts.append("l" + ident[3])  # the literal before it ends in "%"
            elif ident in ("__func__", "__FUNCTION__", "__FILE__"):
                return None
            else:
                parts.append("%s")
        elif other in (",", ")"):
            return "".join(parts) if saw_literal else None
        else:
            return None


def c_call_formats(text, funcs):
    """[(format string, offset, function)] for each call of one of `funcs` in C/C++ text."""
    text = strip_comments(text)
    rx = re.compile(r"(?<![\w.>:])(" + "|".join(map(re.escape, funcs)) + r")\s*\(")
    out = []
    for m in rx.finditer(text):
        # skip a definition/declaration such as "void error(const char *fmt, ...)"
        fmt = first_arg_format(text, m.end())
        if fmt and fmt.strip():
            out.append((fmt, m.start(), m.group(1)))
    return out


def git_commit(src):
    try:
        return subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def nccl_version(src):
    try:
        with open(os.path.join(src, "makefiles", "version.mk")) as f:
            v = dict(re.findall(r"^(NCCL_\w+)\s*:=\s*(\S*)", f.read(), re.M))
        return f"{v['NCCL_MAJOR']}.{v['NCCL_MINOR']}.{v['NCCL_PATCH']}"
    except (OSError, KeyError):
        return "unknown"


SKIP_FILES = re.compile(r"(^|/)windows[^/]*$|/tests?/")


def collect(src, version):
    msgs = []
    root = os.path.join(src, "src")
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if not fn.endswith((".cc", ".cu", ".h", ".c", ".cpp", ".hpp", ".cuh")):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, src).replace(os.sep, "/")
            if SKIP_FILES.search(rel):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for fmt, _, _ in c_call_formats(text, ["WARN"]):
                # debug.cc prints "host:pid:tid [dev] file:line (func) NCCL WARN <message>":
                # a message too short to stand alone keeps the "NCCL WARN " it is printed with
                if catalog_lib.to_template(fmt, "printf") is None:
                    fmt = "NCCL WARN " + fmt
                msgs.append((fmt, f"nccl {version} {rel}"))
    msgs.sort(key=lambda m: (m[1], m[0]))
    return msgs


def main():
    a = catalog_lib.generator_args(__doc__, "nccl").parse_args()
    version = a.version or nccl_version(a.src)
    commit = a.commit or git_commit(a.src)
    msgs = collect(a.src, version)
    gen = [f"NVIDIA/nccl v{version}" + (f" (commit {commit})" if commit else "")
           + ": WARN(...) call sites in src/**"]
    catalog_lib.emit("nccl", msgs, "printf", gen, a.out, a.meanings, a.list)


if __name__ == "__main__":
    main()
