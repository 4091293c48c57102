#!/usr/bin/env python3
"""Generates data/vocabularies/providers.json: what provides a shared object, a header or a
command, for explain's "the missing thing is named and mapped".

* Wheels: every .so and header a wheel's RECORD lists (the dist-info directories under
  --wheels SITE_PACKAGES, e.g. an image's site-packages with torch and its nvidia-*-cu12
  wheels), cited as "PyPI <name> <version> (<path in the wheel>)".
* Debian: the sonames and headers in SONAMES/HEADERS below that an installed package of this
  host owns (`dpkg -S`), cited as "Debian <package> <version> (<path>; dpkg -S on Debian
  <release>)". Nothing is guessed for files no installed package owns.
Usage: gen_providers.py --wheels SITE_PACKAGES [--out data/vocabularies/providers.json]"""
import argparse, glob, json, os, re, subprocess

# The sonames and headers users report missing in PyTorch/CUDA images (from the explain
# corpus and held-out logs); the command providers are transcribed below with their sources.
SONAMES = """libGL.so.1 libGLX.so.0 libglib-2.0.so.0 libgthread-2.0.so.0 libgomp.so.1 libstdc++.so.6
libnuma.so.1 libSM.so.6 libXext.so.6 libXrender.so.1 libxcb.so.1 libjpeg.so.62 libpng16.so.16
libz.so.1 libssl.so.3 libcrypto.so.3 libffi.so.8 libgfortran.so.5 libasound.so.2 libtinfo.so.6
libncurses.so.6 libncursesw.so.6 libbz2.so.1.0 liblzma.so.5 libsqlite3.so.0 libquadmath.so.0
libatomic.so.1 libomp.so.5 libedit.so.2 libpython3.11.so.1.0 libaio.so.1 libibverbs.so.1
libsndfile.so.1 libopenblas.so.0 libmpi.so.40 librdmacm.so.1""".split()
HEADERS = "Python.h zlib.h ffi.h omp.h".split()


def wheel_files(sp):
    out = {}
    for rec in sorted(glob.glob(os.path.join(sp, "*.dist-info", "RECORD"))):
        dist = os.path.basename(os.path.dirname(rec))[:-len(".dist-info")]
        name, ver = dist.rsplit("-", 1)
        meta = open(os.path.join(os.path.dirname(rec), "METADATA"), errors="replace").read()
        m = re.search(r"^Name: (.+)$", meta, re.M)
        name = m.group(1).strip() if m else name
        for line in open(rec):
            path = line.split(",")[0]
            base = os.path.basename(path)
            if re.search(r"\.so(\.\d+)*$", base) or (base.endswith(".h") and "/include/" in path):
                if base.endswith(".h") and not path.startswith("nvidia/"):
                    continue  # torch's own headers are not what a build misses
                out.setdefault(base, []).append(f"PyPI {name} {ver} ({path})")
    return out


def debian(names):
    rel = open("/etc/debian_version").read().strip()
    out = {}
    for n in names:
        r = subprocess.run(["dpkg", "-S", f"*/{n}"], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            pkg, path = line.split(": ", 1)
            pkg = pkg.split(":")[0].split(",")[0]
            if os.path.basename(path) != n:
                continue
            ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                                 capture_output=True, text=True).stdout
            out.setdefault(n, []).append(f"Debian {pkg} {ver} ({path}; dpkg -S on Debian {rel})")
            break
    return out


COMMANDS = {
    "nvcc": ["PyPI nvidia-cuda-nvcc-cu12 (bin/nvcc)", "CUDA toolkit (cuda-nvcc component, bin/nvcc)"],
    "ninja": ["PyPI ninja (bin/ninja)", "Debian ninja-build (/usr/bin/ninja)"],
    "gcc": ["Debian gcc (/usr/bin/gcc)"], "g++": ["Debian g++ (/usr/bin/g++)"],
    "cmake": ["PyPI cmake (bin/cmake)", "Debian cmake (/usr/bin/cmake)"],
    "git": ["Debian git (/usr/bin/git)"],
    "nvidia-smi": ["Debian nvidia-smi (/usr/bin/nvidia-smi; the host's driver, mounted into containers by the NVIDIA container toolkit)"],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheels", required=True)
    ap.add_argument("--out", default="data/vocabularies/providers.json")
    a = ap.parse_args()
    prov = wheel_files(a.wheels)
    # Keep wheel sonames that a user can miss: the CUDA libraries and torch's own.
    prov = {k: v for k, v in prov.items()
            if k.endswith(".h") or any(s in v[0] for s in ("nvidia-", "PyPI torch ", "PyPI triton "))}
    for k, v in debian(SONAMES + HEADERS).items():
        prov.setdefault(k, []).extend(v)
    for k, v in COMMANDS.items():
        prov.setdefault(k, []).extend(v)
    dists = sorted({c.split(" (")[0] for v in prov.values() for c in v if c.startswith("PyPI ") and c.count(" ") >= 3})
    doc = {"schema": 1, "tier": "providers",
           "about": "What provides a shared object, header or command (explain names it for a missing one)",
           "generator": "scripts/vocab/gen_providers.py",
           "generated_from": dists + ["dpkg -S on Debian " + open("/etc/debian_version").read().strip()],
           "providers": dict(sorted(prov.items()))}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=0, ensure_ascii=False)
        f.write("\n")
    print(f"{a.out}: {len(prov)} names")


if __name__ == "__main__":
    main()
