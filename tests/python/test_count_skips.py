"""scripts/count_skips.py and `make test`'s last line: skipped tests are counted with their causes, and where
everything is installed (REQUIRE_ALL_TESTS=1, the default under CI) a skip fails the run. The inputs below are
excerpts in the formats ctest 3.25 (LastTest.log, --output-junit), GoogleTest 1.12 and pytest write."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "count_skips.py"


def _load():
    spec = importlib.util.spec_from_file_location("count_skips", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


count_skips = _load()


def _ctest_block(index: int, name: str, output: str) -> str:
    return f"""{index}/3 Testing: {name}
{index}/3 Test: {name}
Command: "/b/test_x" "--gtest_filter={name}" "--gtest_also_run_disabled_tests"
Directory: /b
"{name}" start time: Dec 07 05:00 UTC
Output:
----------------------------------------------------------
Running main() from ./googletest/src/gtest_main.cc
Note: Google Test filter = {name}
[==========] Running 1 test from 1 test suite.
[ RUN      ] {name}
{output}<end of output>
Test time =   0.00 sec
----------------------------------------------------------
Test Passed.
"{name}" end time: Dec 07 05:00 UTC
----------------------------------------------------------

"""


CTEST_LOG = (
    "Start testing: Dec 07 05:00 UTC\n----------------------------------------------------------\n"
    + _ctest_block(1, "Tracer.RecordsASnippet", "/src/tracer_test.cpp:40: Skipped\n"
                   "tracer unavailable: QEMU tracer plugin was not built\n[  SKIPPED ] Tracer.RecordsASnippet (0 ms)\n"
                   "[  PASSED  ] 0 tests.\n[  SKIPPED ] 1 test, listed below:\n[  SKIPPED ] Tracer.RecordsASnippet\n")
    + _ctest_block(2, "Energy.Sums", "[       OK ] Energy.Sums (0 ms)\n[  PASSED  ] 1 test.\n")
    + _ctest_block(3, "Tracer.Exec", "/src/exec_source_test.cpp:12: Skipped\ntracer unavailable: QEMU tracer plugin "
                   "was not built\n[  SKIPPED ] Tracer.Exec (0 ms)\n")
    + "End testing: Dec 07 05:00 UTC\n"
)

PYTEST_JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0"
skipped="2" tests="3"><testcase classname="test_a" name="test_runs" time="0.001" /><testcase classname="test_a"
name="test_kernel" time="0.000"><skipped type="pytest.skip" message="kernel image missing">/t/test_a.py:5: kernel
image missing</skipped></testcase><testcase classname="test_b" name="test_perm" time="0.000"><skipped
type="pytest.skip" message="root writes into read-only folders">/t/test_b.py:9: root writes into read-only
folders</skipped></testcase></testsuite></testsuites>"""

CTEST_JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="2" failures="0" disabled="0" skipped="1" hostname="" time="0">
<testcase name="A.Skips" classname="A.Skips" time="0.0046" status="notrun">
<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
<system-out>[ RUN      ] A.Skips
/src/t.cpp:2: Skipped
built without capstone
[  SKIPPED ] A.Skips (0 ms)
</system-out>
</testcase>
<testcase name="A.Passes" classname="A.Passes" time="0.001" status="run"><system-out>[ OK ]</system-out></testcase>
</testsuite>"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_the_ctest_log_gives_each_skipped_test_with_its_googletest_message(tmp_path):
    skips = count_skips.ctest_log_skips(_write(tmp_path, "LastTest.log", CTEST_LOG))
    cause = "tracer unavailable: QEMU tracer plugin was not built"
    assert skips == [("Tracer.RecordsASnippet", cause), ("Tracer.Exec", cause)]


def test_junit_files_give_pytest_reasons_and_ctest_output_messages(tmp_path):
    assert count_skips.junit_skips(_write(tmp_path, "py.xml", PYTEST_JUNIT)) == [
        ("test_a.test_kernel", "kernel image missing"),
        ("test_b.test_perm", "root writes into read-only folders"),
    ]
    ctest = count_skips.junit_skips(_write(tmp_path, "ctest.xml", CTEST_JUNIT))
    assert ctest == [("A.Skips", "built without capstone")]


def test_one_line_counts_the_skips_and_names_each_cause_with_its_count(tmp_path):
    log = _write(tmp_path, "LastTest.log", CTEST_LOG)
    junit = _write(tmp_path, "py.xml", PYTEST_JUNIT)
    done = _run("--ctest-log", str(log), "--junit", str(junit))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "make test: 4 tests skipped: 2 tracer unavailable: QEMU tracer plugin was not built; 1 kernel image missing; "
        "1 root writes into read-only folders"
    ]


def test_strict_fails_on_any_skip_and_lists_them(tmp_path):
    junit = _write(tmp_path, "py.xml", PYTEST_JUNIT)
    done = _run("--junit", str(junit), "--strict")
    assert done.returncode == 1
    assert "  skipped test_a.test_kernel: kernel image missing" in done.stdout
    assert "make test: 2 tests skipped" in done.stdout


def test_strict_passes_when_nothing_skipped(tmp_path):
    log = _write(tmp_path, "LastTest.log", _ctest_block(1, "Energy.Sums", "[       OK ] Energy.Sums (0 ms)\n"))
    done = _run("--ctest-log", str(log), "--strict")
    assert (done.returncode, done.stdout) == (0, "make test: no test skipped\n")


@pytest.mark.parametrize("name, text, said", [
    ("missing.xml", None, "cannot read the JUnit file"),
    ("bad.xml", "<not closed", "not a JUnit XML file"),
    ("other.xml", "<html></html>", "not a JUnit XML file (root element <html>)"),
])
def test_an_unreadable_or_foreign_junit_file_is_one_line_and_exit_2(tmp_path, name, text, said):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    done = _run("--junit", str(path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and str(path) in done.stderr and said in done.stderr


def test_a_file_that_is_not_a_ctest_log_is_refused(tmp_path):
    done = _run("--ctest-log", str(_write(tmp_path, "x.log", "hello\n")))
    assert done.returncode == 2 and "not a ctest log" in done.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("ci, strict", [("", False), ("true", True), ("false", False)])
def test_make_test_ends_with_the_skip_count_strict_under_ci(ci, strict):
    # Run inside `make test` too: the outer make's variables (its level, flags, jobserver) are not this make's.
    outer = ("CI", "REQUIRE_ALL_TESTS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
    env = {k: v for k, v in os.environ.items() if k not in outer}
    if ci:
        env["CI"] = ci
    done = subprocess.run(["make", "-n", "--no-print-directory", "test"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    last = done.stdout.rstrip().splitlines()
    commands = " ".join(last[-2:])
    assert "scripts/count_skips.py" in commands and "LastTest.log" in commands
    assert ("--strict" in commands) == strict
    assert "--junitxml=" in done.stdout
