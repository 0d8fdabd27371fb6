#!/usr/bin/env python3
"""A ctest run's verdict that a skip cannot turn green.

Usage: ctest_verdict.py [--build-dir DIR] JUNIT.xml

Reads the JUnit file `ctest --output-junit` wrote and prints how many tests ran per suite (a
suite: the test's first label, else its executable, from `ctest --show-only=json-v1`). Exits 1
when any test was skipped, disabled or did not run, and when a test that ran reports skips of its
own (a pytest summary with "skipped", a gtest "[  SKIPPED ]" line): a suite that did not run is
a failure, never a pass. Exits 0 otherwise (failed tests are ctest's own exit status to report).
Standard library only.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict

# pytest's last line: "65 passed, 2 skipped, 1 deselected in 3.35s" (or "==== ... ====").
PYTEST_SUMMARY = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+) in [\d.]+s", re.M)
PYTEST_NOT_RUN = ("skipped", "deselected", "xfailed")
GTEST_SKIPPED = re.compile(r"^\[  SKIPPED \] (.+)$", re.M)
INTERPRETERS = {"python3", "python", "cmake", "sh", "bash", "env"}


def suites_by_test(build_dir):
    """Test name -> suite name, from ctest's own listing; empty when ctest cannot list."""
    if not build_dir:
        return {}
    try:
        listing = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"], capture_output=True,
                                 text=True, check=True, timeout=120).stdout
        tests = json.loads(listing).get("tests", [])
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}
    suites = {}
    for t in tests:
        labels = [v for p in t.get("properties", []) if p.get("name") == "LABELS" for v in p.get("value", [])]
        command = t.get("command") or []
        program = os.path.basename(command[0]) if command else ""
        if program in INTERPRETERS:  # the script it runs names the suite
            script = next((c for c in command[1:] if c.endswith((".py", ".cmake", ".sh"))), program)
            program = os.path.basename(script)
        suites[t.get("name", "")] = labels[0] if labels else (program or "ctest")
    return suites


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit")
    parser.add_argument("--build-dir", default=None, help="the build tree, to group tests by suite")
    args = parser.parse_args()
    try:
        root = ET.parse(args.junit).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"ctest_verdict: cannot read {args.junit}: {e}", file=sys.stderr)
        return 2
    suites = suites_by_test(args.build_dir)
    ran = Counter()
    problems = []
    inner = defaultdict(Counter)  # suite -> counts its own runner reported (pytest)
    cases = root.iter("testcase")
    total = 0
    for case in cases:
        total += 1
        name = case.get("name", "?")
        suite = suites.get(name, name.split(".")[0])
        status = case.get("status", "")
        if status in ("notrun", "disabled"):
            problems.append(f"{name}: {'disabled' if status == 'disabled' else 'skipped or not run'}")
            continue
        ran[suite] += 1
        out = "".join(e.text or "" for e in case.iter("system-out"))
        for summary in PYTEST_SUMMARY.findall(out):
            for count, word in re.findall(r"(\d+) (\w+)", summary):
                inner[suite][word] += int(count)
                if word in PYTEST_NOT_RUN and int(count) > 0:
                    problems.append(f"{name}: pytest reports {count} {word}")
        for skipped in GTEST_SKIPPED.findall(out):
            if not re.match(r"\d+ tests?,", skipped):
                problems.append(f"{name}: gtest skipped {skipped.strip()}")
    if total == 0:
        problems.append("no test in the report: nothing ran")

    parts = []
    for suite, n in sorted(ran.items(), key=lambda kv: (-kv[1], kv[0])):
        extra = ", ".join(f"{c} {w}" for w, c in sorted(inner[suite].items()))
        parts.append(f"{suite} {n}" + (f" ({extra})" if extra else ""))
    print(f"tests that ran: {sum(ran.values())} of {total}: " + "; ".join(parts))
    if problems:
        print(f"ctest_verdict: {len(problems)} test(s) did not run in full; a skip is a failure here:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
