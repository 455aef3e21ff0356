#!/usr/bin/env python3
"""Counts the tests that `make test` skipped and names their causes, in one line; with --strict, exits 1 if any did.

Reads what the two runners record of each test:
- ctest: its log of the last run (<build>/Testing/Temporary/LastTest.log), where a GoogleTest skip shows as
  "<file>:<line>: Skipped", the GTEST_SKIP message, and "[  SKIPPED ]"; or a JUnit file (ctest --output-junit);
- pytest: a JUnit file (pytest --junitxml), whose <skipped> elements carry the skip reason.

A cause is the skip's message (for pytest, without the "file:line: " prefix); equal messages are counted together.
--strict is for a machine where everything the tests need is installed (CONTRIBUTING.md, "Tests"): a skip there is
a check that did not run, so it fails the run instead of passing in silence.
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

# One test's block in LastTest.log runs from its "N/M Testing: NAME" line to the next one.
_CTEST_BLOCK = re.compile(r"^\d+/\d+ Testing: (?P<name>\S+)$", re.MULTILINE)
# GoogleTest prints "FILE:LINE: Skipped" and then the message given to GTEST_SKIP (possibly empty) before the
# "[  SKIPPED ]" line; ctest marks a test skipped by that line (gtest_discover_tests' SKIP_REGULAR_EXPRESSION).
_GTEST_SKIP = re.compile(r"^\S+:\d+: Skipped\n(?P<message>.*?)^\[  SKIPPED \]", re.MULTILINE | re.DOTALL)
# pytest's text of a skip: "path/to/test.py:12: reason" (the reason alone is the cause).
_PYTEST_LOCATION = re.compile(r"^\S+\.py:\d+: ")


class InputError(Exception):
    """An input file that is missing or not in the expected format."""


def ctest_log_skips(path: Path) -> list[tuple[str, str]]:
    """(test, cause) for each test the ctest log shows as skipped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputError(f"{path}: cannot read the ctest log: {e.strerror}") from None
    starts = list(_CTEST_BLOCK.finditer(text))
    if not starts and text.strip():
        raise InputError(f"{path}: not a ctest log (no 'N/M Testing: NAME' line)")
    skips = []
    for i, start in enumerate(starts):
        block = text[start.end() : starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        if "[  SKIPPED ]" not in block:
            continue
        found = _GTEST_SKIP.search(block)
        message = found.group("message").strip() if found else ""
        skips.append((start.group("name"), _one_line(message)))
    return skips


def junit_skips(path: Path) -> list[tuple[str, str]]:
    """(test, cause) for each <testcase> with a <skipped> element in a JUnit file (pytest's or ctest's)."""
    try:
        root = ET.parse(path).getroot()
    except OSError as e:
        raise InputError(f"{path}: cannot read the JUnit file: {e.strerror}") from None
    except ET.ParseError as e:
        raise InputError(f"{path}: not a JUnit XML file: {e}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise InputError(f"{path}: not a JUnit XML file (root element <{root.tag}>)")
    skips = []
    for case in root.iter("testcase"):
        skipped = case.find("skipped")
        if skipped is None:
            continue
        classname, name = case.get("classname") or "", case.get("name") or ""
        name = name if classname in ("", name) else f"{classname}.{name}"
        # ctest's <skipped> says only that the skip pattern matched; the test's output has GoogleTest's message.
        out = case.findtext("system-out") or ""
        found = _GTEST_SKIP.search(out)
        if found:
            message = found.group("message")
        else:
            message = skipped.get("message") or (skipped.text or "")
        skips.append((name, _one_line(_PYTEST_LOCATION.sub("", message.strip()))))
    return skips


def _one_line(message: str) -> str:
    message = " ".join(message.split())
    return message if message else "no reason given"


def summary(label: str, skips: list[tuple[str, str]]) -> str:
    """'label: N tests skipped: k cause; k cause' (most frequent cause first), or 'label: no test skipped'."""
    if not skips:
        return f"{label}: no test skipped"
    causes = Counter(cause for _, cause in skips)
    listed = "; ".join(f"{count} {cause}" for cause, count in sorted(causes.items(), key=lambda c: (-c[1], c[0])))
    return f"{label}: {len(skips)} test{'s' if len(skips) != 1 else ''} skipped: {listed}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ctest-log", type=Path, action="append", default=[], help="ctest's LastTest.log")
    parser.add_argument("--junit", type=Path, action="append", default=[],
                        help="a JUnit XML file (pytest --junitxml, ctest --output-junit)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if any test was skipped")
    parser.add_argument("--label", default="make test", help="the line's first words (default: make test)")
    parser.add_argument("--list", action="store_true", help="also print each skipped test with its cause")
    args = parser.parse_args(argv)
    if not args.ctest_log and not args.junit:
        parser.error("give at least one --ctest-log or --junit file")
    try:
        skips = [s for p in args.ctest_log for s in ctest_log_skips(p)]
        skips += [s for p in args.junit for s in junit_skips(p)]
    except InputError as e:
        print(f"count_skips: {e}", file=sys.stderr)
        return 2
    if args.list or (args.strict and skips):
        for name, cause in skips:
            print(f"  skipped {name}: {cause}")
    print(summary(args.label, skips))
    if args.strict and skips:
        print(f"{args.label}: failing: everything the tests need is meant to be installed here, so no test may skip "
              "(CONTRIBUTING.md, \"Tests\")")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
