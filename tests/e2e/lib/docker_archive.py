#!/usr/bin/env python3
"""Writes a `docker load` archive (docker-archive: manifest.json, image configs, one
uncompressed tar per layer) to standard output, for images of any platform made from files on
this host: what a registry pull of such an image gives the engine, without BuildKit (so no
build context is cached) and without running any of the image's code.

Usage: docker_archive.py SPEC.json | docker load
SPEC: {"platform": "linux/arm64",
       "layers": {"NAME": {"tar": "/path/layer.tar"}
                      or {"dir": "/path", "at": "usr/local/lib/python3.11/dist-packages"}, ...},
       "images": [{"tag": "repo:tag", "layers": ["NAME", ...] (bottom first),
                   "labels": {"k": "v"}, "cmd": ["/usr/bin/python3"]}, ...]}
A "dir" layer puts the directory's tree at "at" (parents included), sorted, with fixed times
and owners, so it is written twice identically: once to learn its digest and size, once into
the archive; no layer tarball is written to disk. Layers shared by images are written once.
"""
import hashlib
import io
import json
import os
import sys
import tarfile
import threading


class Sink:
    """A write-only file that hashes and counts."""

    def __init__(self):
        self.sha, self.size = hashlib.sha256(), 0

    def write(self, b):
        self.sha.update(b)
        self.size += len(b)
        return len(b)


def write_dir_layer(fileobj, root, at):
    with tarfile.open(fileobj=fileobj, mode="w|", format=tarfile.PAX_FORMAT) as t:
        def norm(info):
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "root", "root"
            return info
        parts = at.strip("/").split("/")
        for i in range(1, len(parts)):
            d = tarfile.TarInfo("/".join(parts[:i]))
            d.type, d.mode = tarfile.DIRTYPE, 0o755
            t.addfile(norm(d))
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel = os.path.relpath(dirpath, root)
            base = at.strip("/") if rel == "." else at.strip("/") + "/" + rel
            t.add(dirpath, arcname=base, recursive=False, filter=norm)
            for name in sorted(filenames):
                t.add(os.path.join(dirpath, name), arcname=base + "/" + name, filter=norm)


def layer_digest(layer):
    sink = Sink()
    if "tar" in layer:
        with open(layer["tar"], "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                sink.write(block)
    else:
        write_dir_layer(sink, layer["dir"], layer["at"])
    return "sha256:" + sink.sha.hexdigest(), sink.size


def add_layer(out, name, layer, size):
    info = tarfile.TarInfo(name)
    info.size, info.mtime = size, 0
    if "tar" in layer:
        with open(layer["tar"], "rb") as f:
            out.addfile(info, f)
        return
    r, w = os.pipe()
    writer = threading.Thread(target=_write_and_close, args=(w, layer))
    writer.start()
    with os.fdopen(r, "rb") as f:
        out.addfile(info, f)
    writer.join()


def _write_and_close(fd, layer):
    with os.fdopen(fd, "wb") as f:
        write_dir_layer(f, layer["dir"], layer["at"])


def add_bytes(out, name, data):
    info = tarfile.TarInfo(name)
    info.size, info.mtime = len(data), 0
    out.addfile(info, io.BytesIO(data))


def main():
    spec = json.load(open(sys.argv[1]))
    os_name, arch = spec["platform"].split("/")[:2]
    facts = {name: layer_digest(layer) for name, layer in spec["layers"].items()}
    manifest = []
    with tarfile.open(fileobj=sys.stdout.buffer, mode="w|") as out:
        for name, layer in spec["layers"].items():
            digest, size = facts[name]
            add_layer(out, digest[7:] + "/layer.tar", layer, size)
        for image in spec["images"]:
            config = {
                "architecture": arch,
                "os": os_name,
                "config": {"Labels": image.get("labels", {}), "Cmd": image.get("cmd"),
                           "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},
                "rootfs": {"type": "layers", "diff_ids": [facts[n][0] for n in image["layers"]]},
                "history": [{"created_by": "tests/e2e/lib/docker_archive.py " + n} for n in image["layers"]],
            }
            data = json.dumps(config, sort_keys=True).encode()
            config_name = hashlib.sha256(data).hexdigest() + ".json"
            add_bytes(out, config_name, data)
            manifest.append({"Config": config_name, "RepoTags": [image["tag"]],
                             "Layers": [facts[n][0][7:] + "/layer.tar" for n in image["layers"]]})
        add_bytes(out, "manifest.json", json.dumps(manifest).encode())


if __name__ == "__main__":
    main()
