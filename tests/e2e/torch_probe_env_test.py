#!/usr/bin/env python3
"""The torch probe (probes/torch/torch_probe.py) on installs that break importlib.metadata,
without torch: one distribution whose METADATA is not UTF-8 (../shared/reports/adversarial-3.md
row 22: it made the whole probe die with no result, so every torch check of an honest image
said ERROR "no output") is skipped with a note; the others are still read; and an exception
that stops the probe becomes its result with the traceback's last line, not a bare traceback.
Usage: python3 tests/e2e/torch_probe_env_test.py
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE_DIR = os.path.join(ROOT, "probes", "torch")
sys.path.insert(0, PROBE_DIR)
import torch_probe  # noqa: E402
import torch_probe_env  # noqa: E402


def dist_info(site, name, version, metadata_bytes=None):
    d = os.path.join(site, "%s-%s.dist-info" % (name.replace("-", "_"), version))
    os.makedirs(d)
    body = metadata_bytes if metadata_bytes is not None else (
        "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)).encode()
    with open(os.path.join(d, "METADATA"), "wb") as f:
        f.write(body)
    with open(os.path.join(d, "RECORD"), "w") as f:
        f.write("")
    return d


def hostile_site(site):
    # A Latin-1 METADATA (\xff\xfe is not UTF-8) under a name the probe reads (nvidia-*),
    # beside an honest nvidia wheel.
    bad = dist_info(site, "nvidia-bad-cu12", "1.0",
                    b"Metadata-Version: 2.1\nName: nvidia-bad-cu12\nVersion: 1.0\nSummary: \xff\xfe caf\xe9\n")
    dist_info(site, "nvidia-good-cu12", "12.8.1")
    return bad


class DistributionsTest(unittest.TestCase):
    def test_a_metadata_that_is_not_utf8_is_skipped_with_a_note(self):
        with tempfile.TemporaryDirectory() as site:
            bad = hostile_site(site)
            sys.path.insert(0, site)
            try:
                notes = []
                found = torch_probe_env.distributions(notes)
            finally:
                sys.path.remove(site)
            self.assertEqual(found.get("nvidia-good-cu12", {}).get("version"), "12.8.1")
            self.assertNotIn("nvidia-bad-cu12", found)
            skipped = [n for n in notes if bad in n]
            self.assertEqual(len(skipped), 1, notes)
            self.assertIn("UnicodeDecodeError", skipped[0])

    def test_the_probe_answers_with_the_note_instead_of_dying(self):
        with tempfile.TemporaryDirectory() as site:
            bad = hostile_site(site)
            env = dict(os.environ, PYTHONPATH=site)
            r = subprocess.run([sys.executable, os.path.join(PROBE_DIR, "torch_probe.py")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120)
            lines = [l for l in r.stdout.decode("utf-8", "replace").splitlines() if l.startswith("{")]
            self.assertTrue(lines, r.stderr.decode("utf-8", "replace")[-2000:])
            result = json.loads(lines[-1])
            # No torch on this interpreter: "waived" (no torch module), with a usable result.
            self.assertIn(result["status"], ("waived", "pass", "fail"), result["reason"])
            self.assertTrue(any(bad in n for n in result["data"]["notes"]), result["data"]["notes"])
            self.assertIn("nvidia-good-cu12", result["data"]["distributions"])


class DiedTest(unittest.TestCase):
    def test_an_exception_in_the_probe_is_its_result_with_the_traceback_s_last_line(self):
        real = torch_probe.probe_env.distributions

        def broken(notes=None):
            raise RuntimeError("boom\nsecond line")
        torch_probe.probe_env.distributions = broken
        # In this process, not re-executed under the loader's trace (the patch would be lost).
        traced_exec = torch_probe.crashes.traced_exec
        torch_probe.crashes.traced_exec = lambda interpreter, script, argv: None
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                code = torch_probe.run([])
        finally:
            torch_probe.probe_env.distributions = real
            torch_probe.crashes.traced_exec = traced_exec
        self.assertEqual(code, torch_probe.EXIT["error"])
        result = json.loads([l for l in out.getvalue().splitlines() if l.startswith("{")][-1])
        self.assertEqual(result["status"], "error")
        self.assertIn("torch_probe.py died: RuntimeError: boom (at torch_probe_env_test.py:", result["reason"])
        self.assertIn("in broken)", result["reason"])
        self.assertNotIn("second line", result["reason"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
