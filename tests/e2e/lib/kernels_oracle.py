#!/usr/bin/env python3
"""Compares probe-kernels with cuobjdump on real objects.

Usage: kernels_oracle.py CUOBJDUMP PROBE_STDOUT PATH...
For each PATH (an object the probe listed), runs `cuobjdump --list-elf --list-ptx PATH`
and checks that the probe's executable group (or, with no .nv_fatbin, its relocatable
group, as cuobjdump falls back to it) has the same ELF and PTX architectures and the same
number of each. cuobjdump names a family-specific cubin without its `f` (sm_100f SASS is
listed as sm_100; PTX keeps it), so the probe's SASS names are compared that way.
Prints one line per object; exits 1 on any difference.
"""
import collections
import json
import re
import subprocess
import sys

LINE = re.compile(r"^(ELF|PTX) file +\d+: .*\.([a-z_0-9]+)\.(cubin|ptx)$")


def main() -> int:
    cuobjdump, probe_out, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    last = open(probe_out, encoding="utf-8").read().splitlines()[-1]
    objects = {o["path"]: o for o in json.loads(last)["data"]["objects"]}
    bad = 0
    for path in paths:
        o = objects.get(path)
        if o is None:
            print(f"BAD {path}: not in the probe's objects")
            bad += 1
            continue
        out = subprocess.run([cuobjdump, "--list-elf", "--list-ptx", path],
                             capture_output=True, text=True, check=False).stdout
        want = {"ELF": collections.Counter(), "PTX": collections.Counter()}
        for line in out.splitlines():
            m = LINE.match(line)
            if m:
                want[m.group(1)][m.group(2)] += 1
        g = o["executable"] or o["relocatable"] or {"sass": [], "ptx": [], "sass_entries": 0,
                                                    "ptx_entries": 0}
        ours_elf = sorted({re.sub(r"f$", "", s) for s in g["sass"]})
        ours_ptx = sorted({p["arch"].replace("compute_", "sm_") for p in g["ptx"]})
        same = (ours_elf == sorted(want["ELF"]) and ours_ptx == sorted(want["PTX"])
                and g["sass_entries"] == sum(want["ELF"].values())
                and g["ptx_entries"] == sum(want["PTX"].values()))
        summary = (f"ELF {sum(want['ELF'].values())} {' '.join(sorted(want['ELF']))}; "
                   f"PTX {sum(want['PTX'].values())} {' '.join(sorted(want['PTX']))}")
        if same:
            print(f"ok  {path}: {summary}")
        else:
            bad += 1
            print(f"BAD {path}: cuobjdump {summary}; probe ELF {g['sass_entries']} "
                  f"{' '.join(ours_elf)}; PTX {g['ptx_entries']} {' '.join(ours_ptx)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
