"""A sweep stopped by a signal ends its pool's worker processes and exits with the shell's status for that signal
(128 + the signal's number), saying in one line that finished runs are stored. A worker left behind would keep a CPU
busy with its simulation for as long as it runs, owned by init.

Each sweep runs in its own session, so that every process it started (its workers included, even once reparented to
init) is found by the session id, and the test's clean-up can end any that survive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import smtlab

PYTHON_DIR = str(Path(smtlab.__file__).resolve().parent.parent)

# 24 runs of 20 M instructions each on 2 workers: minutes of work, so the sweep is surely mid-run when signalled.
LONG_SWEEP = """config = "netburst"
max_instructions = 20000000
seeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
[workloads]
a = ["gen:alu"]
b = ["gen:mix"]
"""


def session_members(sid: int) -> list[int]:
    """The live processes (not zombies) of session ``sid``, read from /proc."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # exited meanwhile
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state ppid pgrp session ...
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(entry))
    return pids


def wait_for(predicate, timeout: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


@pytest.fixture
def sweep_process(tmp_path):
    """Starts the long sweep with 2 workers in a new POSIX session (setsid); afterwards ends every process left in it."""
    started: list[subprocess.Popen[str]] = []

    def start() -> subprocess.Popen[str]:
        (tmp_path / "long.toml").write_text(LONG_SWEEP)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, os.environ.get("PYTHONPATH", "")]))
        proc = subprocess.Popen([sys.executable, "-m", "smtlab.sweep", "long.toml", "-o", "out", "--workers", "2"],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        for pid in session_members(proc.pid):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signalled_sweep_ends_its_workers_and_exits_with_the_signals_status(sweep_process, signum):
    proc = sweep_process()
    # the driver and both workers are up (the pool starts its processes at the first submit)
    assert wait_for(lambda: len(session_members(proc.pid)) >= 3, timeout=30), "the sweep's workers did not start"
    time.sleep(0.5)  # into the simulations
    os.kill(proc.pid, signum)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the sweep did not exit within 15 s of {signum.name}")
    assert wait_for(lambda: not session_members(proc.pid), timeout=5), (
        f"processes left running after {signum.name}: {session_members(proc.pid)}")
    _, err = proc.communicate(timeout=5)  # the pipes' ends close with the last process holding them
    assert proc.returncode == 128 + signum, err
    lines = [line for line in err.splitlines() if line.startswith("smtlab sweep:")]
    assert "Traceback" not in err, err
    assert lines == [f"smtlab sweep: stopped by {signum.name}; finished runs are stored, rerun to resume"], err
