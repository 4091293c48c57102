"""Matrix products of the torch probe: torch.matmul (fp32, tf32, fp16, bf16) and
torch._scaled_mm (fp8 e4m3 -> bf16), each checked against a float64 reference on sampled
entries and timed the way probe-gemm times cuBLAS (probes/gemm/timing.hpp): back to back on
one stream, a CUDA event between each two products, two batches in flight, the median
per-product time; NVML's SM clock and power read over the timed phase.

Operands: uniform(-1,1) values in the dtype's format, in probe-gemm's layout (A row-major
M x K, B column-major K x N: cuBLAS's "TN", which torch.matmul and _scaled_mm hand to cuBLAS
for these strides). Either made here on the device (torch.rand * 2 - 1), or, with
--operands-from=GEMM_JSON (the GPU self-check), read from the files probe-gemm wrote with
--dump-operands, checked against the CRC-32 it reported, and timed with its numbers of
warm-up and timed products: then both programs time identical bytes.

The pure parts (reading probe-gemm's JSON, file checks, batch sizes, medians, NVML through
ctypes) need no torch; the unit test tests/e2e/torch_matmul_test.py runs them. Python 3.7+.
"""
import ctypes
import json
import math
import os
import time
import zlib

# Inputs are uniform in [-1, 1); an entry of C = A B then has a standard deviation of
# sqrt(K/9). The tolerance on |C - reference| is REL[dtype] * sqrt(K): several times the
# rounding the dtype implies (output rounding, reduced-precision partial sums), and below
# what a wrong kernel or a silent TF32 in fp32 gives. probe-gemm checks its timed output with
# the same rule (probes/gemm/dtypes.hpp).
REL = {"fp32": 1e-4, "tf32": 2.0 ** -7, "fp16": 2.0 ** -7, "bf16": 2.0 ** -5, "fp8": 2.0 ** -5}
TOLERANCE_RULE = "max |C - float64 reference| over sampled entries <= rel * sqrt(K), inputs uniform in [-1,1)"
SAMPLE = 64  # rows and columns sampled for the reference: SAMPLE*SAMPLE entries
TIMING_METHOD = ("back-to-back products on one stream, a CUDA event between each two, two batches "
                 "in flight; median per-product time")
DISTRIBUTION = "uniform(-1,1)"
# probe-gemm's operand format per dtype (its file names and byte widths).
FORMAT = {"fp32": ("f32", 4), "tf32": ("f32", 4), "fp16": ("f16", 2), "bf16": ("bf16", 2), "fp8": ("e4m3", 1)}


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def batch_size(est_ms, target_ms=50.0, cap=256):
    """Products per batch so that one batch is about target_ms of GPU work (probe-gemm's rule)."""
    if not est_ms or est_ms <= 0:
        return 1
    return max(1, min(cap, int(math.ceil(target_ms / est_ms))))


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12 if ms and ms > 0 else None


class OperandError(Exception):
    pass


def probe_operands(gemm_json_path, size=None):
    """{dtype: spec} from probe-gemm's JSON (its last stdout line): per timed result with
    dumped files, spec = {m, n, k, files: (a, b), crc32: (a, b), warmup_runs, timed_runs,
    format}. Only results at M = N = K = size when size is given. OperandError when the file
    is not probe-gemm's JSON."""
    try:
        with open(gemm_json_path) as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
        j = json.loads(lines[-1])
    except (OSError, ValueError, IndexError) as e:
        raise OperandError("cannot read probe-gemm's JSON %s: %s" % (gemm_json_path, e))
    if not isinstance(j, dict) or j.get("probe") != "gemm":
        raise OperandError("%s is not probe-gemm's JSON" % gemm_json_path)
    specs = {}
    for r in (j.get("data") or {}).get("results") or []:
        ops, timing = r.get("operands") or {}, r.get("timing") or {}
        a, b = ops.get("a") or {}, ops.get("b") or {}
        if not (a.get("file") and b.get("file") and a.get("crc32") and b.get("crc32")):
            continue
        if size is not None and (r.get("m"), r.get("n"), r.get("k")) != (size, size, size):
            continue
        if r.get("dtype") in specs or r.get("dtype") not in FORMAT:
            continue
        specs[r["dtype"]] = {"m": r["m"], "n": r["n"], "k": r["k"], "files": (a["file"], b["file"]),
                             "crc32": (a["crc32"], b["crc32"]), "format": ops.get("format"),
                             "distribution": ops.get("distribution"),
                             "warmup_runs": int(timing.get("warmup_runs") or 0),
                             "timed_runs": int(timing.get("timed_runs") or 0)}
    return specs


def crc32_text(data):
    return "crc32:%08x" % (zlib.crc32(data) & 0xFFFFFFFF)


def read_operand(path, expect_bytes, expect_crc):
    """The file's bytes; OperandError when its size or CRC-32 is not what probe-gemm reported."""
    try:
        with open(path, "rb") as f:
            data = bytearray(f.read())
    except OSError as e:
        raise OperandError("cannot read %s: %s" % (path, e))
    if len(data) != expect_bytes:
        raise OperandError("%s has %d bytes, expected %d" % (path, len(data), expect_bytes))
    crc = crc32_text(data)
    if crc != expect_crc:
        raise OperandError("%s: %s, but probe-gemm reported %s" % (path, crc, expect_crc))
    return data


# ---------------------------------------------------------------------------------------
# NVML through ctypes: what probe-gemm's clocks_nvml.hpp reads, with the same names.

REASON_NAMES = ["gpu_idle", "applications_clocks", "sw_power_cap", "hw_slowdown", "sync_boost",
                "sw_thermal", "hw_thermal", "hw_power_brake"]


def reason_names(bits):
    out = [name for b, name in enumerate(REASON_NAMES) if bits & (1 << b)]
    return out + (["other"] if bits >> 8 else [])


class Nvml(object):
    """open(bus_id) -> None or the reason it cannot read clocks; sample() -> dict."""

    def __init__(self):
        self.lib, self.dev, self.error = None, None, None

    def open(self, bus_id):
        if not bus_id:
            self.error = "no PCI bus id for the device"
            return self.error
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError as e:
            self.error = "libnvidia-ml.so.1 does not load: %s" % e
            return self.error
        dev = ctypes.c_void_p()
        try:
            r = lib.nvmlInit_v2()
            if r == 0:
                r = lib.nvmlDeviceGetHandleByPciBusId_v2(bus_id.encode(), ctypes.byref(dev))
        except AttributeError as e:
            self.error = "libnvidia-ml.so.1 lacks %s" % e
            return self.error
        if r != 0:
            self.error = "NVML: error %d for device %s" % (r, bus_id)
            return self.error
        self.lib, self.dev = lib, dev
        return None

    def _uint(self, fn, *args):
        v = ctypes.c_uint()
        try:
            return v.value if getattr(self.lib, fn)(self.dev, *(args + (ctypes.byref(v),))) == 0 else None
        except AttributeError:
            return None

    def sample(self):
        power = self._uint("nvmlDeviceGetPowerUsage")
        s = {"sm_mhz": self._uint("nvmlDeviceGetClockInfo", 1), "power_w": power / 1000.0 if power is not None else None,
             "temperature_c": self._uint("nvmlDeviceGetTemperature", 0), "reasons": None}
        bits = ctypes.c_ulonglong()
        for fn in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            f = getattr(self.lib, fn, None)
            if f is not None:
                if f(self.dev, ctypes.byref(bits)) == 0:
                    s["reasons"] = reason_names(bits.value)
                break
        return s

    def limits(self):
        limit = self._uint("nvmlDeviceGetEnforcedPowerLimit")
        return {"power_limit_w": limit / 1000.0 if limit is not None else None,
                "sm_mhz_limit": self._uint("nvmlDeviceGetMaxClockInfo", 1)}


def clock_summary(samples, limits):
    """probe-gemm's `clocks` object from NVML samples (None when there are none)."""
    if not samples:
        return None
    sm = [s["sm_mhz"] for s in samples if s["sm_mhz"] is not None]
    pw = [s["power_w"] for s in samples if s["power_w"] is not None]
    out = {"source": "nvml", "samples": len(samples), "start": samples[0], "end": samples[-1],
           "sm_mhz_min": min(sm) if sm else None, "sm_mhz_max": max(sm) if sm else None,
           "power_w_max": max(pw) if pw else None}
    out.update(limits or {})
    return out


# ---------------------------------------------------------------------------------------
# On the GPU (torch needed from here on).

def device_bus_id(torch, device, fallback=None):
    """"0000:07:00.0" for NVML from torch's device properties (torch 2.x), else `fallback`."""
    p = torch.cuda.get_device_properties(device)
    bus, dev = getattr(p, "pci_bus_id", None), getattr(p, "pci_device_id", None)
    if bus is None or dev is None:
        return fallback
    return "%04x:%02x:%02x.0" % (getattr(p, "pci_domain_id", 0) or 0, bus, dev)


def run_products(torch, op, count, batch, times=None, on_sync=None):
    """`count` products back to back in batches of `batch`, two batches in flight; the time of
    each goes to `times`; on_sync(last) is called while a batch still runs on the GPU."""
    pending, enqueued = [], 0

    def enqueue():
        n = min(batch, count - enqueued)
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
        ev[0].record()
        for i in range(n):
            op()
            ev[i + 1].record()
        pending.append((ev, n))
        return n

    while enqueued < count and len(pending) < 2:
        enqueued += enqueue()
    if on_sync and pending:
        on_sync(False)
    while pending:
        ev, n = pending.pop(0)
        ev[n].synchronize()
        if times is not None:
            times.extend(ev[i].elapsed_time(ev[i + 1]) for i in range(n))
        if on_sync and pending:
            on_sync(enqueued >= count)
        if enqueued < count:
            enqueued += enqueue()


def time_products(torch, op, warmup_runs, timed_runs, nvml):
    """probe-gemm's timing: 2 products (the second sizes the batches), the rest of the
    warm-up, then `timed_runs` timed products with clock samples. Returns (timing, clocks)."""
    first = []
    t0 = time.time()
    run_products(torch, op, 2, 1, first)
    batch = batch_size(first[-1])
    run_products(torch, op, max(0, warmup_runs - 2), batch)
    warm_s = time.time() - t0
    times, samples, last = [], [], [0.0]
    t1 = time.time()

    def on_sync(final):
        if nvml is not None and (final or not samples or time.time() - last[0] >= 0.25):
            samples.append(nvml.sample())
            last[0] = time.time()

    run_products(torch, op, timed_runs, batch, times, on_sync)
    half = len(times) // 2
    timing = {"mode": "counts", "method": TIMING_METHOD,
              "warmup_runs": 2 + max(0, warmup_runs - 2), "warmup_s": warm_s, "timed_runs": len(times),
              "timed_s": time.time() - t1, "ms_median": median(times),
              "ms_min": min(times) if times else None, "ms_max": max(times) if times else None,
              "first_half_ms": median(times[:half]) if half else None,
              "last_half_ms": median(times[half:]) if half else None}
    return timing, clock_summary(samples, nvml.limits() if nvml is not None else None)


def sample(torch, t, rows=None, cols=None):
    """t[rows] or t[:, cols]; float8 tensors are indexed through a uint8 view."""
    is_fp8 = "float8" in str(t.dtype)
    u = t.view(torch.uint8) if is_fp8 else t
    u = u[rows] if rows is not None else u[:, cols]
    return u.view(t.dtype) if is_fp8 else u


def torch_dtype(torch, name):
    if name == "fp8":
        if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
            raise RuntimeError("this torch has no float8_e4m3fn/_scaled_mm")
        return torch.float8_e4m3fn
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def operands(torch, name, spec, device, res):
    """(A, B): A row-major M x K, B column-major K x N, from probe-gemm's files or made here."""
    m, n, k = spec["m"], spec["n"], spec["k"]
    dt = torch_dtype(torch, name)
    if spec.get("files"):
        width = FORMAT[name][1]
        host = []
        for path, crc, count in zip(spec["files"], spec["crc32"], (m * k, n * k)):
            data = read_operand(path, count * width, crc)
            t = torch.frombuffer(data, dtype=torch.uint8 if name == "fp8" else dt)
            host.append(t.view(dt) if name == "fp8" else t)
        res["operands"] = {"source": "probe-gemm's files", "distribution": spec.get("distribution"),
                           "files": list(spec["files"]), "crc32_a": spec["crc32"][0], "crc32_b": spec["crc32"][1]}
        return host[0].to(device).view(m, k), host[1].to(device).view(n, k).t()
    gen = torch.Generator(device=device)
    gen.manual_seed(1234)
    a = (torch.rand((m, k), generator=gen, device=device, dtype=torch.float32) * 2 - 1).to(dt)
    bt = (torch.rand((n, k), generator=gen, device=device, dtype=torch.float32) * 2 - 1).to(dt)
    res["operands"] = {"source": "torch.rand on the device", "distribution": DISTRIBUTION}
    return a, bt.t()


def one_matmul(torch, name, spec, device, nvml, nvml_error):
    """{dtype, m, n, k, correct, max_abs_err, tolerance, tflops_median, ms_median, repeats,
    operands, timing, clocks, clocks_unavailable, error} for one dtype."""
    m, n, k = spec["m"], spec["n"], spec["k"]
    res = {"dtype": name, "m": m, "n": n, "k": k, "correct": False, "max_abs_err": None,
           "tolerance": REL[name] * math.sqrt(k), "tflops_median": None, "ms_median": None,
           "repeats": spec["timed_runs"], "operands": None, "timing": None, "clocks": None,
           "clocks_unavailable": nvml_error, "error": None}
    flags = torch.backends.cuda.matmul
    saved_tf32 = flags.allow_tf32
    try:
        a, b = operands(torch, name, spec, device, res)
        res["operands"].update({"format": FORMAT[name][0], "layout": "TN: A row-major MxK, B column-major KxN"})
        if name == "fp8":
            one = torch.ones((), device=device, dtype=torch.float32)

            def op():
                try:
                    out = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
                except TypeError:  # torch 2.1-2.3: scales optional, returns (out, amax)
                    out = torch._scaled_mm(a, b, out_dtype=torch.bfloat16)
                return out[0] if isinstance(out, tuple) else out
        else:
            flags.allow_tf32 = name == "tf32"

            def op():
                return torch.matmul(a, b)
        c = op()
        torch.cuda.synchronize(device)
        # Reference in float64 on sampled rows and columns, from the very inputs the product used.
        gen = torch.Generator(device=device)
        gen.manual_seed(4321)
        rows = torch.randperm(m, generator=gen, device=device)[:SAMPLE]
        cols = torch.randperm(n, generator=gen, device=device)[:SAMPLE]
        ref = sample(torch, a, rows=rows).to(torch.float64) @ sample(torch, b, cols=cols).to(torch.float64)
        got = c[rows][:, cols].to(torch.float64)
        finite = bool(torch.isfinite(got).all().item())
        res["max_abs_err"] = float((got - ref).abs().max().item()) if finite else None
        res["correct"] = finite and res["max_abs_err"] <= res["tolerance"]
        del c, ref, got
        timing, clocks = time_products(torch, op, spec["warmup_runs"], spec["timed_runs"], nvml)
        timing["mode"] = "probe-gemm's counts" if spec.get("files") else "--warmup and --repeats"
        res["timing"], res["clocks"], res["ms_median"] = timing, clocks, timing["ms_median"]
        if clocks is not None:
            res["clocks_unavailable"] = None
        res["repeats"] = timing["timed_runs"]
        res["tflops_median"] = tflops(m, n, k, timing["ms_median"])
        for key in ("first_half", "last_half"):
            timing["tflops_" + key] = tflops(m, n, k, timing.pop(key + "_ms"))
    except Exception as e:
        res["error"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
        res["correct"] = None
    finally:
        flags.allow_tf32 = saved_tf32
        torch.cuda.empty_cache()
    return res


def matmuls(torch, dtypes, n, repeats, warmup, log, operands_from=""):
    """The `matmul` object of the torch probe's data. With operands_from (probe-gemm's JSON),
    each dtype runs on probe-gemm's operand files with its counts of warm-up and timed runs."""
    device = torch.device("cuda", 0)
    specs, probe_bus = {}, None
    if operands_from:
        specs = probe_operands(operands_from, size=n)
        try:
            with open(operands_from) as f:
                probe_bus = ((json.loads(f.read().splitlines()[-1]).get("data") or {}).get("device") or {}).get("pci_bus_id")
        except (OSError, ValueError, IndexError, AttributeError):
            probe_bus = None
    nvml = Nvml()
    nvml_error = nvml.open(device_bus_id(torch, device, probe_bus))
    results = []
    for dt in dtypes:
        spec = specs.get(dt) if operands_from else {"m": n, "n": n, "k": n, "warmup_runs": warmup, "timed_runs": repeats}
        if spec is None:
            r = {"dtype": dt, "m": n, "n": n, "k": n, "correct": None, "tflops_median": None, "error":
                 "probe-gemm wrote no operands for %s at %d (see %s)" % (dt, n, operands_from)}
        else:
            r = one_matmul(torch, dt, spec, device, None if nvml_error else nvml, nvml_error)
        if r["error"]:
            log("matmul %-4s %dx%dx%d: error: %s" % (dt, n, n, n, r["error"]))
        else:
            log("matmul %-4s %dx%dx%d: %s (max abs err %.3g, tolerance %.3g), %.1f TFLOP/s (median of %d, %.3f ms)" % (
                dt, r["m"], r["n"], r["k"], "correct" if r["correct"] else "WRONG",
                r["max_abs_err"] if r["max_abs_err"] is not None else float("nan"), r["tolerance"],
                r["tflops_median"] or 0.0, r["repeats"], r["ms_median"] or 0.0))
        results.append(r)
    checked = [r for r in results if r["error"] is None]
    return {
        "device": torch.cuda.get_device_name(device),
        "size": n,
        "repeats": repeats,
        "warmup": warmup,
        "operands_from": operands_from or None,
        "nvml_error": nvml_error,
        "tolerance_rule": TOLERANCE_RULE,
        # null when no dtype could run; false when any product ran and was wrong.
        "correct": (all(r["correct"] for r in checked) if checked else None),
        "tflops": dict((r["dtype"], r["tflops_median"]) for r in results),
        "results": results,
    }
