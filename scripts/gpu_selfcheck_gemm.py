"""The GEMM part of the GPU self-check report: probe-gemm's cuBLAS figures beside torch.matmul's
on identical operand bytes (scripts/gpu-selfcheck.sh runs the torch probe with
--operands-from on the files probe-gemm wrote with --dump-operands), the ratio per dtype and the
goal that the probe reaches at least 95% of the better of the two.

A comparison counts only when it is like for like: the same shape, the same bytes (the CRC-32
probe-gemm reported for its operands equals the one torch read), the same numbers of warm-up
and timed runs. Otherwise the ratio is shown but not judged, and the report names why.
Pure functions, standard library only (tests/e2e/gpu_selfcheck_report_test.py).
"""
import json
import os

GOAL = 0.95  # the probe's figure must be at least GOAL x the better of the two
REALISTIC = "uniform(-1,1)"  # what throughput is timed on; nothing else may be compared
GEMM_DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")


def number(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 else None


def compare(g, t):
    """{probe_tflops, torch_tflops, ratio, better, goal_met, identical_bytes, same_counts,
    same_shape, comparable, why_not} for probe-gemm's result g and the torch probe's t (either
    may be None). goal_met is None unless the comparison is like for like."""
    g, t = g or {}, t or {}
    gt, tt = number(g.get("tflops_median")), number(t.get("tflops_median"))
    ops_g, ops_t = g.get("operands") or {}, t.get("operands") or {}
    crc_g = ((ops_g.get("a") or {}).get("crc32"), (ops_g.get("b") or {}).get("crc32"))
    crc_t = (ops_t.get("crc32_a"), ops_t.get("crc32_b"))
    tim_g, tim_t = g.get("timing") or {}, t.get("timing") or {}
    out = {
        "probe_tflops": gt, "torch_tflops": tt,
        "ratio": gt / tt if gt and tt else None,
        "better": None if not (gt and tt) else ("probe" if gt >= tt else "torch"),
        "identical_bytes": bool(all(crc_g) and crc_g == crc_t),
        "same_counts": bool(tim_g.get("timed_runs")) and (tim_g.get("warmup_runs"), tim_g.get("timed_runs")) ==
        (tim_t.get("warmup_runs"), tim_t.get("timed_runs")),
        "same_shape": bool(g) and all(g.get(x) == t.get(x) for x in "mnk"),
        "distribution": ops_g.get("distribution"),
    }
    why = []
    if not gt or not tt:
        why.append("no %s figure" % " or ".join(n for n, v in (("probe", gt), ("torch", tt)) if not v))
    if out["distribution"] != REALISTIC:
        why.append("probe operands are %s, not %s" % (out["distribution"], REALISTIC))
    if not out["identical_bytes"]:
        why.append("not the same operand bytes (CRC-32 probe %s/%s, torch %s/%s)" % (crc_g + crc_t))
    if not out["same_counts"]:
        why.append("different run counts (probe %s+%s, torch %s+%s)" % (
            tim_g.get("warmup_runs"), tim_g.get("timed_runs"), tim_t.get("warmup_runs"), tim_t.get("timed_runs")))
    if not out["same_shape"]:
        why.append("different shapes")
    out["comparable"] = not why
    out["why_not"] = "; ".join(why)
    out["goal_met"] = (gt >= GOAL * max(gt, tt)) if out["comparable"] else None
    return out


def peak_for(gpus, device_name, dtype):
    """The datasheet dense peak (TFLOP/s) of `dtype` for the GPU named `device_name` in
    data/gpus.json's object, or None."""
    for g in (gpus or {}).get("gpus") or []:
        if device_name and device_name in (g.get("aliases") or []):
            return number((g.get("peak_tflops") or {}).get(dtype))
    return None


def peak_flag(gpus, device_name):
    """probe-gemm's --peak-tflops=... for that GPU, or "" when the knowledge base has no peaks."""
    parts = ["%s:%g" % (d, peak_for(gpus, device_name, d)) for d in GEMM_DTYPES if peak_for(gpus, device_name, d)]
    return "--peak-tflops=" + ",".join(parts) if parts else ""


def load_gpus(root):
    try:
        with open(os.path.join(root, "data", "gpus.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(x, digits=1):
    return "-" if x is None else "%.*f" % (digits, x)


def clocks_text(r):
    """"1980->1755 MHz, 700->699 W" from a result's clocks, or the reason there are none."""
    c = (r or {}).get("clocks")
    if not c:
        why = (r or {}).get("clocks_unavailable")
        return "no clocks" + (" (%s)" % why[:60] if why else "")
    s, e = c.get("start") or {}, c.get("end") or {}
    return "%s->%s MHz, %s->%s W" % (fmt(s.get("sm_mhz"), 0), fmt(e.get("sm_mhz"), 0),
                                    fmt(s.get("power_w"), 0), fmt(e.get("power_w"), 0))


def rows(dtypes, g_results, t_results, gpus, device_name):
    """(throughput rows, clock rows, summary entries, problems) for the report."""
    tput, clocks, summary, problems = [], [], [], []
    for dt in dtypes:
        g, t = g_results.get(dt), t_results.get(dt)
        c = compare(g, t)
        peak = number((g or {}).get("peak_tflops")) or peak_for(gpus, device_name, dt)
        pct = lambda x: ("%d%%" % round(100 * x / peak)) if (x and peak) else "-"  # noqa: E731
        goal = {True: "yes", False: "NO", None: "-"}[c["goal_met"]]
        tput.append([dt, fmt(c["probe_tflops"]), fmt(c["torch_tflops"]), fmt(c["ratio"], 3), goal,
                     "yes" if c["identical_bytes"] else ("NO" if g and t else "-"), pct(c["probe_tflops"]),
                     pct(c["torch_tflops"])])
        tim = (g or {}).get("timing") or {}
        clocks.append([dt, "%s+%s" % (tim.get("warmup_runs", "-"), tim.get("timed_runs", "-")),
                       fmt(tim.get("timed_s")), clocks_text(g), clocks_text(t)])
        entry = dict(c, dtype=dt, peak_tflops=peak, m=(g or {}).get("m"), n=(g or {}).get("n"), k=(g or {}).get("k"),
                     timing=(g or {}).get("timing"), probe_clocks=(g or {}).get("clocks"),
                     torch_clocks=(t or {}).get("clocks"), probe_correct=(g or {}).get("correct"),
                     torch_correct=(t or {}).get("correct"))
        summary.append(entry)
        if g and t and not c["comparable"]:
            problems.append("GEMM %s: probe and torch.matmul not compared like for like: %s" % (dt, c["why_not"]))
        if c["goal_met"] is False:
            problems.append("GEMM %s: probe %.1f TFLOP/s is below %d%% of torch.matmul's %.1f (ratio %.3f)" % (
                dt, c["probe_tflops"], round(100 * GOAL), c["torch_tflops"], c["ratio"]))
    return tput, clocks, summary, problems


def describe_timing(gemm_data):
    """One line naming what the figures are (operands, timing method, mode)."""
    t = (gemm_data or {}).get("timing") or {}
    ops = ((gemm_data or {}).get("operands") or {}).get("timing") or "?"
    if t.get("mode") == "sustained":
        how = "sustained: %s s of timed GEMMs after %s s of warm-up" % (t.get("seconds"), t.get("warmup_seconds"))
    else:
        how = "short: %s timed GEMMs after %s warm-up" % (t.get("repeats"), t.get("warmup"))
    return "operands %s (full entropy, identical bytes for both), %s; %s" % (ops, how, t.get("method") or "")
