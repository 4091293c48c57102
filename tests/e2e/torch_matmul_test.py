#!/usr/bin/env python3
"""Tests of the torch probe's matmul module (probes/torch/torch_matmul.py) that need neither
torch nor a GPU: reading probe-gemm's JSON, checking its operand files (size, CRC-32), batch
sizes, and the timing loop's counts with a stand-in for torch.cuda.Event. What needs torch on
a GPU (operand tensors, layouts, the products) runs in scripts/gpu-selfcheck.sh.
Usage: python3 tests/e2e/torch_matmul_test.py
"""
import json
import os
import sys
import tempfile
import types
import unittest
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "probes", "torch"))
import torch_matmul as tm  # noqa: E402


def gemm_json(path, results, device=None):
    with open(path, "w") as f:
        f.write("gemm: a human line\n")
        f.write(json.dumps({"probe": "gemm", "schema": 1, "status": "pass", "reason": "",
                            "data": {"device": device, "results": results}}) + "\n")


def result(dtype, n, files=("/x/a.bin", "/x/b.bin"), crcs=("crc32:00000001", "crc32:00000002")):
    return {"dtype": dtype, "m": n, "n": n, "k": n, "tflops_median": 1.0,
            "operands": {"distribution": "uniform(-1,1)", "format": tm.FORMAT[dtype][0],
                         "a": {"file": files[0], "crc32": crcs[0]}, "b": {"file": files[1], "crc32": crcs[1]}},
            "timing": {"warmup_runs": 1400, "timed_runs": 7000}}


class ProbeOperandsTest(unittest.TestCase):
    def test_specs_from_probe_gemm_json(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "gemm.json")
            no_files = result("fp16", 64)
            no_files["operands"]["a"]["file"] = None
            gemm_json(path, [result("bf16", 64), result("bf16", 128), result("fp8", 128), no_files])
            specs = tm.probe_operands(path, size=64)
            self.assertEqual(sorted(specs), ["bf16"])
            s = specs["bf16"]
            self.assertEqual((s["m"], s["n"], s["k"]), (64, 64, 64))
            self.assertEqual(s["files"], ("/x/a.bin", "/x/b.bin"))
            self.assertEqual(s["crc32"], ("crc32:00000001", "crc32:00000002"))
            self.assertEqual((s["warmup_runs"], s["timed_runs"]), (1400, 7000))
            self.assertEqual(s["distribution"], "uniform(-1,1)")
            self.assertEqual(sorted(tm.probe_operands(path)), ["bf16", "fp8"])  # the first bf16

    def test_not_probe_gemm_json_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.json")
            with open(path, "w") as f:
                f.write('{"probe": "cuda", "schema": 1}\n')
            with self.assertRaisesRegex(tm.OperandError, "is not probe-gemm's JSON"):
                tm.probe_operands(path)
            with self.assertRaisesRegex(tm.OperandError, "cannot read"):
                tm.probe_operands(os.path.join(d, "missing.json"))

    def test_operand_files_are_checked_by_size_and_crc(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "a.bin")
            data = bytes(range(256)) * 4
            with open(path, "wb") as f:
                f.write(data)
            crc = "crc32:%08x" % zlib.crc32(data)
            self.assertEqual(bytes(tm.read_operand(path, 1024, crc)), data)
            with self.assertRaisesRegex(tm.OperandError, "has 1024 bytes, expected 2048"):
                tm.read_operand(path, 2048, crc)
            with self.assertRaisesRegex(tm.OperandError, "but probe-gemm reported crc32:00000000"):
                tm.read_operand(path, 1024, "crc32:00000000")
            with self.assertRaisesRegex(tm.OperandError, "cannot read"):
                tm.read_operand(os.path.join(d, "missing.bin"), 1, crc)
        self.assertEqual(tm.crc32_text(b"123456789"), "crc32:cbf43926")


class FakeEvent(object):
    """torch.cuda.Event on a fake clock: each product takes 2 ms."""
    clock = [0.0]
    log = []

    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = FakeEvent.clock[0]

    def synchronize(self):
        FakeEvent.log.append("sync")

    def elapsed_time(self, other):
        return other.t - self.t


def fake_torch():
    return types.SimpleNamespace(cuda=types.SimpleNamespace(Event=FakeEvent))


def product():
    FakeEvent.clock[0] += 2.0
    FakeEvent.log.append("op")


class TimingLoopTest(unittest.TestCase):
    def setUp(self):
        FakeEvent.clock[0], FakeEvent.log[:] = 0.0, []

    def test_counts_are_probe_gemms(self):
        samples = []

        class Nvml(object):
            def sample(self):
                samples.append(FakeEvent.clock[0])
                return {"sm_mhz": 1980, "power_w": 700.0, "temperature_c": 60, "reasons": ["sw_power_cap"]}

            def limits(self):
                return {"power_limit_w": 700.0, "sm_mhz_limit": 1980}

        timing, clocks = tm.time_products(fake_torch(), product, 40, 123, Nvml())
        self.assertEqual(FakeEvent.log.count("op"), 40 + 123)
        self.assertEqual((timing["warmup_runs"], timing["timed_runs"]), (40, 123))
        self.assertEqual(timing["ms_median"], 2.0)
        self.assertEqual(timing["method"], tm.TIMING_METHOD)
        self.assertGreaterEqual(clocks["samples"], 2)  # at the start and before the end
        self.assertEqual(clocks["power_limit_w"], 700.0)
        self.assertEqual(clocks["end"]["reasons"], ["sw_power_cap"])

    def test_batches_and_two_in_flight(self):
        times = []
        tm.run_products(fake_torch(), product, 10, 4, times)
        self.assertEqual(len(times), 10)
        # two batches (8 products) are enqueued before the first wait
        self.assertEqual(FakeEvent.log[:9], ["op"] * 8 + ["sync"])
        self.assertEqual(tm.batch_size(0.7), 72)
        self.assertEqual(tm.batch_size(500), 1)
        self.assertEqual(tm.batch_size(0), 1)
        self.assertEqual(tm.median([3, 1, 2, 4]), 2.5)
        self.assertEqual(tm.reason_names(0x4 | 0x100), ["sw_power_cap", "other"])
        self.assertIsNone(tm.clock_summary([], None))


if __name__ == "__main__":
    unittest.main()
