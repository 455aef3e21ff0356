"""The pybind11 module under misuse: Ctrl-C during a long Machine.run, integers out of
range named by argument, a past run bound, a retire limit that could never fire, restart_trace on an empty CPU."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

import smtlab
from smtlab import EventKind, Instr, Machine, Source, UsageError


def busy_machine(cfg) -> Machine:
    """Two endless, different threads on one core: every cycle has work, no event ever ends a run by itself."""
    m = Machine(cfg)
    m.attach(0, Source("gen:mix,count=0,seed=1"))
    m.attach(1, Source("gen:chase,count=0,seed=2"))
    return m


# --- Ctrl-C --------------------------------------------------------------------------------------------------------
@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals go to the main thread")
def test_sigint_stops_a_long_run_within_a_fraction_of_a_second_and_the_machine_resumes_exactly(cfg_1x2):
    m = busy_machine(cfg_1x2)
    sent: list[tuple[float, float]] = []  # (the process's CPU seconds, wall seconds) when the signal was sent

    def interrupt() -> None:
        sent.append((time.process_time(), time.monotonic()))
        os.kill(os.getpid(), signal.SIGINT)

    # A process started in the background by a non-interactive shell inherits SIGINT ignored, and Python then installs
    # no KeyboardInterrupt handler: the SIGINT below would be lost and the run would go on for hours. The test is about
    # the binding honouring Python's handler, so it installs that handler itself for its duration.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            m.run(cycles=10**11)  # hours of host time without the check
        cpu_latency = time.process_time() - sent[0][0]
        wall_latency = time.monotonic() - sent[0][1]
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    # The work done after the signal is at most the slice in progress. Slices aim at 20 ms of host time
    # (machine_binding.cpp, kSliceTarget), so the CPU time the process spends before it stops is a few tens of ms;
    # 0.5 s is 25 slices. CPU time, not wall time: on a loaded host the process waits for a CPU between slices, which
    # says nothing about the binding. The wall-clock bound only catches a check that never runs (hours).
    assert 0.0 <= cpu_latency < 0.5, f"KeyboardInterrupt came after {cpu_latency:.3f} s of CPU time past SIGINT"
    assert 0.0 <= wall_latency < 60.0, f"KeyboardInterrupt came {wall_latency:.1f} s after SIGINT"
    stopped = m.now
    assert stopped > 0  # it did simulate before the interrupt

    # Usable afterwards: go on to a total T, and compare with a machine that ran T cycles in one call. Machine::run
    # keeps no state between calls, so the statistics must be identical, not merely close.
    total = stopped + 30_000
    events = m.run(until=total)
    assert [e.kind for e in events] == [EventKind.CYCLE_BOUND] and m.now == total
    resumed = m.stats()
    with busy_machine(cfg_1x2) as ref:
        ref.run(cycles=total)
        assert ref.stats() == resumed
    m.close()


def test_a_run_in_many_small_calls_equals_one_call(cfg_1x2):
    """The invariant the signal check rests on: where run() stops between cycles changes nothing."""
    total = 200_000
    with busy_machine(cfg_1x2) as one, busy_machine(cfg_1x2) as many:
        one.run(cycles=total)
        while many.now < total:
            many.run(cycles=min(7_919, total - many.now))  # a prime, so the slices fall anywhere
        assert many.now == one.now == total
        assert many.stats() == one.stats()
        assert one.stats()["logical_cpus"][0]["instructions"] > 0


# --- integers ------------------------------------------------------------------------------------------------------
def test_negative_and_huge_cycle_counts_are_value_errors_naming_the_argument(cfg_1x2):
    with busy_machine(cfg_1x2) as m:
        m.run(cycles=10)
        for bad in (-1, -(2**70)):
            with pytest.raises(ValueError, match=r"run: cycles=-\d+.* is negative"):
                m.run(cycles=bad)
        # 2^64-1 would wrap now+cycles to a bound in the past and simulate nothing: refused with the valid range
        for bad in (2**64 - 1, 2**64, 2**100):
            with pytest.raises(ValueError, match=r"run: cycles=\d+.* is out of range 0\.\.\d+"):
                m.run(cycles=bad)
        with pytest.raises(ValueError, match="run: until=-5 is negative"):
            m.run(until=-5)
        with pytest.raises(ValueError, match="run: until=.* is out of range"):
            m.run(until=2**64)
        with pytest.raises(TypeError, match="run: cycles must be an integer, not float"):
            m.run(cycles=1e3)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="run: cycles must be an integer, not bool"):
            m.run(cycles=True)  # type: ignore[arg-type]
        assert m.now == 10  # nothing above simulated a cycle


def test_a_run_bound_in_the_past_is_refused_and_now_is_an_empty_run(cfg_1x2):
    with busy_machine(cfg_1x2) as m:
        m.run(cycles=1_000)
        with pytest.raises(UsageError, match=r"run: until=999 is in the past \(now=1000\)"):
            m.run(until=999)
        events = m.run(until=1_000)
        assert [(e.kind, e.cycle) for e in events] == [(EventKind.CYCLE_BOUND, 1_000)] and m.now == 1_000


def test_an_idle_machine_jumps_to_a_far_bound_at_once(cfg_1x2):
    """Nothing attached, or every trace ended: nothing can happen before the bound, so the run takes it in one jump.
    In slices of 2^20 cycles the largest bound would take 2^44 slices (weeks). Run in a child
    process so that a regression fails the test instead of hanging it."""
    import subprocess
    import sys

    script = (
        "import smtlab\n"
        "from smtlab import EventKind, Machine, Source\n"
        "cfg = smtlab.load_config('netburst')\n"
        "with Machine(cfg) as m:\n"
        "    ev = m.run(until=2**64 - 2)\n"
        "    assert [(e.kind, e.cycle) for e in ev] == [(EventKind.CYCLE_BOUND, 2**64 - 2)], ev\n"
        "with Machine(cfg) as m:\n"
        "    m.attach(0, Source('gen:alu,count=100'))\n"
        "    ended = m.run(cycles=1_000_000)\n"
        "    assert any(e.kind == EventKind.SOURCE_ENDED for e in ended), ended\n"
        "    start = m.now\n"
        "    ev = m.run(cycles=2**50)\n"
        "    assert m.now == start + 2**50 and ev[-1].kind == EventKind.CYCLE_BOUND, (m.now, ev)\n"
        "    assert m.stats()['logical_cpus'][0]['instructions'] == 100\n"
        "print('ok')\n"
    )
    package_root = os.path.dirname(os.path.dirname(smtlab.__file__))  # the smtlab this test imported
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_cpu_and_asid_out_of_range_name_the_cpu(cfg_1x2):
    with Machine(cfg_1x2) as m:
        for bad in (-1, 2, 2**64, 2**200):
            with pytest.raises(UsageError, match=r"busy: logical CPU -?\d+.* does not exist \(this machine has CPUs "
                                                 r"0\.\.1\)"):
                m.busy(bad)
        with pytest.raises(ValueError, match=r"attach: asid=-1 is negative"):
            m.attach(0, Source("gen:alu"), asid=-1)
        with pytest.raises(ValueError, match=r"attach: asid=4294967296 is out of range 0\.\.4294967295"):
            m.attach(0, Source("gen:alu"), asid=2**32)
        m.attach(0, Source("gen:alu"), asid=2**32 - 1)  # the largest is fine


def test_other_counts_name_their_argument():
    with pytest.raises(ValueError, match="read_records: max_records=-1 is negative"):
        smtlab.read_records("gen:alu", -1)
    with pytest.raises(ValueError, match="run_traces: max_instructions=-5 is negative"):
        smtlab.run_traces(smtlab.Config(), ["gen:alu"], -5)
    with pytest.raises(ValueError, match="run_traces: warmup=.* is out of range"):
        smtlab.run_traces(smtlab.Config(), ["gen:alu"], 10, 2**64)
    with pytest.raises(ValueError, match="Instr: pc=-1 is negative"):
        Instr(pc=-1)
    with pytest.raises(ValueError, match=r"Instr: mark_id=4294967296 is out of range 0\.\.4294967295"):
        Instr(0, "mark", mark_id=2**32)
    with pytest.raises(ValueError, match="Instr: loads address=-8 is negative"):
        Instr(0, "load", loads=[-8])
    with pytest.raises(ValueError, match=r"Instr: loads size=256 is out of range 0\.\.255"):
        Instr(0, "load", loads=[(64, 256)])
    ins = Instr(0x400000, "int")
    with pytest.raises(ValueError, match="Instr.pc: value=-1 is negative"):
        ins.pc = -1
    ins.pc = 2**64 - 1
    assert ins.pc == 2**64 - 1


# --- retire limit, restart ------------------------------------------------------------------------------------------
def test_retire_limit_at_or_below_what_has_retired_is_a_usage_error(cfg_1x2):
    with busy_machine(cfg_1x2) as m:
        m.run(cycles=20_000)
        done = m.retired(0)
        assert done > 0
        for bad in (0, done - 1, done):  # none of these can ever be reached by retiring more
            with pytest.raises(UsageError, match=rf"set_retire_limit: count={bad} is not above the {done} "
                                                 rf"instructions CPU 0 has retired already"):
                m.set_retire_limit(0, bad)
        with pytest.raises(ValueError, match="set_retire_limit: count=-3 is negative"):
            m.set_retire_limit(0, -3)
        m.set_retire_limit(0, done + 100)  # above it: the limit fires after exactly 100 more
        events: list = []
        for _ in range(100):  # 100 instructions take a few hundred cycles; 10^7 is far beyond
            events = [e for e in m.run(cycles=100_000) if e.kind == EventKind.RETIRE_LIMIT]
            if events:
                break
        assert events[0].cpu == 0 and m.retired(0) == done + 100


def test_restart_trace_on_an_empty_or_running_cpu_names_the_cause(cfg_1x2):
    with Machine(cfg_1x2) as m:
        with pytest.raises(UsageError, match=r"^restart_trace: CPU 1 has no source attached; attach one first$"):
            m.restart_trace(1)
        m.attach(0, Source("gen:alu,count=1000"))
        with pytest.raises(UsageError, match=r"restart_trace: the source 'gen:alu,count=1000' on CPU 0 has not "
                                             r"finished"):
            m.restart_trace(0)
