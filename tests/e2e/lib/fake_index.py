#!/usr/bin/env python3
"""A local PEP 691 package index for the kb refresh tests: serves wheels built from the
recorded METADATA files (tests/data/pypi), answers HTTP Range requests (206), and serves
PEP 658 <wheel>.metadata for the projects named in --pep658 (their wheels themselves are
refused, so only the .metadata route works; the others must be read with range requests). Prints its port, then serves until killed.
With --cuda-lib FILE, the torch wheels also hold torch/lib/libtorch_cuda.so: FILE between
1.5 MB of pseudo-random bytes before it and 3 MB after, and answer Range requests (whole
downloads stay refused), so `kb refresh --arch-lists` can read its fatbins.
The xformers wheel (an extension, for `kb refresh --extensions`) holds xformers/_C.so, the
same bytes as torch's library when --cuda-lib is given, and xformers/_helpers.so with no GPU
code; its METADATA requires torch==2.9.1 and is read with range requests.
With --torch-metadata FILE the torch wheels carry FILE as their METADATA; with --delay S
every answer waits S seconds first (to overlap two kb refresh runs). A hostile xformers:
--xformers-metadata FILE is its METADATA, and --xformers-member NAME (repeatable; a Python
string literal, so "\\x1b" and "\\t" work) adds a member of that name holding the GPU library.
Usage: fake_index.py DATA_DIR [--cuda-lib FILE] [--torch-metadata FILE] [--delay S]
       [--xformers-metadata FILE] [--xformers-member NAME ...] [--pep658 PROJECT ...]"""
import hashlib, http.server, io, json, random, sys, time, zipfile

args = sys.argv[1:]
torch_metadata = "torch-2.11.0.METADATA"
if "--torch-metadata" in args:
    i = args.index("--torch-metadata")
    torch_metadata = args[i + 1]
    del args[i:i + 2]
delay = 0.0
if "--delay" in args:
    i = args.index("--delay")
    delay = float(args[i + 1])
    del args[i:i + 2]
xformers_metadata = "xformers-0.0.33.post2.METADATA"
if "--xformers-metadata" in args:
    i = args.index("--xformers-metadata")
    xformers_metadata = args[i + 1]
    del args[i:i + 2]
xformers_members = []
while "--xformers-member" in args:
    import ast
    i = args.index("--xformers-member")
    xformers_members.append(ast.literal_eval(args[i + 1]))
    del args[i:i + 2]
cuda_lib = None
if "--cuda-lib" in args:
    i = args.index("--cuda-lib")
    cuda_lib = open(args[i + 1], "rb").read()
    del args[i:i + 2]
data_dir = args[0]
pep658 = set(args[2:]) if len(args) > 1 and args[1] == "--pep658" else set()

def cuda_library():
    # Before the object: random bytes (a multiple of 8, so its fatbins stay 8-aligned);
    # after it: more, which the reader need not fetch.
    rng = random.Random(20251201)
    return rng.randbytes(1536 * 1024) + cuda_lib + rng.randbytes(3 * 1024 * 1024)

def wheel(dist, version, tag, metadata_file):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{dist}/__init__.py", "# padding so the member is not at offset 0\n" * 200)
        if dist == "torch" and cuda_lib is not None:
            z.writestr("torch/lib/libtorch_cuda.so", cuda_library())
        if dist == "xformers":
            if cuda_lib is not None:
                z.writestr("xformers/_C.so", cuda_library())
            z.writestr("xformers/_helpers.so", random.Random(7).randbytes(64 * 1024))
            for member in xformers_members:
                z.writestr(member, cuda_library() if cuda_lib is not None else b"\0" * 4096)
        z.writestr(f"{dist}-{version}.dist-info/METADATA", open(metadata_file if metadata_file.startswith("/") else f"{data_dir}/{metadata_file}").read())
        z.writestr(f"{dist}-{version}.dist-info/RECORD", "")
    return f"{dist}-{version}-{tag}.whl", buf.getvalue()

TORCH_TAGS = ["cp310-cp310", "cp311-cp311", "cp312-cp312", "cp313-cp313", "cp313-cp313t",
              "cp314-cp314", "cp314-cp314t"]
projects = {
    # The aarch64 wheels carry the same METADATA: PyPI's torch-2.11.0-cp313-cp313-
    # manylinux_2_28_aarch64.whl has a header byte-identical to the x86_64 one recorded here.
    "torch": [wheel("torch", "2.11.0", t + "-manylinux_2_28_" + m, torch_metadata)
              for t in TORCH_TAGS for m in ("x86_64", "aarch64")],
    "cuda-toolkit": [wheel("cuda_toolkit", "13.0.2", "py2.py3-none-any", "cuda-toolkit-13.0.2.METADATA")],
    "torchvision": [wheel("torchvision", "0.26.0", "cp313-cp313-manylinux_2_28_x86_64",
                          "torchvision-0.26.0.METADATA")],
    "torchaudio": [wheel("torchaudio", "2.11.1", "py3-none-manylinux_2_28_x86_64",
                         "torchaudio-2.11.1.METADATA")],
    "xformers": [wheel("xformers", "0.0.33.post2", "cp39-abi3-manylinux_2_28_x86_64",
                       xformers_metadata)],
}
files = {}
for project, wheels in projects.items():
    for name, blob in wheels:
        files[name] = (project, blob)

class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, code, body, ctype, extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if delay:
            time.sleep(delay)
        parts = self.path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "simple" and parts[1] in projects:
            page = {"meta": {"api-version": "1.1"}, "name": parts[1], "files": []}
            for name, blob in projects[parts[1]]:
                f = {"filename": name, "url": f"../../files/{name}", "size": len(blob),
                     "hashes": {"sha256": hashlib.sha256(blob).hexdigest()}, "yanked": False}
                if parts[1] in pep658:
                    md = zipfile.ZipFile(io.BytesIO(blob)).read(
                        [n for n in zipfile.ZipFile(io.BytesIO(blob)).namelist() if n.endswith("/METADATA")][0])
                    f["core-metadata"] = {"sha256": hashlib.sha256(md).hexdigest()}
                page["files"].append(f)
            return self.send(200, json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json")
        if len(parts) == 2 and parts[0] == "files":
            name = parts[1]
            if name.endswith(".metadata") and name[:-9] in files and files[name[:-9]][0] in pep658:
                blob = files[name[:-9]][1]
                z = zipfile.ZipFile(io.BytesIO(blob))
                md = z.read([n for n in z.namelist() if n.endswith("/METADATA")][0])
                return self.send(200, md, "application/octet-stream")
            if name in files:
                rng = self.headers.get("Range", "")
                ranged = cuda_lib is not None and files[name][0] == "torch" and rng
                if files[name][0] in pep658 and not ranged:  # metadata through PEP 658 only
                    return self.send(403, b"read the .metadata file", "text/plain")
                blob = files[name][1]
                if rng.startswith("bytes="):
                    a, b = rng[6:].split("-")
                    if a == "":
                        start, end = max(0, len(blob) - int(b)), len(blob) - 1
                    else:
                        start, end = int(a), min(int(b), len(blob) - 1)
                    return self.send(206, blob[start:end + 1], "application/octet-stream",
                                     [("Content-Range", f"bytes {start}-{end}/{len(blob)}")])
                return self.send(200, blob, "application/octet-stream")
        self.send(404, b"not found", "text/plain")

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
