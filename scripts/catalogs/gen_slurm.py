#!/usr/bin/env python3
"""Generates data/catalogs/slurm.json: the messages a Slurm job's user sees fail, from
SchedMD/slurm's own source, each with its meaning from scripts/catalogs/meanings/slurm.json.

  python3 scripts/catalogs/gen_slurm.py --src DIR [--version V] [--commit C] --out data/catalogs

Read from DIR (a SchedMD/slurm tree; the version defaults to META's Version-Release):
  * src/common/slurm_errno.c: the slurm_strerror() table (ESLURM_* code -> message), the
    text srun/sbatch/salloc print after "error: ...: " for a failed request;
  * error("...") and fatal("...") call sites in the client commands and what runs a job
    step (FILES below: srun, sbatch, salloc, slurmstepd, the gres/task/cgroup plugins, the
    option parsing and step-launch code the commands share).
Slurm's own %pJ/%pS/%ps/... (a job/step printed as "JobId=N", "StepId=N.M") and %m read as
text. Warnings, info and debug prints are not read."""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402
from gen_nccl import c_call_formats, git_commit, unescape_c  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

DIRS = ["src/srun", "src/sbatch", "src/salloc", "src/slurmd/slurmstepd", "src/plugins/gres",
        "src/plugins/task", "src/plugins/cgroup"]
FILES = ["src/common/proc_args.c", "src/common/slurm_opt.c", "src/common/spank.c",
         "src/api/step_launch.c", "src/api/allocate.c"]
ERRNO = "src/common/slurm_errno.c"
SLURM_PCT = re.compile(r"%p[A-Za-z]")


def slurm_version(src):
    try:
        with open(os.path.join(src, "META")) as f:
            meta = dict(re.findall(r"^\s*(\w+):\s*(\S+)", f.read(), re.M))
        rel = meta.get("Release", "")
        return meta["Version"] + (f"-{rel}" if rel else "")
    except (OSError, KeyError):
        return "unknown"


def errno_table(text):
    """[message] of slurm_errtab[]: ERRTAB_ENTRY(CODE), "message" (adjacent literals joined)."""
    out = []
    for m in re.finditer(r'ERRTAB_ENTRY\(\s*(\w+)\s*\)\s*,\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', text):
        lits = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))
        msg = unescape_c("".join(lits)).replace("%", "%%")
        out.append((m.group(1), msg))
    return out


def sources(src):
    files = []
    for d in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(src, d)):
            dirnames.sort()
            files += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith((".c", ".h"))]
    files += [os.path.join(src, f) for f in FILES]
    return sorted(set(f for f in files if os.path.isfile(f)))


def collect(src, version):
    msgs = []
    with open(os.path.join(src, ERRNO), encoding="utf-8", errors="replace") as f:
        for _, msg in errno_table(f.read()):
            msgs.append((msg, f"slurm {version} {ERRNO}"))
    for path in sources(src):
        rel = os.path.relpath(path, src).replace(os.sep, "/")
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for fmt, _, func in c_call_formats(text, ["error", "fatal"]):
            fmt = SLURM_PCT.sub("%s", fmt)
            # log.c prints "<prog>: error: <message>" ("fatal: "): a message too short to
            # stand alone keeps the prefix it is printed with
            if catalog_lib.to_template(fmt, "printf") is None:
                fmt = f"{func}: {fmt}"
            msgs.append((fmt, f"slurm {version} {rel}"))
    msgs.sort(key=lambda m: (m[1], m[0]))
    return msgs


def main():
    a = catalog_lib.generator_args(__doc__, "slurm").parse_args()
    version = a.version or slurm_version(a.src)
    commit = a.commit or git_commit(a.src)
    msgs = collect(a.src, version)
    gen = [f"SchedMD/slurm {version}" + (f" (commit {commit})" if commit else "")
           + ": " + ERRNO + " (slurm_strerror table); error()/fatal() call sites in "
           + ", ".join(DIRS + FILES)]
    catalog_lib.emit("slurm", msgs, "printf", gen, a.out, a.meanings, a.list)


if __name__ == "__main__":
    main()
