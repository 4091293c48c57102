#!/usr/bin/env python3
"""A fault-injecting OCI registry for `torchdock lock` tests (stdlib only, loopback only).

Usage: fake_registry.py WORKDIR
Binds 127.0.0.1 on a free port and writes the port to WORKDIR/port. Before each request it
reads the fault mode from WORKDIR/mode (one word, see MODES). WORKDIR/requests.log gets
"RAW <request line>" for every request as it arrived (also ones that are not HTTP) and
"METHOD PATH auth=<Authorization> injected=<X-Injected>" for each HTTP request; bytes
streamed before the client hung up go to WORKDIR/streamed.log.
"""
import hashlib
import http.server
import json
import pathlib
import sys
import time

INDEX = json.dumps({
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.index.v1+json",
    "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": "sha256:" + "ab" * 32,
        "size": 525,
        "platform": {"architecture": "amd64", "os": "linux"},
    }],
}).encode()
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
INDEX_DIGEST = "sha256:" + hashlib.sha256(INDEX).hexdigest()
OTHER_DIGEST = "sha256:" + "22" * 32
# An index of two platforms and a BuildKit attestation manifest (platform unknown/unknown).
MULTIARCH = json.dumps({
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.index.v1+json",
    "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + "ab" * 32,
         "size": 525, "platform": {"architecture": "amd64", "os": "linux"}},
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + "cd" * 32,
         "size": 525, "platform": {"architecture": "arm64", "os": "linux", "variant": "v8"}},
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + "ef" * 32,
         "size": 840, "platform": {"architecture": "unknown", "os": "unknown"},
         "annotations": {"vnd.docker.reference.type": "attestation-manifest"}},
    ],
}).encode()
# One image manifest, no index.
SINGLE = json.dumps({
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
               "digest": "sha256:" + "12" * 32, "size": 1469},
    "layers": [],
}).encode()
TOKEN = "good-token"

# mode -> what a manifest request gets (a token request is answered by token_*).
MODES = {
    "ok", "nodigest", "bearer", "portal", "octet", "stream", "shape", "notjson",
    "mismatch", "twodigests", "badctype", "realm_file", "realm_dict", "crlf_token",
    "nochallenge", "gone", "ratelimit", "escapes", "longdigest", "loop", "redirect",
    "redirect_file", "hang", "multiarch", "single",
}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):  # quiet; requests.log is the record
        pass

    def work(self) -> pathlib.Path:
        return self.server.work

    def mode(self) -> str:
        try:
            return (self.work() / "mode").read_text().strip()
        except OSError:
            return "ok"

    def parse_request(self):
        # Every request line as it arrived, also ones that are not HTTP (a DICT client).
        with open(self.work() / "requests.log", "a") as f:
            f.write("RAW " + self.raw_requestline.decode("latin-1").rstrip("\r\n") + "\n")
        return super().parse_request()

    def record(self):
        with open(self.work() / "requests.log", "a") as f:
            f.write(f"{self.command} {self.path} auth={self.headers.get('Authorization', '')} "
                    f"injected={self.headers.get('X-Injected', '')}\n")

    def answer(self, status, headers=(), body=b""):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def manifest(self, headers=(("Docker-Content-Digest", INDEX_DIGEST),), ctype=INDEX_TYPE):
        self.answer(200, [("Content-Type", ctype), *headers], INDEX)

    def challenge(self, realm):
        self.answer(401, [("WWW-Authenticate",
                           f'Bearer realm="{realm}",service="fake",scope="repository:x:pull"')],
                    b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}')

    def do_HEAD(self):
        self.handle_any()

    def do_GET(self):
        self.handle_any()

    def handle_any(self):
        self.record()
        mode = self.mode()
        port = self.server.server_port
        if self.path.startswith("/token"):
            token = "abc\r\nX-Injected: yes" if mode == "crlf_token" else TOKEN
            return self.answer(200, [("Content-Type", "application/json")],
                               json.dumps({"token": token}).encode())
        if not self.path.startswith("/v2/"):
            return self.answer(404)
        if mode == "ok":
            return self.manifest()
        if mode == "multiarch":
            digest = "sha256:" + hashlib.sha256(MULTIARCH).hexdigest()
            return self.answer(200, [("Content-Type", INDEX_TYPE), ("Docker-Content-Digest", digest)],
                               MULTIARCH)
        if mode == "single":
            ctype = "application/vnd.oci.image.manifest.v1+json"
            digest = "sha256:" + hashlib.sha256(SINGLE).hexdigest()
            return self.answer(200, [("Content-Type", ctype), ("Docker-Content-Digest", digest)], SINGLE)
        if mode == "nodigest":
            return self.manifest(headers=())
        if mode == "bearer":
            if self.headers.get("Authorization") == f"Bearer {TOKEN}":
                return self.manifest()
            return self.challenge(f"http://127.0.0.1:{port}/token")
        if mode == "portal":
            return self.answer(200, [("Content-Type", "text/html")],
                               b"<html><body>Please log in to the proxy</body></html>\n")
        if mode == "octet":
            return self.answer(200, [("Content-Type", "application/octet-stream")],
                               b"\0" * (5 << 20))
        if mode == "stream":
            return self.stream(256 << 20)
        if mode == "shape":
            body = json.dumps({"schemaVersion": 1, "name": "x"}).encode()
            return self.answer(200, [("Content-Type", INDEX_TYPE)], body)
        if mode == "notjson":
            return self.answer(200, [("Content-Type", INDEX_TYPE)], b"<html>hi</html>")
        if mode == "mismatch":
            return self.manifest(headers=(("Docker-Content-Digest", OTHER_DIGEST),)) \
                if self.command == "GET" else self.manifest(headers=())
        if mode == "twodigests":
            return self.manifest(headers=(("Docker-Content-Digest", INDEX_DIGEST),
                                          ("Docker-Content-Digest", OTHER_DIGEST)))
        if mode == "badctype":
            return self.manifest(ctype="application/\xff\xfe")
        if mode == "realm_file":
            return self.challenge("file:///etc/hostname")
        if mode == "realm_dict":
            return self.challenge(f"dict://127.0.0.1:{port}/x")
        if mode == "crlf_token":
            if self.headers.get("Authorization", "").startswith("Bearer "):
                return self.manifest()
            return self.challenge(f"http://127.0.0.1:{port}/token")
        if mode == "nochallenge":
            return self.answer(401)
        if mode == "gone":
            return self.answer(404, [("Content-Type", "application/json")],
                               b'{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}')
        if mode == "ratelimit":
            return self.answer(429, [("Retry-After", "5"), ("Content-Type", "application/json")],
                               b'{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}')
        if mode == "escapes":
            return self.answer(500, [("Content-Type", "text/plain")],
                               b"\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[31mred error\x1b[0m\nsecond line")
        if mode == "longdigest":
            return self.manifest(headers=(("Docker-Content-Digest", "sha256:" + "a" * 10000),))
        if mode == "loop":
            return self.answer(302, [("Location", self.path)])
        if mode == "redirect":
            if self.path.endswith("/moved"):
                return self.manifest()
            return self.answer(307, [("Location", self.path + "/moved")])
        if mode == "redirect_file":
            return self.answer(302, [("Location", "file:///etc/hostname")])
        if mode == "hang":
            time.sleep(60)
            return self.answer(500)
        return self.answer(500, body=f"unknown mode {mode}".encode())

    def stream(self, total):
        """Streams `total` bytes with a manifest media type and no length; notes how much
        went out before the client hung up."""
        self.send_response(200)
        self.send_header("Content-Type", INDEX_TYPE)
        self.end_headers()
        if self.command == "HEAD":
            return
        sent, chunk = 0, b" " * (64 << 10)
        try:
            while sent < total:
                self.wfile.write(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        with open(self.work() / "streamed.log", "a") as f:
            f.write(f"{sent}\n")


def main():
    work = pathlib.Path(sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.work = work
    (work / "port.tmp").write_text(str(server.server_port))
    (work / "port.tmp").rename(work / "port")
    server.serve_forever()


if __name__ == "__main__":
    main()
