"""OS-layer misuse: each case could hang run() for ever if unchecked; each must end with one clear
error. Every case runs in a child process with a timeout, so that a regression fails the test instead of hanging
the suite."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

PRELUDE = """
import smtlab
from smtlab import DeadlockError, UsageError
from smtlab.os import Block, Channel, Compute, Kernel, Linux24, Send, Sleep, Task
cfg = smtlab.load_config(None, {"core.threads": 2})
"""


def run_child(body: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "python"), env.get("PYTHONPATH", "")]))
    code = PRELUDE + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)


def test_one_scheduler_given_to_two_kernels_is_refused():
    proc = run_child("""
        sched = Linux24()
        k1 = Kernel(cfg, sched, tick_cycles=20_000)
        try:
            Kernel(cfg, sched, tick_cycles=20_000)
        except UsageError as e:
            print("ERR", e)
        # the first kernel is untouched and runs its task to the end
        t = k1.spawn(Task("a", [Compute(5_000)], source="gen:alu,count=0"))
        k1.run()
        print("DONE", t.stats.instructions, t.pid)
    """)
    assert proc.returncode == 0, proc.stderr
    err = next(line for line in proc.stdout.splitlines() if line.startswith("ERR"))
    assert "linux24 scheduler instance already belongs to another kernel" in err
    assert "DONE 5000 1" in proc.stdout


def test_scheduler_setup_refuses_a_second_kernel_directly():
    # A custom driver calling setup itself gets the same answer.
    proc = run_child("""
        sched = Linux24()
        k1 = Kernel(cfg, sched, tick_cycles=20_000)
        k2 = Kernel(cfg, Linux24(), tick_cycles=20_000)
        try:
            sched.setup(k2)
        except UsageError as e:
            print("ERR", e)
    """)
    assert proc.returncode == 0, proc.stderr
    assert "ERR linux24: this scheduler instance already belongs to another kernel" in proc.stdout


def test_daemon_computing_for_ever_while_every_task_is_blocked_is_a_deadlock():
    proc = run_child("""
        ch = Channel("reply")
        k = Kernel(cfg, Linux24(), tick_cycles=20_000, stall_ms=0.5)
        k.spawn(Task("client", [Block(ch)], source="gen:alu,count=0"))
        k.spawn(Task("spinner", [Compute(source="gen:alu,count=0", loop=True)], daemon=True))
        try:
            k.run()
        except DeadlockError as e:
            print("ERR", e, "AT", k.now)
    """)
    assert proc.returncode == 0, proc.stderr
    err = next(line for line in proc.stdout.splitlines() if line.startswith("ERR"))
    assert "every task that is not a daemon has waited on a channel" in err
    assert "'client'" in err and "'spinner'" in err and "stall_ms" in err
    # stall_ms 0.5 at the default preset's clock, detected at the first tick after it (ticks every 20,000 cycles)
    ghz = float(run_child("print(cfg.freq_ghz)").stdout)
    at = int(err.rsplit("AT", 1)[1])
    assert 0.5e6 * ghz <= at <= 0.5e6 * ghz + 2 * 20_000


def test_daemon_server_that_answers_is_not_a_deadlock():
    """The legitimate pattern the stall rule must leave alone: a client waits while a daemon server computes its
    reply (0.2 ms, shorter than stall_ms 0.5), then is woken; the run ends normally."""
    proc = run_child("""
        req, reply = Channel("req"), Channel("reply")
        def client():
            for _ in range(3):
                yield Send(req)
                yield Block(reply)
        def server():
            while True:
                yield Block(req)
                yield Sleep(us=200)
                yield Send(reply)
        k = Kernel(cfg, Linux24(), tick_cycles=20_000, stall_ms=0.5)
        c = k.spawn(Task("client", client, source="gen:alu,count=0"))
        k.spawn(Task("server", server, source="gen:alu,count=0", daemon=True))
        k.run()
        print("DONE", c.done)
    """)
    assert proc.returncode == 0, proc.stderr
    assert "DONE True" in proc.stdout


def test_everyone_blocked_is_still_reported_at_once():
    proc = run_child("""
        k = Kernel(cfg, Linux24(), tick_cycles=20_000)
        k.spawn(Task("a", [Block(Channel("never"))], source="gen:alu,count=0"))
        k.spawn(Task("d", [Block(Channel("never2"))], source="gen:alu,count=0", daemon=True))
        try:
            k.run()
        except DeadlockError as e:
            print("ERR", e, "AT", k.now)
    """)
    assert proc.returncode == 0, proc.stderr
    err = next(line for line in proc.stdout.splitlines() if line.startswith("ERR"))
    assert "every live task waits on a channel nobody will send to" in err
    assert int(err.rsplit("AT", 1)[1]) <= 20_000


@pytest.mark.parametrize("bad", [0, -1.0, "5", True])
def test_stall_ms_must_be_positive(bad):
    import smtlab
    from smtlab.os import Kernel, Linux24

    with pytest.raises(ValueError, match="stall_ms must be a positive number"):
        Kernel(smtlab.load_config(None, {"core.threads": 2}), Linux24(), stall_ms=bad)


def test_a_second_kernel_over_one_machine_is_refused_at_construction():
    """A kernel owns its machine's clock and CPUs; two kernels over one machine would each attach sources and move
    its time under the other's feet."""
    proc = run_child("""
        m = smtlab.Machine(cfg)
        k1 = Kernel(m, Linux24(), tick_cycles=20_000)
        try:
            Kernel(m, Linux24(), tick_cycles=20_000)
        except UsageError as e:
            print("ERR", e)
        t = k1.spawn(Task("a", [Compute(5_000)], source="gen:alu,count=0"))
        k1.run()
        print("DONE", t.stats.instructions)
    """)
    assert proc.returncode == 0, proc.stderr
    err = next(line for line in proc.stdout.splitlines() if line.startswith("ERR"))
    assert "this Machine already belongs to another kernel" in err
    assert "DONE 5000" in proc.stdout


def test_a_kernel_refused_for_another_reason_leaves_its_machine_free():
    proc = run_child("""
        m = smtlab.Machine(cfg)
        try:
            Kernel(m, Linux24(), spawn_cpu=99)
        except UsageError as e:
            print("ERR", e)
        k = Kernel(m, Linux24(), tick_cycles=20_000)
        t = k.spawn(Task("a", [Compute(5_000)], source="gen:alu,count=0"))
        k.run()
        print("DONE", t.stats.instructions)
    """)
    assert proc.returncode == 0, proc.stderr
    assert "ERR Kernel: spawn_cpu 99 does not exist" in proc.stdout
    assert "DONE 5000" in proc.stdout


def test_a_kernel_whose_run_raised_refuses_to_run_again_naming_the_first_error():
    """A run that raised stopped in the middle of an event (here a switch-in whose source would not open), so the
    kernel refuses further runs and spawns with the error that stopped it; its results stay readable."""
    proc = run_child("""
        k = Kernel(cfg, Linux24(), tick_cycles=20_000)
        k.spawn(Task("bad", [Compute(5_000)], source="/nonexistent/x.trace"))
        k.spawn(Task("good", [Compute(5_000)], source="gen:alu,count=0"))
        try:
            k.run()
        except smtlab.TraceError as e:
            print("FIRST", e)
        for call in (k.run, lambda: k.spawn(Task("late", [Compute(5)], source="gen:alu,count=0"))):
            try:
                call()
            except UsageError as e:
                print("ERR", e)
        print("ROWS", len(k.task_frame()))
    """, timeout=20)
    assert proc.returncode == 0, proc.stderr
    errs = [line for line in proc.stdout.splitlines() if line.startswith("ERR")]
    assert len(errs) == 2, proc.stdout
    for err in errs:
        assert "an earlier run() raised TraceError" in err and "/nonexistent/x.trace" in err
        assert "build a new Kernel" in err
    assert "ROWS 2" in proc.stdout
