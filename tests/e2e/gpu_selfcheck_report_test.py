#!/usr/bin/env python3
"""Tests of the GPU self-check's GEMM comparison (scripts/gpu_selfcheck_gemm.py) and of its
report (scripts/gpu_selfcheck_report.py) on hand-made probe outputs: the ratio, the 95% goal,
like-for-like (identical bytes, run counts, shapes, realistic operands), the peaks from
data/gpus.json. No GPU, no torch. Usage: python3 tests/e2e/gpu_selfcheck_report_test.py
"""
import contextlib
import copy
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gpu_selfcheck_gemm as gc  # noqa: E402
import gpu_selfcheck_report as report  # noqa: E402


def probe_result(dtype, tflops, crc=("crc32:0000000a", "crc32:0000000b"), runs=(1400, 7000),
                 distribution="uniform(-1,1)", n=8192):
    return {"dtype": dtype, "m": n, "n": n, "k": n, "correct": True, "tflops_median": tflops, "repeats": runs[1],
            "peak_tflops": None, "operands": {"distribution": distribution, "a": {"crc32": crc[0]}, "b": {"crc32": crc[1]}},
            "timing": {"mode": "sustained", "warmup_runs": runs[0], "timed_runs": runs[1], "timed_s": 10.0},
            "clocks": {"start": {"sm_mhz": 1980, "power_w": 420.0}, "end": {"sm_mhz": 1755, "power_w": 699.0}},
            "clocks_unavailable": None}


def torch_result(dtype, tflops, crc=("crc32:0000000a", "crc32:0000000b"), runs=(1400, 7000), n=8192):
    return {"dtype": dtype, "m": n, "n": n, "k": n, "correct": True, "tflops_median": tflops, "error": None,
            "operands": {"source": "probe-gemm's files", "crc32_a": crc[0], "crc32_b": crc[1]},
            "timing": {"warmup_runs": runs[0], "timed_runs": runs[1]}, "clocks": None,
            "clocks_unavailable": "libnvidia-ml.so.1 does not load"}


class CompareTest(unittest.TestCase):
    def test_like_for_like_ratio_and_goal(self):
        c = gc.compare(probe_result("bf16", 760.0), torch_result("bf16", 770.0))
        self.assertTrue(c["comparable"], c["why_not"])
        self.assertTrue(c["identical_bytes"])
        self.assertAlmostEqual(c["ratio"], 760.0 / 770.0)
        self.assertEqual(c["better"], "torch")
        self.assertTrue(c["goal_met"])  # 98.7% of the better
        c = gc.compare(probe_result("bf16", 700.0), torch_result("bf16", 770.0))
        self.assertFalse(c["goal_met"])  # 90.9%
        c = gc.compare(probe_result("bf16", 800.0), torch_result("bf16", 770.0))
        self.assertEqual(c["better"], "probe")
        self.assertTrue(c["goal_met"])
        self.assertTrue(gc.compare(probe_result("fp8", 95.0), torch_result("fp8", 100.0))["goal_met"])

    def test_other_bytes_counts_shapes_or_operands_are_not_judged(self):
        cases = {
            "not the same operand bytes": (probe_result("fp16", 700.0), torch_result("fp16", 800.0, crc=("crc32:0000000a", "crc32:ffffffff"))),
            "different run counts": (probe_result("fp16", 700.0), torch_result("fp16", 800.0, runs=(5, 20))),
            "different shapes": (probe_result("fp16", 700.0), torch_result("fp16", 800.0, n=4096)),
            "not uniform(-1,1)": (probe_result("fp16", 700.0, distribution="exact small integers"), torch_result("fp16", 800.0)),
            "no torch figure": (probe_result("fp16", 700.0), torch_result("fp16", None)),
        }
        for why, (g, t) in cases.items():
            c = gc.compare(g, t)
            self.assertFalse(c["comparable"], why)
            self.assertIn(why, c["why_not"])
            self.assertIsNone(c["goal_met"], why)
        # torch without CRCs (it made its own operands) is never "identical bytes"
        t = torch_result("fp32", 50.0)
        t["operands"] = {"source": "torch.rand on the device"}
        self.assertFalse(gc.compare(probe_result("fp32", 51.0), t)["identical_bytes"])
        self.assertIsNone(gc.compare(None, None)["ratio"])

    def test_peaks_come_from_the_knowledge_base(self):
        gpus = gc.load_gpus(ROOT)
        self.assertEqual(gc.peak_for(gpus, "NVIDIA H200", "bf16"), 989.5)
        self.assertEqual(gc.peak_for(gpus, "NVIDIA H200", "fp8"), 1979)
        self.assertIsNone(gc.peak_for(gpus, "Some Other GPU", "bf16"))
        flag = gc.peak_flag(gpus, "NVIDIA H200")
        self.assertTrue(flag.startswith("--peak-tflops="), flag)
        self.assertIn("bf16:989.5", flag)
        self.assertNotIn("fp64", flag)
        self.assertEqual(gc.peak_flag(gpus, "Some Other GPU"), "")


def write_probe(out, name, status, data, rc=None):
    with open(os.path.join(out, name + ".json"), "w") as f:
        f.write(json.dumps({"probe": name, "schema": 1, "status": status, "reason": "", "data": data}) + "\n")
    with open(os.path.join(out, name + ".rc"), "w") as f:
        f.write("%d\n" % (rc if rc is not None else {"pass": 0, "fail": 1, "waived": 2, "error": 3}[status]))
    with open(os.path.join(out, name + ".seconds"), "w") as f:
        f.write("1\n")


GEMM = {"library": "/usr/lib/libcublas.so.13", "library_version": "13.1.0",
        "device": {"index": 0, "name": "NVIDIA H200", "cc": "9.0"},
        "timing": {"mode": "sustained", "seconds": 10, "warmup_seconds": 2, "method": "back-to-back GEMMs"},
        "operands": {"timing": "uniform(-1,1)"}, "skipped": [],
        "results": [probe_result("bf16", 760.0), probe_result("fp8", 1500.0, crc=("crc32:000000aa", "crc32:000000bb"))]}
TORCH = {"torch": "2.9.1+cu130", "cuda": "13.0", "devices": [], "notes": [],
         "matmul": {"results": [torch_result("bf16", 770.0), torch_result("fp8", 1490.0, crc=("crc32:000000aa", "crc32:000000bb"))]},
         "distributed": {"backend": "gloo", "world_size": 2, "exact": True, "expected": 1, "observed": 1}}


def run_report(gemm, torch):
    """(exit code, text, report.json) of the report over a directory of passing probes."""
    with tempfile.TemporaryDirectory() as out:
        write_probe(out, "cuda", "pass", {"devices": [{"index": 0, "name": "NVIDIA H200", "cc": "9.0"}], "device_count": 1})
        for name in ("libs", "cudnn"):
            write_probe(out, name, "pass", {})
        write_probe(out, "nccl", "pass", {"single_process": [{"dtype": "float32", "bytes": 1024, "correct": True, "busbw_gbps": 0, "algbw_gbps": 1.0}]})
        write_probe(out, "gemm", "pass", gemm)
        write_probe(out, "torch", "pass", torch)
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            rc = report.main([out, "--size=8192", "--dtypes=bf16,fp8"])
        with open(os.path.join(out, "report.json")) as f:
            return rc, text.getvalue(), json.load(f)


class ReportTest(unittest.TestCase):
    def test_pass_prints_both_figures_the_ratio_and_the_clocks(self):
        rc, text, summary = run_report(GEMM, TORCH)
        self.assertEqual(rc, 0, text)
        self.assertIn("SELFCHECK: PASS", text)
        self.assertIn("uniform(-1,1)", text)
        self.assertIn("sustained: 10 s of timed GEMMs after 2 s of warm-up", text)
        row = [ln for ln in text.splitlines() if ln.strip().startswith("bf16") and "770.0" in ln][0]
        for cell in ("760.0", "770.0", "0.987", "yes", "77%", "78%"):  # 760/989.5 and 770/989.5
            self.assertIn(cell, row)
        self.assertIn("1980->1755 MHz, 420->699 W", text)
        self.assertIn("no clocks (libnvidia-ml.so.1 does not load)", text)
        bf16 = [g for g in summary["gemm"] if g["dtype"] == "bf16"][0]
        self.assertTrue(bf16["identical_bytes"] and bf16["same_counts"] and bf16["goal_met"])
        self.assertEqual((bf16["m"], bf16["n"], bf16["k"]), (8192, 8192, 8192))
        self.assertEqual(bf16["distribution"], "uniform(-1,1)")
        self.assertEqual(bf16["peak_tflops"], 989.5)

    def test_probe_below_95_percent_fails(self):
        gemm = copy.deepcopy(GEMM)
        gemm["results"][0]["tflops_median"] = 700.0
        rc, text, summary = run_report(gemm, TORCH)
        self.assertEqual(rc, 1)
        self.assertIn("GEMM bf16: probe 700.0 TFLOP/s is below 95% of torch.matmul's 770.0 (ratio 0.909)", text)
        self.assertFalse([g for g in summary["gemm"] if g["dtype"] == "bf16"][0]["goal_met"])

    def test_other_bytes_fail_and_are_not_judged(self):
        torch = copy.deepcopy(TORCH)
        torch["matmul"]["results"][1]["operands"]["crc32_b"] = "crc32:12345678"
        rc, text, summary = run_report(GEMM, torch)
        self.assertEqual(rc, 1)
        self.assertIn("GEMM fp8: probe and torch.matmul not compared like for like: not the same operand bytes", text)
        self.assertIsNone([g for g in summary["gemm"] if g["dtype"] == "fp8"][0]["goal_met"])

    def test_peak_flag_mode(self):
        with tempfile.TemporaryDirectory() as out:
            write_probe(out, "cuda", "pass", {"devices": [{"index": 0, "name": "NVIDIA H200"}]})
            got = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu_selfcheck_report.py"),
                                  "--peak-flag=" + os.path.join(out, "cuda.json")], stdout=subprocess.PIPE,
                                 universal_newlines=True, check=True).stdout.strip()
            self.assertIn("bf16:989.5", got)
            got = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu_selfcheck_report.py"),
                                  "--peak-flag=" + os.path.join(out, "missing.json")], stdout=subprocess.PIPE,
                                 universal_newlines=True, check=True).stdout.strip()
            self.assertEqual(got, "")


if __name__ == "__main__":
    unittest.main()
