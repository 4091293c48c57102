#!/usr/bin/env python3
"""Generates explain's message catalogs of the container stack's Go tools from their own
sources: data/catalogs/{docker,buildkit,containerd,runc,registry,nvidia-container-toolkit}.json.

    python3 scripts/catalogs/gen_go.py --tool docker --src /tmp/cli --src /tmp/moby \
        [--version V --version V] [--commit C --commit C] --out data/catalogs

Each --src is an exported tree of one upstream repository (recognised by the module line of
its go.mod / vendor.mod); --version/--commit pair up with the --src in order (default: `git
describe --tags` / `git rev-parse HEAD` when the tree is a git checkout). The extractor reads
the tool's directories only (never _test.go, testdata/ or vendor/) and takes the literal
format string of each error call site:
  errors.New / fmt.Errorf / errors.Errorf / errors.Wrap(f) / errors.WithMessage(f) (pkg/errors,
  so errdefs.InvalidParameter(fmt.Errorf(...)) and friends are found through their argument),
  status.Error(f) (gRPC), logrus/log.G(ctx)/bklog/logger .Error*/.Fatal*/.Panic*, and the
  fmt.Sprintf / string literals returned by `Error() string` methods;
errors.Wrap(err, "msg") prints "msg: <err>", so its text is taken as "msg: %v". The registry
catalog is read from distribution/distribution's errcode descriptors instead (Value, Message,
Description), in the forms clients print them: "<value in lower case>: <message>" (docker,
containerd, buildkit) and the JSON body '"code":"VALUE","message":"..."'. nvidia-container-
toolkit can also take NVIDIA/libnvidia-container (C; printf style) as a second --src.

Ranks: a rule of the meanings file gives its own; a message with no rule gets the default's
rank, or its `wrapper_rank` when it only wraps an error from beneath ("...: %w" at its end),
so the innermost message of a Go error chain answers first.
"""
import argparse, json, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# tool -> about, and per upstream repository (by Go module path, or a marker file for C):
# its name, the directories read, and the directories skipped under them.
TOOLS = {
    "docker": {
        "about": "Error messages of the Docker CLI (docker/cli) and the Docker daemon (moby/moby: "
                 "daemon, API client, image pull/push, builder), extracted from their Go sources",
        "repos": {
            "github.com/docker/cli": {
                "name": "docker/cli",
                "include": ["cli/", "cmd/docker/", "cli-plugins/", "opts/", "internal/"],
                "exclude": ["cli/command/stack/", "cli/command/swarm/", "cli/command/service/",
                            "cli/command/node/", "cli/command/secret/", "cli/command/config/",
                            "cli/compose/"]},
            "github.com/moby/moby/v2": {
                "name": "moby/moby",
                "include": ["daemon/", "api/", "client/", "cmd/dockerd/", "errdefs/"],
                "exclude": ["daemon/cluster/", "daemon/libnetwork/", "api/docs/", "daemon/logger/",
                            "daemon/internal/nri/", "daemon/internal/usergroup/",
                            "daemon/pkg/plugin/", "daemon/internal/plugin/", "daemon/plugin/",
                            "api/types/swarm/", "client/swarm", "client/service_",
                            "client/node_", "client/secret_", "client/config_",
                            "daemon/graphdriver/btrfs/", "daemon/graphdriver/zfs/",
                            "daemon/graphdriver/graphtest/", "daemon/volume/drivers/",
                            "daemon/volume/local/", "daemon/volume/service/", "daemon/volume/safepath/",
                            "daemon/builder/remotecontext/", "daemon/internal/builder-next/",
                            "daemon/server/router/swarm/", "daemon/server/router/plugin/",
                            "daemon/server/router/checkpoint/", "daemon/checkpoint",
                            "daemon/internal/metrics/", "daemon/pkg/plugins/", "daemon/secrets",
                            "daemon/configs", "daemon/cluster.go", "daemon/plugins", "daemon/server/",
                            "daemon/containerd/migration/", "daemon/internal/quota/",
                            "cli/command/plugin/", "cli/command/manifest/", "internal/oauth/"],
                # the libnetwork messages people hit (port bindings, networks, iptables)
                "also": ["daemon/libnetwork/portallocator/", "daemon/libnetwork/portmapper/",
                         "daemon/libnetwork/iptables/", "daemon/libnetwork/endpoint.go",
                         "daemon/libnetwork/network.go", "daemon/libnetwork/controller.go",
                         "daemon/libnetwork/sandbox.go"]},
        },
    },
    "buildkit": {
        "about": "Error messages of BuildKit (moby/buildkit: the Dockerfile frontend, the solver, "
                 "the executors and the cache), extracted from its Go sources",
        "repos": {"github.com/moby/buildkit": {
            "name": "moby/buildkit",
            "include": ["frontend/", "solver/", "executor/", "cache/", "client/", "exporter/",
                        "source/", "session/", "snapshot/", "util/", "worker/", "cmd/",
                        "control/", "util/"],
            "exclude": ["util/testutil/", "frontend/dockerfile/docs/", "cmd/buildctl/debug/"]}},
    },
    "containerd": {
        "about": "Error messages of containerd (containerd/containerd: the daemon, ctr, the shim "
                 "runtime, content store, snapshotters, unpack, remotes), extracted from its Go "
                 "sources",
        "repos": {"github.com/containerd/containerd/v2": {
            "name": "containerd/containerd",
            "include": ["core/", "cmd/", "client/", "plugins/", "pkg/"],
            "exclude": ["pkg/testutil/", "cmd/protoc-gen-go-fieldpath/", "plugins/snapshots/lcow/",
                        "plugins/snapshots/devmapper/", "plugins/snapshots/blockfile/",
                        "plugins/snapshots/btrfs/"],
            # CRI (Kubernetes): image pulls and container/sandbox creation only
            "also": ["internal/cri/server/images/", "internal/cri/server/container_create",
                     "internal/cri/server/container_start", "internal/cri/server/sandbox_run",
                     "internal/cri/server/podsandbox/sandbox_run", "internal/cri/config/"]}},
    },
    "runc": {
        "about": "Error messages of runc (opencontainers/runc: the CLI and libcontainer: container "
                 "init, cgroups, mounts, seccomp), extracted from its Go sources",
        "repos": {"github.com/opencontainers/runc": {
            "name": "opencontainers/runc",
            "include": [""], "exclude": ["tests/", "contrib/", "script/", "libcontainer/integration/"]}},
    },
    "registry": {
        "about": "The error codes of the OCI distribution API as registries return them "
                 "(distribution/distribution's registry/api/errcode descriptors: code, message and "
                 "meaning), in the forms docker, containerd and buildkit print them",
        "repos": {"github.com/distribution/distribution/v3": {
            "name": "distribution/distribution", "mode": "errcode",
            "include": ["registry/api/errcode/", "registry/api/v2/"], "exclude": []}},
    },
    "nvidia-container-toolkit": {
        "about": "Error messages of the NVIDIA Container Toolkit (NVIDIA/nvidia-container-toolkit: "
                 "nvidia-container-runtime, nvidia-container-runtime-hook, nvidia-ctk, CDI) and of "
                 "nvidia-container-cli (NVIDIA/libnvidia-container), extracted from their sources",
        "repos": {
            "github.com/NVIDIA/nvidia-container-toolkit": {
                "name": "NVIDIA/nvidia-container-toolkit",
                "include": ["cmd/", "internal/", "pkg/"],
                "exclude": ["internal/test/", "cmd/nvidia-ctk-installer/"]},
            "libnvidia-container": {
                "name": "NVIDIA/libnvidia-container", "mode": "c",
                "include": ["src/"], "exclude": ["src/nvcgo/"]},
        },
    },
}

# Go token helpers ---------------------------------------------------------

ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "", "b": "",
       "f": "", "v": ""}


def skip_space(src, i):
    """Skips blanks, newlines and comments."""
    n = len(src)
    while i < n:
        c = src[i]
        if c in " \t\r\n":
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j + 1
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            break
    return i


def read_string(src, i):
    """(value, end) of the Go string literal at i, or None."""
    if i >= len(src):
        return None
    if src[i] == "`":
        j = src.find("`", i + 1)
        return None if j < 0 else (src[i + 1:j], j + 1)
    if src[i] != '"':
        return None
    out, j, n = [], i + 1, len(src)
    while j < n:
        c = src[j]
        if c == '"':
            return "".join(out), j + 1
        if c == "\n":
            return None
        if c == "\\" and j + 1 < n:
            e = src[j + 1]
            if e in ESC:
                out.append(ESC[e])
                j += 2
            elif e in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[e]
                try:
                    out.append(chr(int(src[j + 2:j + 2 + width], 16)))
                except ValueError:
                    pass
                j += 2 + width
            else:  # octal
                j += 4
            continue
        out.append(c)
        j += 1
    return None


def skip_expr(src, i):
    """End of the expression at i: up to ',' ')' or '+' at depth 0 (strings skipped)."""
    depth, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"`":
            s = read_string(src, i)
            if s is None:
                return n
            i = s[1]
            continue
        if c == "'":
            j = i + 1
            while j < n and src[j] != "'":
                j += 2 if src[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif c in ",+" and depth == 0:
            return i
        elif c == "\n" and depth == 0 and src[i - 1] not in ",+(":
            return i
        i += 1
    return n


def read_format(src, i, printf):
    """The format string of the argument starting at i: literals joined, other operands of a
    '+' chain as %v. None when the argument has no literal."""
    parts, any_lit = [], False
    while True:
        i = skip_space(src, i)
        s = read_string(src, i)
        if s is not None:
            text, i = s
            parts.append(text if printf else text.replace("%", "%%"))
            any_lit = True
        else:
            j = skip_expr(src, i)
            if j == i:
                return None
            parts.append("%v")
            i = j
        end, i = i, skip_space(src, i)
        if i < len(src) and src[i] == "+":
            i += 1
            continue
        break
    # the argument ends at ',' or ')'; a returned expression at the end of its line
    if not any_lit or (i < len(src) and src[i] not in ",)" and "\n" not in src[end:i]):
        return None
    # Go's explicit argument indexes (%[2]s) in the printf form catalog_lib reads (%2$s)
    return re.sub(r"%([-+# 0]*)\[(\d+)\]", r"%\2$\1", "".join(parts))


def skip_args(src, i, k):
    """Position of the k-th argument (0-based) of a call whose '(' ends at i."""
    for _ in range(k):
        j = skip_expr(src, i)
        while j < len(src) and src[j] == "+":
            j = skip_expr(src, j + 1)
        if j >= len(src) or src[j] != ",":
            return None
        i = j + 1
    return i


# call -> (index of the format argument, is it a printf format, appended text)
CALLS = {
    "errors.New": (0, False, ""), "fmt.Errorf": (0, True, ""), "errors.Errorf": (0, True, ""),
    "errors.Wrap": (1, False, ": %v"), "errors.Wrapf": (1, True, ": %v"),
    "errors.WithMessage": (1, False, ": %v"), "errors.WithMessagef": (1, True, ": %v"),
    "pkgerrors.Wrap": (1, False, ": %v"), "pkgerrors.Wrapf": (1, True, ": %v"),
    "pkgerrors.Errorf": (0, True, ""), "pkgerrors.New": (0, False, ""),
    "status.Errorf": (1, True, ""), "status.Error": (1, False, ""),
    "grpcstatus.Errorf": (1, True, ""), "grpcstatus.Error": (1, False, ""),
}
CALL_RX = re.compile(r"(?<![\w.])(" + "|".join(re.escape(c) for c in CALLS) + r")\(")
LOG_RX = re.compile(r"\.(Errorf|Error|Errorln|Fatalf|Fatal|Fatalln|Panicf|Panic)\(")
# typed error constructors: types.InternalErrorf(...), errdefs.InvalidParameterErrorf(...)
TYPED_RX = re.compile(r"(?<![\w.])[a-z]\w*\.[A-Z]\w*Errorf\(")
ERROR_METHOD_RX = re.compile(r"\nfunc \([^)]*\) Error\(\) string \{")
SPRINTF_RX = re.compile(r"(?<![\w.])fmt\.Sprintf\(")
RETURN_LIT_RX = re.compile(r"\breturn\s+(?=[\"`])")


def receiver(src, dot):
    """The receiver chain before the '.' at `dot` (identifiers, dots, balanced calls)."""
    i, depth = dot, 0
    while i > 0:
        c = src[i - 1]
        if depth:
            if c == ")":
                depth += 1
            elif c == "(":
                depth -= 1
            i -= 1
        elif c == ")":
            depth = 1
            i -= 1
        elif c.isalnum() or c in "_.":
            i -= 1
        elif c in " \t\n" and i >= 2 and src[i - 2] in ".)\n\t ":
            i -= 1
        else:
            break
    return src[i:dot]


def go_messages(src):
    """[(format string, line)] of a Go file's error call sites."""
    out = []

    def line_of(i):
        return src.count("\n", 0, i) + 1

    for m in CALL_RX.finditer(src):
        k, printf, tail = CALLS[m.group(1)]
        i = skip_args(src, m.end(), k)
        if i is None:
            continue
        fmt = read_format(src, i, printf)
        if fmt is not None:
            out.append((fmt + tail, line_of(m.start())))
    for m in TYPED_RX.finditer(src):
        fmt = read_format(src, m.end(), True)
        if fmt is not None:
            out.append((fmt, line_of(m.start())))
    for m in LOG_RX.finditer(src):
        recv = receiver(src, m.start())
        if not re.search(r"log|entry|Log", recv) or re.search(r"\b[tb]\s*$", recv):
            continue
        fmt = read_format(src, m.end(), m.group(1).endswith("f"))
        if fmt is not None:
            out.append((fmt, line_of(m.start())))
    for m in ERROR_METHOD_RX.finditer(src):
        # the body of an Error() string method: up to the closing brace at column 0
        end = src.find("\n}", m.end())
        body_at, body = m.end(), src[m.end():end if end > 0 else len(src)]
        for s in SPRINTF_RX.finditer(body):
            fmt = read_format(body, s.end(), True)
            if fmt is not None:
                out.append((fmt, line_of(body_at + s.start())))
        for s in RETURN_LIT_RX.finditer(body):
            fmt = read_format(body, s.end(), False)
            if fmt is not None:
                out.append((fmt, line_of(body_at + s.start())))
    return out


# C (libnvidia-container): error_set(err, "..."), error_setx(err, "..."), log_errf("..."),
# errx/err/warnx-free: only the error setters and the CLI's fatal prints.
C_CALLS = re.compile(r"\b(error_setx|error_set|error_set_elf|log_errf|log_err|errx|err|warnx)\s*\(")


def c_string(src, i):
    """Adjacent C string literals at i joined, or None (an identifier in between ends it)."""
    parts = []
    while True:
        i = skip_space(src, i)
        if i < len(src) and src[i] == '"':
            s = read_string(src, i)
            if s is None:
                return None
            parts.append(s[0])
            i = s[1]
            continue
        m = re.match(r"PRI[diouxX](?:8|16|32|64|MAX|PTR)", src[i:])
        if m and parts:
            parts.append("%d")
            i += m.end()
            continue
        break
    return "".join(parts) if parts else None


def c_messages(src):
    out = []
    for m in C_CALLS.finditer(src):
        name = m.group(1)
        k = {"error_setx": 1, "error_set": 1, "error_set_elf": 2, "log_errf": 0, "log_err": 0,
             "errx": 1, "err": 1, "warnx": 0}[name]
        i = skip_args(src, m.end(), k)
        if i is None:
            continue
        s = c_string(src, i)
        if s:
            out.append((s, src.count("\n", 0, m.start()) + 1, name))
    return out


# ------------------------------------------------------------------------------------------

GENERATED = re.compile(r"^// Code generated .* DO NOT EDIT\.$", re.M)


def module_of(root):
    for f in ("go.mod", "vendor.mod"):
        p = os.path.join(root, f)
        if os.path.exists(p):
            with open(p) as fh:
                for line in fh:
                    if line.startswith("module "):
                        return line.split()[1]
    if os.path.exists(os.path.join(root, "src", "nvc.c")):
        return "libnvidia-container"
    return None


def git(root, *args):
    try:
        return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


NOT_LINUX = re.compile(r"_(windows|darwin|freebsd|openbsd|netbsd|solaris|illumos|plan9|js|"
                       r"wasm|wasip1)(_[a-z0-9]+)?\.go$|/(windows|darwin|freebsd)/")


def wanted(rel, spec):
    if "/vendor/" in "/" + rel or "/testdata/" in "/" + rel or rel.endswith("_test.go"):
        return False
    # generated code, and other systems than Linux (the stack torchdock runs on)
    if rel.endswith(".pb.go") or "zz_generated" in rel or NOT_LINUX.search(rel):
        return False
    if any(rel.startswith(a) for a in spec.get("also", [])):
        return True
    if not any(rel.startswith(d) for d in spec["include"]):
        return False
    return not any(rel.startswith(d) for d in spec["exclude"])


def files_of(root, spec, exts):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in (".git", "vendor", "testdata"))
        for f in sorted(filenames):
            if not f.endswith(exts):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
            if wanted(rel, spec):
                out.append(rel)
    return sorted(out)


DESCRIPTIONS = {}  # errcode value -> its descriptor's Description


def errcode_messages(root, rel):
    """[(format, line)] of the errcode descriptors: "<value lower>: <message>" and the JSON."""
    with open(os.path.join(root, rel), encoding="utf-8") as fh:
        src = fh.read()
    out = []
    for m in re.finditer(r"ErrorDescriptor\{(.*?)\n\t\}\)", src, re.S):
        body = m.group(1)
        value = re.search(r'Value:\s*"([A-Z_]+)"', body)
        msg = re.search(r'Message:\s*"([^"]*)"', body)
        if not value or not msg:
            continue
        code, line = value.group(1), src.count("\n", 0, m.start()) + 1
        spaced = code.lower().replace("_", " ")
        desc = re.search(r'Description:\s*(?:"([^"]*)"|`([^`]*)`)', body)
        if desc:
            DESCRIPTIONS[code] = re.sub(r"\s+", " ", desc.group(1) or desc.group(2)).strip()
        out.append((f"{spaced}: {msg.group(1).replace('%', '%%')}", line))
        out.append((f'"code":"{code}","message":"%s"', line))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", required=True, choices=sorted(TOOLS))
    ap.add_argument("--src", action="append", required=True,
                    help="exported source tree of one upstream repository (repeatable)")
    ap.add_argument("--version", action="append", default=[],
                    help="its version (git tag / describe), one per --src in order")
    ap.add_argument("--commit", action="append", default=[], help="its commit, one per --src")
    ap.add_argument("--out", default="data/catalogs")
    ap.add_argument("--meanings", default=None)
    ap.add_argument("--list", action="store_true", help="print the messages, write nothing")
    a = ap.parse_args()
    tool = TOOLS[a.tool]

    messages, generated_from, extra = [], [], []
    for n, root in enumerate(a.src):
        mod = module_of(root)
        if mod not in tool["repos"]:
            raise SystemExit(f"{root}: module {mod!r} is not one of {a.tool}'s sources "
                             f"({', '.join(tool['repos'])})")
        spec = tool["repos"][mod]
        version = a.version[n] if n < len(a.version) else (git(root, "describe", "--tags")
                                                           or "unknown")
        commit = a.commit[n] if n < len(a.commit) else (git(root, "rev-parse", "HEAD") or "")
        generated_from.append(f"{spec['name']} {version}" + (f" (commit {commit})" if commit
                                                             else ""))
        tag = f"{spec['name']}@{version}"
        mode = spec.get("mode", "go")
        if mode == "errcode":
            for rel in files_of(root, spec, (".go",)):
                for fmt, _line in errcode_messages(root, rel):
                    messages.append((fmt, f"{a.tool} {tag} {rel}", "go"))
            continue
        if mode == "c":
            for rel in files_of(root, spec, (".c", ".h")):
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                    for fmt, _line, _call in c_messages(fh.read()):
                        messages.append((fmt, f"{a.tool} {tag} {rel}", "printf"))
            continue
        for rel in files_of(root, spec, (".go",)):
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                src = fh.read()
            if GENERATED.search(src[:2000]):
                continue
            for fmt, _line in go_messages(src):
                messages.append((fmt, f"{a.tool} {tag} {rel}", "go"))

    # Messages not in the sources read here, each cited by the https:// page it is quoted
    # from (the meanings file's "documented"): Docker Hub's rate-limit text (its docs), and
    # nvidia-container-cli's top-level errors (libnvidia-container's C sources at a commit).
    with open(a.meanings or os.path.join(HERE, "meanings", f"{a.tool}.json")) as fh:
        for e in json.load(fh).get("documented", []):
            messages.append((e["message"], e["source"], e.get("style", "go")))

    # deterministic: by message, then source; one (message, source) once
    messages = sorted(set(messages))
    if a.list:
        for fmt, src, _style in messages:
            print(f"{src}\t{fmt!r}")
        print(f"{len(messages)} messages", file=sys.stderr)
        return

    meanings = catalog_lib.load_meanings(a.meanings or os.path.join(HERE, "meanings",
                                                                   f"{a.tool}.json"))
    # Go and C messages share the printf placeholder syntax; build once over both.
    entries, stats = catalog_lib.build_entries(a.tool, [(f, s) for f, s, _ in messages],
                                               meanings, "go")
    d = meanings["default"]
    wrapper_rank = d.get("wrapper_rank", d.get("rank", 10))
    ruled_titles = {r["title"] for r in meanings.get("rules", [])}
    for e in entries:
        if e["title"] in ruled_titles:
            continue
        # a message with no rule that only wraps an error from beneath ranks lowest
        if re.search(r"[:,]\s*\{a\d+\*\}$", e["patterns"][0]):
            e["rank"] = wrapper_rank
        # an errcode with no rule: its descriptor's Description is its meaning
        for code, desc in DESCRIPTIONS.items():
            if e["patterns"][0] in (f'"code":"{code}","message":"{{a1*}}"',) or \
                    e["patterns"][0].startswith(code.lower().replace("_", " ") + ": "):
                e["cause"] = (f"The registry answered {code}: {desc} (the OCI distribution "
                              "API's description of the code.)")
                e["fix"] = catalog_lib.DEFAULTS[a.tool]["fix"]
    entries.sort(key=lambda e: e["id"])
    for e in entries:
        e["source"].sort()
    about = meanings.get("about") or tool["about"]
    catalog_lib.write_catalog(a.out, a.tool, about, generated_from, entries, stats)


if __name__ == "__main__":
    main()
