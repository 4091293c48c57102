"""A small PEP 503 package index for the tests: serves the wheels of a directory as a PyPI
mirror would (/simple/<project>/ with #sha256= links, the files under /files/), optionally
only to clients that send HTTP Basic credentials (as pip sends them from a netrc file), and
logs every request with its path and whether it carried credentials.

Usage: pypi_mirror.py WHEEL_DIR PORT_FILE LOG_FILE [USER:PASSWORD]
Binds 127.0.0.1 on a free port and writes the port to PORT_FILE."""
import base64
import hashlib
import html
import http.server
import os
import re
import sys

wheel_dir, port_file, log_file = sys.argv[1:4]
credentials = sys.argv[4] if len(sys.argv) > 4 else None


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        auth = self.headers.get("Authorization", "")
        with open(log_file, "a") as log:
            log.write(f"{self.path} {'auth' if auth else 'anonymous'}\n")
        if credentials and auth != "Basic " + base64.b64encode(credentials.encode()).decode():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="mirror"')
            self.end_headers()
            return
        parts = [p for p in self.path.split("?")[0].split("/") if p]
        if len(parts) == 2 and parts[0] == "simple":
            links = []
            for f in sorted(os.listdir(wheel_dir)):
                if normalize(f.split("-")[0]) == normalize(parts[1]):
                    digest = hashlib.sha256(open(os.path.join(wheel_dir, f), "rb").read()).hexdigest()
                    links.append(f'<a href="/files/{html.escape(f)}#sha256={digest}">{html.escape(f)}</a>')
            if not links:
                self.send_error(404)
                return
            body = ("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
        elif len(parts) == 2 and parts[0] == "files" and os.path.isfile(os.path.join(wheel_dir, parts[1])):
            body = open(os.path.join(wheel_dir, parts[1]), "rb").read()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
        else:
            self.send_error(404)
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
