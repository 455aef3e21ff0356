"""The timer interrupt as kernel code (Kernel(timer_path=...)) and the study's kernels charging the OS costs. Expected
values on paper: HZ=1000 gives one tick per simulated ms; a CPU that runs a task at a tick takes one interrupt, which
runs exactly ``timer_instructions`` of the timer path (the retire limit stops it there), and none of those instructions
are credited to the task."""

from __future__ import annotations

import pytest

from smtlab import load_config
from smtlab.os import Compute, Kernel, Task, make_scheduler
from smtlab.workloads import base

LOOP = "gen:mix,count=0,seed=3"
TIMER = "gen:mix,count=0,seed=11"


def _kernel(**kw):
    cfg = load_config("netburst", {"core.threads": 1})
    return Kernel(cfg, make_scheduler("linux24"), hz=1000, charge_os_costs=True, **kw)


def test_timer_path_runs_its_instructions_at_every_tick():
    k = _kernel(timer_path=TIMER, timer_instructions=1000)
    t = k.spawn(Task("loop", lambda: iter([Compute(10_000_000)]), source=LOOP))
    k.run(until=k.ms_to_cycles(3.5))
    cpu = k.cpus[0]
    assert cpu.timer_interrupts == 3  # ticks at 1, 2 and 3 ms
    assert cpu.kernel_instructions == 3 * 1000
    total = k.machine.retired(0)
    # Every retired instruction is either the task's or the timer path's (no switch path configured).
    assert t.stats.instructions + cpu.kernel_instructions == total


def test_timer_path_needs_a_length():
    with pytest.raises(ValueError, match="timer_instructions"):
        _kernel(timer_path=TIMER, timer_instructions=0)


def test_without_charge_os_costs_no_timer_path_runs():
    cfg = load_config("netburst", {"core.threads": 1})
    k = Kernel(cfg, make_scheduler("linux24"), hz=1000, timer_path=TIMER, timer_instructions=1000)
    k.spawn(Task("loop", lambda: iter([Compute(10_000_000)]), source=LOOP))
    k.run(until=k.ms_to_cycles(2.5))
    assert k.cpus[0].timer_interrupts == 0 and k.cpus[0].kernel_instructions == 0


def test_study_kernels_charge_the_os_costs():
    k = base.make_kernel(True, "linux24")
    assert k.charge_os_costs
    cfg = k.machine.config
    assert k.wake_cycles == int(cfg.get("os.wake_cycles")) > 0
    assert k.flush_tlbs == (not cfg.get("mem.tlb_tagged"))
    # With real kernel paths off (the test environment's default) the timer costs os.timer_cycles per tick.
    assert k.timer_cycles == int(cfg.get("os.timer_cycles")) > 0
    off = base.make_kernel(True, "linux24", charge_os_costs=False)
    assert not off.charge_os_costs and off.wake_cycles == 0 and off.timer_cycles == 0
