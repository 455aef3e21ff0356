"""LMbench's fork+/bin/sh -c on a recorded path: with real paths on, the forked child runs one recorded
instance of kpath:sh_c (workloads/kpath/probe.c: execve of /bin/sh -c, busybox ash's start-up, ash's own execve of
the program, up to its main()) instead of the scaled execve, 80 faults and 300k instructions of shell start-up, the
second execve and the hello's 30 faults and 20k; then the hello's write and exit. With real paths off every step
keeps exactly its estimated instruction count (the estimates are written out below from the kpaths table)."""

from __future__ import annotations

import pathlib
import re

from smtlab.os import Compute, Send
from smtlab.workloads import kpaths, lmbench

ROOT = pathlib.Path(__file__).parents[2]

# The estimates (kpaths._TABLE as it stands at this commit), in instructions: the trap (int 0x80 + iret) 450, execve
# 250,000, page_fault 1,500, exit 30,000.
TRAP, EXECVE, FAULT, EXIT = 450, 250_000, 1500, 30_000


def _kpath_names() -> list[str]:
    text = (ROOT / "workloads/kpath/kpath_paths.h").read_text()
    return re.findall(r"^KPATH\((\w+),", text, flags=re.M)


def _child_steps(kind: str) -> list:
    task = lmbench._child_task(kind, kpaths.WakeChannel("wait"), kpaths.WakeChannel("fork"))
    return list(task.program())


def _kpath_of(step) -> str | None:
    if not isinstance(step, Compute) or step.source is None:
        return None
    m = re.fullmatch(r"kpath:(\w+),seed=\d+,stack=\d+", step.source)
    assert m, step.source
    return m.group(1)


def test_the_sh_mapping_names_a_recorded_path():
    assert kpaths.REAL_PATHS["sh -c"] == "sh_c"
    names = _kpath_names()
    # Appended: the ids of the paths recorded before it (their positions) stay what they were.
    assert names.index("sh_c") > names.index("execve")
    assert names.index("sh_c") > names.index("writeback")


def test_sh_child_runs_the_recorded_shell(real_paths):
    steps = _child_steps("sh")
    # Two copy-on-write faults after fork, the recorded sh -c, the hello's failing write (a null call's entry and
    # exit), the recorded _exit with its parent's wait, and the wake-up of the parent.
    assert [_kpath_of(s) for s in steps if _kpath_of(s)] == ["page_fault", "page_fault", "sh_c", "getppid",
                                                             "exit_wait"]
    estimated = [s for s in steps if isinstance(s, Compute) and s.source is None]
    # The only user code left: the hello's main and glibc's exit(), as measured (lmbench.HELLO_AFTER_MAIN: 19 + 396).
    assert [s.instructions for s in estimated] == [19 + 396]
    assert isinstance(steps[-1], Send)


def test_execve_child_is_not_the_shell(real_paths):
    # fork+execve keeps the recorded execve of the program alone.
    names = [_kpath_of(s) for s in _child_steps("execve") if _kpath_of(s)]
    assert "sh_c" not in names and names.count("execve") == 1


def test_execve_child_runs_no_start_up_after_the_recorded_execve(real_paths):
    # kpath:execve runs up to the program's main (docs/tracing.md), its start-up and page faults included: after it
    # come only the hello's failing write and its user code to exit, as for sh -c, and not also the estimate's 30
    # faults (30 recorded page_fault instances) and 20k instructions of start-up, which would count the start-up twice.
    steps = _child_steps("execve")
    assert [_kpath_of(s) for s in steps if _kpath_of(s)] == ["page_fault", "page_fault", "execve", "getppid",
                                                             "exit_wait"]
    assert [s.instructions for s in steps if isinstance(s, Compute) and s.source is None] == [19 + 396]


def test_execve_child_keeps_the_old_estimate_without_recordings(estimates):
    steps = _child_steps("execve")
    # faults(2); execve with its trap; 30 faults; the hello's 20k; exit with its trap.
    assert [s.instructions for s in steps if isinstance(s, Compute)] == [
        2 * FAULT, TRAP + EXECVE, 30 * FAULT, 20_000, TRAP + EXIT]


def test_sh_child_keeps_the_old_estimate_without_recordings(estimates):
    steps = _child_steps("sh")
    assert all(not isinstance(s, Compute) or s.source is None for s in steps)
    # faults(2); execve x 1.3 with its trap; 80 faults; 300k of shell start-up; execve; 30 faults; the hello's 20k;
    # exit with its trap.
    assert [s.instructions for s in steps if isinstance(s, Compute)] == [
        2 * FAULT, TRAP + round(1.3 * EXECVE), 80 * FAULT, 300_000, TRAP + EXECVE, 30 * FAULT, 20_000, TRAP + EXIT]
    assert isinstance(steps[-1], Send)
