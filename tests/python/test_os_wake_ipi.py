"""The wake-up IPI to a halted logical CPU run as kernel code (Kernel(wake_path=...), smtlab/os/wake_ipi.py).

The scene, on one HT core (CPU 0 and its sibling CPU 1): a waiter pinned to CPU 1 blocks on a channel ROUNDS times;
a waker pinned to CPU 0 computes GAP instructions, then sends, ROUNDS times. The waiter's own work per round
(WORK instructions) is far shorter than GAP, so at every send it is blocked and CPU 1 halted. On paper:

- every send is a wake-up from another CPU onto a halted one, so CPU 1 runs the wake path ROUNDS times, each
  exactly WAKE instructions (its retire limit), and those count as kernel instructions, not the waiter's;
- the waiter's first switch-in (its spawn) and a wake-up by a timer (a Sleep's end) send no IPI: no path;
- with the path run, ``kpaths.after_wake`` adds no IPI estimate (its handler ran); without it, the estimate
  (trap + ipi instructions) per cross-CPU wake-up, as before.

A generated stream stands in for the recording here (the path's mechanics do not depend on what it holds); the
recorded ``kpath:wake_ipi`` is checked in tests/python/test_kpath_wake_ipi.py.
"""

from __future__ import annotations

import pytest

from smtlab import load_config
from smtlab.os import Block, Compute, Kernel, Send, Sleep, Task, make_scheduler
from smtlab.workloads import base, kpaths

WAKE_SPEC = "gen:mix,count=0,seed=11"
WAKE = 1000
ROUNDS = 3
WORK = 10_000
GAP = 200_000


def _kernel(**kw) -> Kernel:
    cfg = load_config("netburst", {"core.threads": 2})
    return Kernel(cfg, make_scheduler("linux24"), hz=1000, charge_os_costs=True, **kw)


def _scene(k: Kernel, *, estimate_ipi: bool = False):
    ch = kpaths.WakeChannel("pipe")
    me: list[Task] = []

    def waiter():
        for _ in range(ROUNDS):
            yield Block(ch)
            if estimate_ipi:
                yield from kpaths.after_wake(ch, me[0])
            yield Compute(WORK)

    def waker():
        for _ in range(ROUNDS):
            yield Compute(GAP)
            kpaths.mark_waker(ch, w)
            yield Send(ch)

    t = k.spawn(Task("waiter", waiter, source="gen:mix,count=0,seed=3", affinity=[1]))
    me.append(t)
    w = k.spawn(Task("waker", waker, source="gen:mix,count=0,seed=5", affinity=[0]))
    k.run()
    assert t.done and w.done
    return t, w


def test_each_cross_cpu_wake_of_a_halted_cpu_runs_the_path_once():
    k = _kernel(wake_path=WAKE_SPEC, wake_instructions=WAKE)
    t, w = _scene(k)
    assert k.wake_ipi is not None
    assert k.wake_ipi.runs == [0, ROUNDS]
    assert k.cpus[1].kernel_instructions == ROUNDS * WAKE  # no switch path configured: the wake path alone
    assert k.cpus[0].kernel_instructions == 0
    # Every instruction CPU 1 retired is the waiter's or the wake path's.
    assert t.stats.instructions == ROUNDS * WORK
    assert t.stats.instructions + k.cpus[1].kernel_instructions == k.machine.retired(1)
    # The HLT exit stays the hardware estimate: one os.wake_cycles charge per wake-up, and one for the spawn.
    assert k.cpus[1].wakes == ROUNDS + 1


def test_a_cpu_left_idle_by_a_block_pays_the_hlt_exit_at_its_next_switch_in():
    # Without the path: a woken waiter starts exactly os.wake_cycles (HLT exit) + switch_cycles after the wake-up,
    # each time (the CPU went idle when the waiter blocked; it was once charged only at the first switch-in).
    k = _kernel(log=True)
    t, _ = _scene(k)
    wake, switch = int(k.machine.config.get("os.wake_cycles")), k.switch_cycles
    assert wake > 0 and switch > 0
    wakes = [when for when, cpu, what, name, _ in k.decisions if what == "wake" and name == "waiter"]
    pid = k.record(t).pid
    starts = sorted(start for cpu, p, start, end, why in k.segments if p == pid)
    assert len(wakes) == ROUNDS and len(starts) == ROUNDS + 1
    assert [s - w for w, s in zip(wakes, starts[1:])] == [wake + switch] * ROUNDS
    assert k.cpus[1].wakes == ROUNDS + 1


def test_a_whole_recorded_length_then_the_switch_path_as_kernel_code():
    # As the study runs it: the path's whole length (its source ends at the retire limit, both events in one batch),
    # then the switch path as kernel code. CPU 1 switches in ROUNDS + 1 times (its spawn, then each wake-up), each
    # with SWITCH instructions; the ROUNDS wake-ups add the path's 1000 records each.
    switch = 500
    k = _kernel(wake_path="gen:mix,count=1000,seed=11", kernel_path="gen:mix,count=0,seed=97",
                switch_instructions=switch)
    assert k.wake_ipi.instructions == 1000
    t, _ = _scene(k)
    assert k.wake_ipi.runs == [0, ROUNDS]
    assert k.cpus[1].kernel_instructions == ROUNDS * 1000 + (ROUNDS + 1) * switch
    assert t.stats.instructions + k.cpus[1].kernel_instructions == k.machine.retired(1)


def test_a_path_shorter_than_wake_instructions_runs_again_from_its_start():
    # wake_instructions (1000) beyond the path's 300 records: the path's end starts it again, so each wake-up still
    # runs exactly 1000 kernel instructions (its retire limit), and the path's end raises nothing.
    k = _kernel(wake_path="gen:mix,count=300,seed=11", wake_instructions=WAKE)
    t, _ = _scene(k)
    assert k.wake_ipi.runs == [0, ROUNDS]
    assert k.cpus[1].kernel_instructions == ROUNDS * WAKE
    assert t.stats.instructions + k.cpus[1].kernel_instructions == k.machine.retired(1)


def test_the_path_replaces_the_ipi_estimate_of_after_wake(monkeypatch):
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "0")  # the estimate (with real paths, a busy target's recorded IPI)
    with_path = _kernel(wake_path=WAKE_SPEC, wake_instructions=WAKE)
    t, _ = _scene(with_path, estimate_ipi=True)
    assert t.stats.instructions == ROUNDS * WORK
    without = _kernel()
    t, _ = _scene(without, estimate_ipi=True)
    assert without.wake_ipi is None
    ipi = kpaths.TRAP_INSTRUCTIONS + kpaths.PATHS["ipi"].instructions
    assert t.stats.instructions == ROUNDS * (WORK + ipi)


def test_a_wake_by_a_timer_or_on_the_same_cpu_runs_no_path():
    k = _kernel(wake_path=WAKE_SPEC, wake_instructions=WAKE)
    sleeper = k.spawn(Task("sleeper", [Sleep(cycles=50_000), Compute(WORK), Sleep(cycles=50_000), Compute(WORK)],
                           source="gen:mix,count=0,seed=3", affinity=[1]))
    ch = kpaths.WakeChannel("c")
    a = k.spawn(Task("a", [Block(ch), Compute(WORK)], source="gen:mix,count=0,seed=7", affinity=[0]))
    b = k.spawn(Task("b", [Compute(GAP), Send(ch)], source="gen:mix,count=0,seed=9", affinity=[0]))
    k.run()
    assert sleeper.done and a.done and b.done
    assert k.wake_ipi.runs == [0, 0]
    assert k.cpus[0].kernel_instructions == k.cpus[1].kernel_instructions == 0
    assert k.cpus[1].wakes == 3  # the spawn and two timer wake-ups: HLT exits without the IPI path


def test_without_charge_os_costs_no_wake_path_runs():
    cfg = load_config("netburst", {"core.threads": 2})
    k = Kernel(cfg, make_scheduler("linux24"), hz=1000, wake_path=WAKE_SPEC, wake_instructions=WAKE)
    assert k.wake_ipi is None
    _scene(k)
    assert k.cpus[1].kernel_instructions == 0


def test_wake_path_needs_a_length():
    with pytest.raises(ValueError, match="wake_instructions"):
        _kernel(wake_path=WAKE_SPEC, wake_instructions=0)


def test_study_kernels_run_no_wake_path_without_real_paths(monkeypatch):
    # Today's kernel (idle_core_first) has only the recorded path; without it, no wake path.
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "0")
    assert kpaths.wake_path() is None
    k = base.make_kernel(True, "idle_core_first")
    assert k.wake_ipi is None
    k.machine.close()


def test_reference_kernels_run_the_reschedule_ipi_estimate_without_real_paths(monkeypatch):
    # 2.4.19 / 2.5.32 without recordings: the reschedule IPI's handler is the estimate (with them, the recorded
    # kpath:resched_ipi: tests/python/test_kpath_wake_ipi.py).
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "0")
    for sched in ("linux24", "linux25ht"):
        k = base.make_kernel(True, sched)
        assert k.wake_ipi is not None and k.wake_ipi.spec == kpaths.RESCHED_IPI_SPEC
        assert k.wake_ipi.instructions == kpaths.TRAP_INSTRUCTIONS + kpaths.PATHS["ipi"].instructions
        k.machine.close()
    k = base.make_kernel(True, "linux24", charge_os_costs=False)
    assert k.wake_ipi is None
    k.machine.close()
