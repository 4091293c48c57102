"""torchdock's all-reduce probe: one rank of a multi-node all-reduce, run inside the image.

torchdock allreduce starts one of these per Slurm task (torchdock allreduce-rank, in a
container on the host network); rank, world size and the rendezvous come from Slurm's
environment through torchdock's flags. Each message size is reduced (SUM over float32) once
on fresh values to check every element exactly, then timed over --iters calls after
--warmup untimed ones. With NCCL the probe asks NCCL for its INFO lines on the subsystems
INIT,NET (NCCL_DEBUG_FILE) and hands them back, so torchdock can tell the transport NCCL
really used.

Output contract (probes/README.md): human lines, then one JSON object on the last line of
stdout; exit 0 pass (every sum exact), 1 fail (a wrong sum), 3 error. Flags are --name=value:

  --rank=R --world-size=N --local-rank=L   this rank, the world, the rank on its node
  --master=HOST:PORT                        the TCP rendezvous (rank 0's node)
  --backend=NAME                            auto (default: nccl where CUDA works), gloo, nccl
  --sizes=B,B,...                           message sizes in bytes, default 4096,1048576,16777216
  --iters=N --warmup=N                      timed and untimed calls per size, default 5 and 1
  --timeout=S                               seconds the rendezvous and each collective may take
  --node=NAME                               this rank's node, echoed in the result
  --candidates=A:B --others=A:B             the image's interpreters (as for torch_probe.py)

Python 3.7+, standard library and torch only.
"""
import json
import os
import socket
import sys
import time

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import torch_probe_env as probe_env  # noqa: E402

PROBE = "allreduce"
EXIT = {"pass": 0, "fail": 1, "error": 3}
# Values stay small integers: the largest sum, 1023*W + W*(W-1)/2, is exact in float32 (below
# 2**24) up to W = 4859 ranks; `torchdock allreduce` refuses more than 4096.
PATTERN = 1024


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def finish(status, reason, data):
    out = {"probe": PROBE, "schema": 1, "status": status, "reason": reason, "data": data}
    sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    return EXIT[status]


def parse(argv):
    flags = {"rank": None, "world-size": None, "local-rank": "0", "master": None, "backend": "auto",
             "sizes": "4096,1048576,16777216", "iters": "5", "warmup": "1", "timeout": "60",
             "node": "", "candidates": "", "others": "", "_chosen": None}
    for a in argv:
        if a == "--_chosen":
            flags["_chosen"] = True
            continue
        if not a.startswith("--") or "=" not in a or a[2:a.index("=")] not in flags:
            raise ValueError("unknown flag %r" % a)
        flags[a[2:a.index("=")]] = a[a.index("=") + 1:]
    for k in ("rank", "world-size", "master"):
        if flags[k] is None:
            raise ValueError("--%s is required" % k)
    out = dict(flags)
    for k in ("rank", "world-size", "local-rank", "iters", "warmup", "timeout"):
        out[k] = int(flags[k])
    out["sizes"] = [int(s) for s in flags["sizes"].split(",") if s]
    if out["world-size"] < 1 or not 0 <= out["rank"] < out["world-size"]:
        raise ValueError("--rank must be in [0, --world-size)")
    if out["iters"] < 1 or out["warmup"] < 0 or out["timeout"] < 1 or not out["sizes"]:
        raise ValueError("--iters, --timeout and --sizes must be positive")
    if out["backend"] not in ("auto", "gloo", "nccl"):
        raise ValueError("--backend must be auto, gloo or nccl")
    if ":" not in out["master"]:
        raise ValueError("--master must be HOST:PORT")
    return out


def nccl_lines(path_prefix):
    """The INFO lines NCCL wrote (one file per process: NCCL_DEBUG_FILE with %p)."""
    lines = []
    directory = os.path.dirname(path_prefix)
    for name in sorted(os.listdir(directory)):
        if name.startswith(os.path.basename(path_prefix)):
            with open(os.path.join(directory, name), errors="replace") as f:
                lines.extend(line.rstrip("\n") for line in f)
    return lines[-400:]


def run(flags, data):
    import datetime
    import torch
    import torch.distributed as dist
    data["torch"] = torch.__version__
    backend = flags["backend"]
    if backend == "auto":
        backend = "nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo"
    data["backend"] = backend
    debug_prefix = None
    if backend == "nccl":
        debug_prefix = "/tmp/torchdock-nccl-debug."
        os.environ["NCCL_DEBUG"] = "INFO"  # the transport lines: into a file, not the log
        os.environ["NCCL_DEBUG_SUBSYS"] = "INIT,NET"
        os.environ["NCCL_DEBUG_FILE"] = debug_prefix + "%h.%p"
        torch.cuda.set_device(flags["local-rank"])
        device = torch.device("cuda", flags["local-rank"])
        data["device"] = torch.cuda.get_device_name(device)
    else:
        device = torch.device("cpu")
    rank, world = flags["rank"], flags["world-size"]
    start = time.time()
    dist.init_process_group(backend=backend, init_method="tcp://" + flags["master"], rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=flags["timeout"]))
    data["init_seconds"] = round(time.time() - start, 3)
    log("rank %d/%d on %s: %s process group up in %.2f s" % (rank, world, flags["node"], backend,
                                                               data["init_seconds"]))

    def sync():
        if backend == "nccl":
            torch.cuda.synchronize(device)

    wrong_total = 0
    for size in flags["sizes"]:
        count = max(1, size // 4)
        base = torch.arange(count, dtype=torch.int64) % PATTERN
        t = (base + rank).to(torch.float32).to(device)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        sync()
        expected = (base * world + world * (world - 1) // 2).to(torch.float32)
        wrong = int((t.cpu() != expected).sum().item())
        wrong_total += wrong
        for _ in range(flags["warmup"]):
            dist.all_reduce(t)
        sync()
        dist.barrier()
        begin = time.perf_counter()
        for _ in range(flags["iters"]):
            dist.all_reduce(t)
        sync()
        seconds = (time.perf_counter() - begin) / flags["iters"]
        data["sizes"].append({"bytes": count * 4, "count": count, "type": "float", "redop": "sum",
                              "time_us": round(seconds * 1e6, 2), "wrong": wrong})
        log("rank %d: %d bytes in %.1f us, %d wrong" % (rank, count * 4, seconds * 1e6, wrong))
    dist.barrier()
    dist.destroy_process_group()
    if debug_prefix:
        data["nccl_log"] = nccl_lines(debug_prefix)
    return wrong_total


def main(argv):
    try:
        flags = parse(argv)
    except ValueError as e:
        return finish("error", str(e), {})
    if flags["candidates"] and not flags["_chosen"]:
        chosen, tried = probe_env.discover(flags["candidates"].split(":"))
        if chosen is None:
            return finish("error", "no PyTorch found; interpreters tried: " + (", ".join(tried) or "none"), {})
        if chosen != sys.executable:
            os.execv(chosen, [chosen, os.path.abspath(__file__)] + list(argv) + ["--_chosen"])
    data = {"rank": flags["rank"], "world_size": flags["world-size"], "local_rank": flags["local-rank"],
            "node": flags["node"], "host": socket.gethostname(), "master": flags["master"],
            "python": sys.executable, "sizes": [], "backend": None, "torch": None}
    try:
        wrong = run(flags, data)
    except BaseException as e:  # noqa: B902 - report anything: a timeout, a refused connection
        text = str(e).strip()
        data["error"] = "%s: %s" % (type(e).__name__, text.splitlines()[0] if text else "")
        return finish("error", "rank %d: %s" % (flags["rank"], data["error"]), data)
    if wrong:
        return finish("fail", "rank %d: %d elements with a wrong sum" % (flags["rank"], wrong), data)
    return finish("pass", "rank %d: every sum exact" % flags["rank"], data)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
