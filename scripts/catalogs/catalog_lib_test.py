#!/usr/bin/env python3
"""Unit tests of catalog_lib's pure logic: format strings to line templates, the filters that
keep a message only where it can be attributed, rules and defaults. Run by ctest
(catalog_lib_unit)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_lib as c  # noqa: E402


def meanings(rules=(), skip=(), keep_unruled=True):
    m = {"default": {"cause": "X printed it (its words: \"{message}\").", "fix": "Read it.",
                     "rank": 10}, "rules": list(rules), "skip": list(skip),
         "keep_unruled": keep_unruled}
    m["_rules"] = [(c.re.compile(r["match"]), r) for r in m["rules"]]
    m["_skip"] = [c.re.compile(s) for s in m["skip"]]
    m["_used"] = set()
    return m


class Templates(unittest.TestCase):
    def test_printf(self):
        self.assertEqual(c.to_template("Version '%s' for '%s' was not found", "printf"),
                         ("Version '{a1*}' for '{a2*}' was not found", ["a1", "a2"]))

    def test_number_is_a_word_capture(self):
        t, _ = c.to_template("subprocess %s returned error exit status %d", "printf")
        self.assertEqual(t, "subprocess {a1*} returned error exit status {a2}")

    def test_leading_placeholder_and_punctuation_dropped(self):
        self.assertEqual(c.to_template("%s: cannot open shared object file: %s", "printf")[0],
                         "cannot open shared object file: {a1*}")
        self.assertEqual(c.to_template("--%s needs a valid package name but '%s' is not", "printf")[0],
                         "needs a valid package name but '{a1*}' is not")

    def test_neighbouring_placeholders_merge(self):
        self.assertEqual(c.to_template("undefined symbol: %s%s%s in the library", "printf")[0],
                         "undefined symbol: {a1*} in the library")

    def test_python_and_rust_braces(self):
        self.assertEqual(c.to_template("No solution found when resolving {}: {:?}", "rust")[0],
                         "No solution found when resolving {a1*}: {a2*}")
        self.assertEqual(c.to_template("could not build {{braces}} for {name}", "python")[0],
                         "could not build {{braces}} for {a1*}")

    def test_names(self):
        self.assertEqual(c.to_template("Version '%s' for '%s' was not found", "printf",
                                       ["version", "package"])[1], ["version", "package"])

    def test_multi_line_keeps_the_most_specific_line(self):
        self.assertEqual(c.to_template("error processing package %s (--%s):\n %s", "printf")[0],
                         "error processing package {a1*} (--{a2*}):")

    def test_first_sentence_when_the_rest_is_a_hint(self):
        self.assertEqual(c.to_template("Failed to find C compiler. Please specify via CC "
                                       "environment variable or set the knob.", "python")[0],
                         "Failed to find C compiler.")
        # the rest names a value: kept whole
        self.assertEqual(c.to_template("Failed to find C compiler. Tried the path {}.", "python")[0],
                         "Failed to find C compiler. Tried the path {a1*}.")
        # a first sentence too short to stand alone: kept whole
        self.assertEqual(c.to_template("Build failed. Run the steps again with the flag.", "python")[0],
                         "Build failed. Run the steps again with the flag.")

    def test_too_short_or_generic(self):
        for fmt in ["E: %s", "no such file or directory", "container %s not found",
                    "has no attribute %r", "context deadline exceeded", "invalid argument: %s"]:
            self.assertIsNone(c.to_template(fmt, "go"), fmt)
        self.assertIsNotNone(c.to_template("torchdock: error: %s", "printf", short_ok=True))


class Entries(unittest.TestCase):
    def test_rule_default_candidate_and_warning(self):
        rule = {"match": "^Unable to locate", "names": ["package"], "title": "T", "cause": "C {package}",
                "fix": "F", "rank": 40}
        msgs = [("Unable to locate package %s", "apt 2.6.1 a.cc", "error"),
                ("Could not open the archive file %s now", "apt 2.6.1 b.cc", "error"),
                ("Reading the package lists of %s now", "apt 2.6.1 c.cc", "candidate"),
                ("The key of repository %s expires soon", "apt 2.6.1 d.cc", "warning")]
        entries, stats = c.build_entries("apt", msgs, meanings([rule]), "printf")
        by_src = {e["source"][0].split()[-1]: e for e in entries}
        self.assertEqual(by_src["a.cc"]["patterns"], ["Unable to locate package {package*}"])
        self.assertEqual(by_src["a.cc"]["rank"], 40)
        self.assertNotIn("cause", by_src["b.cc"])  # the file's default, written once
        self.assertEqual(by_src["b.cc"]["rank"], 10)
        self.assertNotIn("c.cc", by_src)  # a candidate needs a rule
        self.assertEqual(by_src["d.cc"]["rank"], 5)
        self.assertEqual(c.DEFAULTS["apt"]["cause"], "X printed it.")

    def test_keep_unruled_false(self):
        entries, _ = c.build_entries("numpy", [("Could not open the archive file %s now", "n 1 a.py")],
                                     meanings(keep_unruled=False), "python")
        self.assertEqual(entries, [])

    def test_a_rule_that_matches_nothing_stops_the_generator(self):
        rule = {"match": "^never", "title": "T", "cause": "C", "fix": "F"}
        with self.assertRaises(SystemExit):
            c.build_entries("x", [("Could not open the archive file %s now", "x 1 a.c")],
                            meanings([rule]), "printf")

    def test_same_template_twice_is_one_entry_with_both_sources(self):
        msgs = [("Could not open the archive file %s now", "x 1 a.c"),
                ("Could not open the archive file %s now", "x 2 b.c")]
        entries, stats = c.build_entries("x", msgs, meanings(), "printf")
        self.assertEqual(len(entries), 1)
        self.assertEqual(entries[0]["source"], ["x 1 a.c", "x 2 b.c"])


if __name__ == "__main__":
    unittest.main()
