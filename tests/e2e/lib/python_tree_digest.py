"""Prints what makes an installed Python tree reproducible or not, as JSON: pip freeze,
one digest over every RECORD file, and one digest over every file of the site directory
(path and content, sorted). Run inside an image: python3 python_tree_digest.py SITE_DIR."""
import hashlib
import json
import os
import subprocess
import sys

site = sys.argv[1]
records = hashlib.sha256()
tree = hashlib.sha256()
files = 0
for root, dirs, names in os.walk(site):
    dirs.sort()
    for name in sorted(names):
        path = os.path.join(root, name)
        if not os.path.isfile(path) or os.path.islink(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        rel = os.path.relpath(path, site)
        tree.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
        files += 1
        if name == "RECORD":
            records.update(rel.encode() + b"\0" + data)
freeze = subprocess.run([sys.executable, "-m", "pip", "freeze", "--all"], capture_output=True,
                        text=True, check=True).stdout
print(json.dumps({"freeze": freeze, "records_sha256": records.hexdigest(),
                  "tree_sha256": tree.hexdigest(), "files": files}))
