#!/usr/bin/env python3
"""A fake Docker engine on a UNIX socket, for node-check's deadline (tests/e2e).

Usage: fake_engine.py SOCKET MODE
  pinghang: answers GET /_ping, /version and /info like dockerd 20.10; every other request
            is read and never answered (a wedged engine: containerd stuck, a full disk).
  silent:   accepts every connection and never answers anything.
Every request line goes to stderr. Runs until killed (the test runs it under `timeout`).
"""
import json
import os
import socket
import sys
import threading
import time

VERSION = {"Version": "20.10.24+dfsg1", "ApiVersion": "1.41", "Os": "linux", "Arch": "amd64",
           "Components": [{"Name": "Engine", "Version": "20.10.24+dfsg1"}]}
INFO = {"Architecture": "x86_64", "Runtimes": {"runc": {"path": "runc"}}}


def answer(conn, body, content_type="application/json"):
    data = body.encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type.encode() +
                 b"\r\nContent-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data)


def serve(conn, mode):
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buf += chunk
            head, _, buf = buf.partition(b"\r\n\r\n")
            line = head.split(b"\r\n", 1)[0].decode(errors="replace")
            sys.stderr.write("fake engine: " + line + "\n")
            sys.stderr.flush()
            path = line.split(" ")[1] if " " in line else ""
            path = path.split("?", 1)[0]
            if mode == "pinghang" and path == "/_ping":
                answer(conn, "OK", "text/plain")
            elif mode == "pinghang" and path.endswith("/version"):
                answer(conn, json.dumps(VERSION))
            elif mode == "pinghang" and path.endswith("/info"):
                answer(conn, json.dumps(INFO))
            else:
                while True:  # hang: the client's time-out is the only way out
                    time.sleep(3600)
    except OSError:
        pass


def main():
    path, mode = sys.argv[1], sys.argv[2]
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn, mode), daemon=True).start()


if __name__ == "__main__":
    main()
