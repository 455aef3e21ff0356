"""Who takes a task woken onto a halted logical CPU (smtlab/os/halt.py), with OS costs on (``os.wake_cycles``).

The scene: one core, two logical CPUs, no pinning. A reader blocks on a channel and its CPU halts; a writer on the
other CPU computes, wakes the reader (``Send``) and then either sleeps at once (as LMbench's pipe writer blocks in
read() right after its write()) or keeps computing. The scheduler's placement sends the reader back to its own,
halted, CPU.

On paper:
- Linux 2.4.19 / 2.5.32 (linux24: one runqueue; linux25ht: one runqueue per package) only set need_resched on the
  halted CPU's idle task and send the reschedule IPI; the task stays on the runqueue. A writer that sleeps at once
  reschedules its own CPU in the same event and takes the reader there (after the switch cost), long before the
  halted CPU has left HLT (``os.wake_cycles`` later), which then finds nothing and halts again: one wake-up more
  than its dispatches.
- Today's Linux (idle_core_first) hands the task to the halted CPU (its wake list): the reader runs there.
- A writer that keeps computing leaves the reader to the woken CPU under every scheduler: the reader starts exactly
  wake_cycles + switch cost after the wake-up.
"""

from __future__ import annotations

import pytest

import smtlab
from smtlab.os import Block, Channel, Compute, Kernel, Send, Sleep, Task, make_scheduler

SWITCH = 500
WAKE = 2400  # os.wake_cycles (netburst's value; the library default is 0, no HLT exit)
WORK = 200_000  # the writer's instructions before the wake-up: the reader has long blocked and its CPU halted


@pytest.fixture
def cfg():
    """One core, two logical CPUs (siblings), with an HLT exit to pay."""
    return smtlab.load_config(None, {"system.cores": 1, "core.threads": 2, "os.wake_cycles": WAKE})


def _run(cfg, scheduler: str, *, writer_sleeps: bool):
    k = Kernel(smtlab.Machine(cfg), make_scheduler(scheduler), switch_cycles=SWITCH, charge_os_costs=True, log=True)
    ch = Channel("pipe")
    reader = k.spawn(Task("reader", [Block(ch), Compute(1000)], source="gen:alu,count=0,seed=3"))
    after = [Sleep(cycles=3_000_000), Compute(1000)] if writer_sleeps else [Compute(WORK)]
    writer = k.spawn(Task("writer", [Compute(WORK), Send(ch), *after], source="gen:alu,count=0,seed=5"))
    k.run()
    assert reader.done and writer.done
    segs = {name: sorted((s, e, cpu) for cpu, pid, s, e, _ in k.segments if pid == k.record(t).pid)
            for name, t in (("reader", reader), ("writer", writer))}
    wake_at = next(t for t, cpu, what, name, detail in k.decisions if what == "wake" and name == "reader")
    return k, segs, wake_at


@pytest.mark.parametrize("scheduler", ["linux24", "linux25ht"])
def test_reference_kernels_let_the_waker_take_the_woken_task(cfg, scheduler):
    k, segs, wake_at = _run(cfg, scheduler, writer_sleeps=True)
    assert WAKE > SWITCH
    (_, _, reader_cpu0), (r_start, _, reader_cpu1) = segs["reader"]
    writer_cpu = segs["writer"][0][2]
    assert reader_cpu0 != writer_cpu  # the reader first ran, and blocked, on the other CPU
    assert reader_cpu1 == writer_cpu  # ... and the writer's CPU took it after the wake-up
    assert r_start == wake_at + SWITCH  # the writer slept in the same event: only the switch cost
    other = k.cpus[reader_cpu0]
    assert other.wakes == other.dispatches + 1  # it left HLT for the reader, found nothing and halted again


def test_today_s_kernel_hands_the_task_to_the_halted_cpu(cfg):
    k, segs, wake_at = _run(cfg, "idle_core_first", writer_sleeps=True)
    (_, _, first_cpu), (r_start, _, again_cpu) = segs["reader"]
    assert again_cpu == first_cpu != segs["writer"][0][2]
    assert r_start == wake_at + WAKE + SWITCH
    assert k.cpus[first_cpu].wakes == k.cpus[first_cpu].dispatches


@pytest.mark.parametrize("scheduler", ["linux24", "linux25ht", "idle_core_first"])
def test_a_busy_waker_leaves_the_task_to_the_woken_cpu(cfg, scheduler):
    k, segs, wake_at = _run(cfg, scheduler, writer_sleeps=False)
    (_, _, first_cpu), (r_start, _, again_cpu) = segs["reader"]
    assert again_cpu == first_cpu != segs["writer"][0][2]
    assert r_start == wake_at + WAKE + SWITCH


def test_without_os_costs_the_halted_cpu_picks_at_once(cfg):
    # No HLT exit to wait for: the kick picks in the same event under every scheduler, so the reader goes back to
    # its own CPU even though the writer sleeps right after.
    k = Kernel(smtlab.Machine(cfg), make_scheduler("linux24"), switch_cycles=SWITCH, log=True)
    assert not k.pick_when_awake
    ch = Channel("pipe")
    reader = k.spawn(Task("reader", [Block(ch), Compute(1000)], source="gen:alu,count=0,seed=3"))
    writer = k.spawn(Task("writer", [Compute(WORK), Send(ch), Sleep(cycles=3_000_000), Compute(1000)],
                          source="gen:alu,count=0,seed=5"))
    k.run()
    cpus = [cpu for cpu, pid, *_ in k.segments if pid == k.record(reader).pid]
    assert len(cpus) == 2 and cpus[0] == cpus[1]
    assert writer.done
