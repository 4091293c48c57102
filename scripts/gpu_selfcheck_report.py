#!/usr/bin/env python3
"""Report of scripts/gpu-selfcheck.sh: reads the probes' outputs in OUT_DIR and prints a
compact report ending in one PASS/FAIL line; writes OUT_DIR/report.json too.

For each probe NAME the directory holds NAME.json (the last stdout line), NAME.rc,
NAME.stdout/.stderr, NAME.seconds, or NAME.missing when the probe was not built. A probe
that is missing, timed out, printed no valid JSON, or whose status is not "pass" makes the
check FAIL; so does a wrong GEMM/matmul result, an inexact all-reduce, a GEMM comparison that
is not like for like (other bytes or run counts) or a probe below 95% of torch.matmul.

Usage: gpu_selfcheck_report.py OUT_DIR [--size=8192] [--dtypes=fp32,tf32,fp16,bf16,fp8]
       gpu_selfcheck_report.py --peak-flag=OUT_DIR/cuda.json   (prints probe-gemm's --peak-tflops
       for the GPU the cuda probe saw, from data/gpus.json, or an empty line)
Exit 0 PASS, 1 FAIL, 2 bad usage. Python 3.7+, standard library only.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_selfcheck_gemm as gemm_cmp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EXPECTED = ["cuda", "libs", "cudnn", "gemm", "nccl", "torch"]
OPTIONAL = ["torch-nccl"]  # run when torch sees at least one GPU
EXIT_OF = {"pass": 0, "fail": 1, "waived": 2, "error": 3}


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def load_probe(out_dir, name):
    """{name, state, status, reason, data, rc, seconds}; state: missing, timeout, no-json, ran, absent."""
    p = {"name": name, "state": None, "status": None, "reason": "", "data": {}, "rc": None, "seconds": None}
    base = os.path.join(out_dir, name)
    missing = read(base + ".missing")
    if missing is not None:
        p["state"], p["reason"] = "missing", missing.strip()
        return p
    rc = read(base + ".rc")
    if rc is None:
        p["state"] = "absent"
        return p
    try:
        p["rc"] = int(rc.strip())
    except ValueError:
        p["rc"] = None
    secs = read(base + ".seconds")
    p["seconds"] = int(secs.strip()) if secs and secs.strip().isdigit() else None
    if p["rc"] in (124, 137):
        p["state"], p["reason"] = "timeout", "timed out after %s s" % p["seconds"]
        return p
    last = (read(base + ".json") or "").strip()
    try:
        j = json.loads(last)
        if not isinstance(j, dict) or j.get("schema") != 1 or j.get("status") not in EXIT_OF:
            raise ValueError("not a schema-1 probe object")
    except ValueError as e:
        p["state"] = "no-json"
        err_tail = [ln for ln in (read(base + ".stderr") or "").splitlines() if ln.strip()]
        p["reason"] = "exit %s, last stdout line is not the probe's JSON (%s)%s" % (
            p["rc"], e, (": " + err_tail[-1][:200]) if err_tail else "")
        return p
    p["state"] = "ran"
    p["status"] = j["status"]
    p["reason"] = j.get("reason") or ""
    p["data"] = j.get("data") or {}
    if p["rc"] != EXIT_OF[j["status"]]:
        p["exit_mismatch"] = "exit %s disagrees with status %s" % (p["rc"], j["status"])
    return p


def fmt_num(x, digits=1):
    if x is None:
        return "-"
    try:
        return "%.*f" % (digits, float(x))
    except (TypeError, ValueError):
        return str(x)


def cuda_version(v):
    """12040 -> 12.4 (CUDA's encoding)."""
    if isinstance(v, int) and v > 0:
        return "%d.%d" % (v // 1000, (v % 1000) // 10)
    return v


def cudnn_version(v):
    """90100 -> 9.1.0; 8907 -> 8.9.7."""
    if isinstance(v, int) and v > 0:
        if v >= 10000:
            return "%d.%d.%d" % (v // 10000, (v % 10000) // 100, v % 100)
        return "%d.%d.%d" % (v // 1000, (v % 1000) // 100, v % 100)
    return v


def yes_no(b):
    return {True: "yes", False: "NO", None: "-"}.get(b, str(b))


def table(rows, header):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  " + " | ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    out = [line(header), "  " + "-+-".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return out


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    if "peak-flag" in opts:
        # probe-gemm's --peak-tflops for the GPU the cuda probe saw (its JSON is the value).
        try:
            devices = json.loads((read(opts["peak-flag"]) or "").strip().splitlines()[-1])["data"].get("devices") or []
        except (ValueError, IndexError, KeyError, TypeError, AttributeError):
            devices = []
        print(gemm_cmp.peak_flag(gemm_cmp.load_gpus(ROOT), devices[0].get("name") if devices else None))
        return 0
    if len(args) != 1:
        sys.stderr.write(__doc__)
        return 2
    out_dir = args[0]
    size = int(opts.get("size", "8192"))
    dtypes = [d for d in opts.get("dtypes", "fp32,tf32,fp16,bf16,fp8").split(",") if d]

    probes = {}
    for name in EXPECTED + OPTIONAL:
        probes[name] = load_probe(out_dir, name)
    problems, notes = [], []
    lines = []
    env = {}
    for ln in (read(os.path.join(out_dir, "env.txt")) or "").splitlines():
        k, _, v = ln.partition(": ")
        env[k] = v

    lines.append("torchdock GPU self-check  %s  %s" % (env.get("date", ""), env.get("host", "")))

    # GPU(s)
    cuda = probes["cuda"]["data"]
    torchd = probes["torch"]["data"]
    devices = cuda.get("devices") or torchd.get("devices") or []
    for d in devices:
        mem = d.get("memory_bytes")
        lines.append("GPU %s: %s, compute capability %s, %s GiB%s" % (
            d.get("index", "?"), d.get("name"), d.get("cc"), fmt_num(mem / 2.0 ** 30 if mem else None),
            (", %s SMs" % d["multiprocessors"]) if d.get("multiprocessors") else ""))
    if not devices:
        lines.append("GPU: none seen (nvidia-smi: %s)" % env.get("nvidia-smi", "?"))

    # Versions
    lines.append("")
    lines.append("Versions")
    nccl = probes["nccl"]["data"]
    cudnn = probes["cudnn"]["data"]
    gemm = probes["gemm"]["data"]
    def lib(path):
        return (" (%s)" % os.path.basename(path)) if path else ""
    vrows = [
        ["NVIDIA driver", "%s%s" % (cuda.get("nvidia_driver") or "-",
                                    (" (supports CUDA %s)" % cuda_version(cuda.get("driver_version"))) if cuda.get("driver_version") else ""), "-"],
        ["CUDA runtime", "%s%s" % (cuda_version(cuda.get("runtime_version")) or "-", lib(cuda.get("runtime_library"))),
         torchd.get("cuda") or "-"],
        ["cuBLAS", "%s%s" % (gemm.get("library_version") or "-", lib(gemm.get("library"))), "(torch's own)"],
        ["cuDNN", "%s%s" % (cudnn.get("version_string") or cudnn_version(cudnn.get("version")) or "-", lib(cudnn.get("library"))),
         cudnn_version(torchd.get("cudnn")) or "-"],
        ["NCCL", "%s%s" % (nccl.get("version") or "-", lib(nccl.get("library"))), torchd.get("nccl") or "-"],
        ["torch", "-", torchd.get("torch") or "-"],
        ["torch arch list", "-", " ".join(torchd.get("arch_list") or []) or "-"],
    ]
    paths = [(k, v) for k, v in (("cudart", cuda.get("runtime_library")), ("cuBLAS", gemm.get("library")),
                                 ("cuDNN", cudnn.get("library")), ("NCCL", nccl.get("library"))) if v]
    lines += table(vrows, ["", "probes", "torch"])
    for k, v in paths:
        lines.append("  %-7s %s" % (k + ":", v))
    lib_line = env.get("libraries")
    if lib_line:
        lines.append("  search: " + lib_line)

    # Probes
    lines.append("")
    lines.append("Probes")
    prow = []
    for name in EXPECTED + OPTIONAL:
        p = probes[name]
        if p["state"] == "absent":
            if name in OPTIONAL:
                continue
            state = "missing"
            p["reason"] = "not run"
        elif p["state"] == "ran":
            state = p["status"]
        else:
            state = p["state"]
        reason = p["reason"]
        if p.get("exit_mismatch"):
            reason = (reason + "; " if reason else "") + p["exit_mismatch"]
            problems.append("%s: %s" % (name, p["exit_mismatch"]))
        prow.append([name, state.upper() if state != "pass" else "pass",
                     ("%s s" % p["seconds"]) if p["seconds"] is not None else "-", reason[:110]])
        if state != "pass":
            problems.append("probe %s: %s%s" % (name, state, (" - " + reason[:200]) if reason else ""))
    lines += table(prow, ["probe", "status", "time", "reason"])

    # GEMM: probe vs torch.matmul on identical bytes (scripts/gpu_selfcheck_gemm.py)
    lines.append("")
    lines.append("GEMM %dx%dx%d, TFLOP/s = 2MNK / median per-GEMM time; ratio = probe / torch; goal: probe >= %d%% of the better" % (
        size, size, size, round(100 * gemm_cmp.GOAL)))
    lines.append("  " + gemm_cmp.describe_timing(gemm))
    g_results = {}
    for r in gemm.get("results") or []:
        if r.get("m") in (None, size) and r.get("dtype") not in g_results:
            g_results[r.get("dtype")] = r
    t_results = {}
    for r in ((torchd.get("matmul") or {}).get("results") or []):
        t_results[r.get("dtype")] = r
    device_name = (devices[0].get("name") if devices else None) or (gemm.get("device") or {}).get("name")
    tput, clock_rows, gemm_summary, gemm_problems = gemm_cmp.rows(
        dtypes, g_results, t_results, gemm_cmp.load_gpus(ROOT), device_name)
    lines += table(tput, ["dtype", "probe TFLOP/s", "torch TFLOP/s", "ratio", "goal met", "same bytes",
                          "probe % peak", "torch % peak"])
    lines.append("")
    lines += table(clock_rows, ["dtype", "runs (warm-up+timed)", "timed s", "probe clocks (start->end)",
                                "torch clocks (start->end)"])
    problems += gemm_problems
    for dt in dtypes:
        g, t = g_results.get(dt), t_results.get(dt)
        if g and g.get("correct") is False:
            problems.append("GEMM probe %s result wrong (%s)" % (dt, json.dumps({k: g.get(k) for k in ("check", "timed_check")})[:300]))
        if t and t.get("correct") is False:
            problems.append("torch matmul %s result wrong (max abs err %s > tolerance %s)" % (dt, t.get("max_abs_err"), t.get("tolerance")))
        if t and t.get("error"):
            notes.append("torch %s: %s" % (dt, t["error"][:160]))
        if probes["gemm"]["status"] == "pass" and not g:
            notes.append("GEMM probe has no %s result at %d" % (dt, size))
    for s in gemm.get("skipped") or []:
        notes.append("GEMM probe skipped: %s" % (json.dumps(s) if not isinstance(s, str) else s))

    # NCCL
    lines.append("")
    lines.append("NCCL (probe)")
    if probes["nccl"]["state"] == "ran":
        lines.append("  library %s, version %s, ranks %s" % (nccl.get("library"), nccl.get("version"), nccl.get("ranks")))
        for n in nccl.get("notes") or []:
            lines.append("  note: %s" % n)
        for kind in ("single_process", "multi_process"):
            runs = nccl.get(kind)
            if not isinstance(runs, list) or not runs:
                lines.append("  %s: %s" % (kind, "none" if runs is None or runs == [] else json.dumps(runs)[:100]))
                continue
            ok = all(r.get("correct") for r in runs)
            # One rank has no bus traffic (busbw is 0): then the algorithm bandwidth says more.
            key = "busbw_gbps" if any(r.get("busbw_gbps") for r in runs) else "algbw_gbps"
            best = max(runs, key=lambda r: r.get(key) or 0)
            lines.append("  %s: %d all-reduce(s), %s; best %s %s GB/s (%s, %s bytes)" % (
                kind, len(runs), "all correct" if ok else "SOME WRONG", "bus bandwidth" if key == "busbw_gbps" else
                "algorithm bandwidth", fmt_num(best.get(key)), best.get("dtype"), best.get("bytes")))
            err = nccl.get(kind + "_error")
            if err:
                lines.append("  %s error: %s" % (kind, err))
            if not ok:
                problems.append("NCCL probe %s: some all-reduce results wrong" % kind)
    else:
        lines.append("  %s" % (probes["nccl"]["state"] or "not run"))

    # torch.distributed
    lines.append("")
    lines.append("torch.distributed all-reduce")
    for name in ("torch", "torch-nccl"):
        p = probes[name]
        d = (p["data"] or {}).get("distributed")
        if p["state"] == "absent" and name in OPTIONAL:
            continue
        if not d:
            lines.append("  %s: %s" % (name, p["state"] if p["state"] != "ran" else "no result (%s)" % p["reason"]))
            continue
        lines.append("  %s: backend %s, %s ranks: %s (expected checksum %s, observed %s%s)" % (
            name, d.get("backend"), d.get("world_size"), "exact" if d.get("exact") else
            ("TIMED OUT" if d.get("timed_out") else "NOT EXACT"), d.get("expected"), d.get("observed"),
            (", %s s" % d["seconds"]) if d.get("seconds") is not None else ""))
        if not d.get("exact"):
            problems.append("torch.distributed (%s, %s) %s" % (name, d.get("backend"), d.get("error") or "not exact"))

    for n in (torchd.get("notes") or []):
        notes.append("torch: " + n)
    if notes:
        lines.append("")
        lines.append("Notes")
        lines += ["  " + n for n in notes]

    lines.append("")
    if problems:
        lines.append("Problems")
        seen = set()
        for pr in problems:
            if pr not in seen:
                lines.append("  - " + pr)
                seen.add(pr)
        lines.append("")
        lines.append("SELFCHECK: FAIL (%d problem%s)" % (len(seen), "" if len(seen) == 1 else "s"))
    else:
        lines.append("SELFCHECK: PASS")
    print("\n".join(lines))

    summary = {
        "result": "fail" if problems else "pass",
        "problems": problems,
        "notes": notes,
        "probes": dict((k, {"state": v["state"], "status": v["status"], "reason": v["reason"]}) for k, v in probes.items()),
        "gemm": gemm_summary,
    }
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
