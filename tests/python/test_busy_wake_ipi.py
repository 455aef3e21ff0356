"""The IPI of a cross-CPU wake-up: the recorded reschedule IPI, drawn by the woken task on a busy CPU, the halted
CPU's instance on a halted one.

With real kernel paths on, ``kpaths.after_wake`` gives a task woken from another logical CPU the path of the IPI that
CPU took. On paper, on one HT core (CPU 0 and CPU 1) under linux24 with OS costs:

- CPU 1 runs a spinner when a waker on CPU 0 wakes a waiter pinned to CPU 1: the IPI went into a running task, so
  the waiter's first step after its wake-up is its own instance of ``kpath:resched_ipi`` (seed and kernel stack =
  its pid), and the waiter retires exactly that instance's length more than its own work;
- CPU 1 is halted and the kernel runs its wake path for the wake-up (2.4's reschedule IPI on a halted CPU): nothing
  more (the handler ran as kernel code, tests/python/test_os_wake_ipi.py);
- a task spawned onto the halted CPU 1 (a forked child's first switch-in: the kernel runs no wake path for it)
  gets the instance a halted 2.4/2.5 CPU's kernel runs (``kpath:resched_ipi,seed=0``: the handler runs on the idle
  task, not on the child's stack), not its own draw; without recordings, the estimate (trap + the "ipi" path).
"""

from __future__ import annotations

from smtlab import Source
from smtlab.os import Block, Compute, Send, Task
from smtlab.workloads import kpaths
from smtlab.workloads.base import make_kernel

WORK = 10_000
GAP = 200_000


def _wake_scene(spinner: bool):
    k = make_kernel(True, "linux24")
    ch = kpaths.WakeChannel("pipe")
    got: list[list[Compute]] = []
    me: list[Task] = []

    def waiter():
        yield Block(ch)
        steps = kpaths.after_wake(ch, me[0])
        got.append(steps)
        yield from steps
        yield Compute(WORK)

    def waker():
        yield Compute(GAP)
        kpaths.mark_waker(ch, w)
        yield Send(ch)

    t = k.spawn(Task("waiter", waiter, source="gen:mix,count=0,seed=3", affinity=[1]))
    me.append(t)
    if spinner:
        k.spawn(Task("spinner", [Compute(4 * GAP)], source="gen:mix,count=0,seed=7", affinity=[1]))
    w = k.spawn(Task("waker", waker, source="gen:mix,count=0,seed=5", affinity=[0]))
    k.run()
    assert t.done and w.done
    (steps,) = got
    instructions = t.stats.instructions
    k.machine.close()
    return t, steps, instructions


def test_a_wake_into_a_running_task_runs_the_recorded_reschedule_ipi(real_paths):
    t, steps, instructions = _wake_scene(spinner=True)
    (ipi,) = steps
    assert ipi.source == f"kpath:resched_ipi,seed={t.pid},stack={t.pid}"
    length = Source(ipi.source).length
    assert length > 0
    # The waiter's instructions: its work, the recorded instance whole (the path is a step of its own), nothing else.
    assert instructions == WORK + length


def test_a_wake_onto_a_halted_cpu_whose_kernel_ran_the_path_adds_nothing(real_paths):
    t, steps, instructions = _wake_scene(spinner=False)
    assert steps == []
    assert instructions == WORK


def _spawn_scene():
    k = make_kernel(True, "linux24")
    ch = kpaths.WakeChannel("start")
    ch.waker_cpu = 0  # the parent's CPU: the child is placed on the other one (lmbench's fork rows)
    got: list[list[Compute]] = []
    me: list[Task] = []

    def child():
        steps = kpaths.after_wake(ch, me[0])
        got.append(steps)
        yield from steps

    me.append(k.spawn(Task("child", child, source="gen:mix,count=0,seed=3", affinity=[1])))
    k.run()
    k.machine.close()
    ((step,),) = got
    return step


def test_a_spawn_onto_a_halted_cpu_gets_the_halted_cpus_recorded_ipi(real_paths):
    step = _spawn_scene()
    assert step.source == "kpath:resched_ipi,seed=0" and step.instructions is None


def test_a_spawn_onto_a_halted_cpu_gets_the_estimate_without_recordings(estimates):
    step = _spawn_scene()
    assert step.source is None and step.instructions == kpaths.TRAP_INSTRUCTIONS + kpaths.PATHS["ipi"].instructions
