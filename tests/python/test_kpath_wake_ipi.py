"""The recorded wake-up IPI (kpath:wake_ipi) in the study's kernels: with real kernel paths on,
``make_kernel`` gives the recorded path to a kernel that wakes a halted CPU through its wake list (idle_core_first,
today's Linux, whose IPI was recorded), and a halted CPU woken from another CPU runs it whole; the 2.4.19 and 2.5.32
kernels (linux24, linux25ht) send the reschedule IPI instead, whose handler only acknowledges the APIC: the halted
CPU runs Linux 6.1's recorded reschedule IPI (kpath:resched_ipi, instance seed 0) whole and the woken task nothing
more. The expected counts come from the recording's manifest (the instance seed 0 picks) and from counting
switch-ins and ticks, not from model output."""

from __future__ import annotations

import json
import os
import pathlib

import pytest

from smtlab import Source
from smtlab.os import Block, Compute, Send, Task
from smtlab.workloads import kpaths
from smtlab.workloads.base import REAL_TIMER_SPEC, make_kernel

ROOT = pathlib.Path(__file__).parents[2]
ROUNDS = 3


def _manifest() -> dict:
    if os.environ.get("SMTLAB_KPATH_CACHE"):
        path = pathlib.Path(os.environ["SMTLAB_KPATH_CACHE"]) / "kpaths.json"
    else:
        found = sorted(ROOT.glob("build*/kpath/kpaths.json"), key=lambda p: p.stat().st_mtime)
        assert found, "no kpath cache in a build tree, though enable_real_paths() opened one"
        path = found[-1]
    return json.loads(path.read_text())


def _splitmix64(x: int) -> int:  # src/tracer/kpath.cpp: instance splitmix64(seed) mod instances
    mask = (1 << 64) - 1
    x = (x + 0x9E3779B97F4A7C15) & mask
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
    return x ^ (x >> 31)


def _seed0_length(path: str) -> int:
    """The length of the instance seed 0 draws of ``path``, from the manifest; it must be kernel code only."""
    inst = _manifest()["paths"][path]["instances"]
    assert inst, f"the recording holds no {path} instance"
    _, length, kernel = inst[_splitmix64(0) % len(inst)]
    assert length == kernel > 0  # kernel mode only
    return length


def test_study_kernels_run_the_recorded_instance_whole(real_paths):
    k = make_kernel(True, "idle_core_first")
    assert k.wake_ipi is not None and k.wake_ipi.spec == kpaths.REAL_WAKE_SPEC
    assert k.wake_ipi.instructions == _seed0_length("wake_ipi")
    k.machine.close()


def _ping(k):
    """One HT core: a waiter on CPU 1 blocks ROUNDS times, a waker on CPU 0 sends after 200 k instructions each time
    (the waiter's 10 k of work are long done, so CPU 1 is halted at every send). Returns the waiter."""
    ch = kpaths.WakeChannel("pipe")
    me: list[Task] = []

    def waiter():
        for _ in range(ROUNDS):
            yield Block(ch)
            yield from kpaths.after_wake(ch, me[0])  # nothing if the recorded handler ran, else the estimate
            yield Compute(10_000)

    def waker():
        for _ in range(ROUNDS):
            yield Compute(200_000)
            kpaths.mark_waker(ch, w)
            yield Send(ch)

    me.append(k.spawn(Task("waiter", waiter, source=kpaths.task_spec(3), affinity=[1])))
    w = k.spawn(Task("waker", waker, source=kpaths.task_spec(5), affinity=[0]))
    k.run()
    assert me[0].done and w.done
    return me[0]


def test_a_halted_cpu_woken_from_its_sibling_runs_the_path(real_paths):
    # CPU 1's kernel instructions are the ROUNDS wake paths, its ROUNDS + 1 switch-ins (spawn and wake-ups) and the
    # ticks it took running the waiter, each whole; after_wake adds nothing to the waiter.
    k = make_kernel(True, "idle_core_first")
    wake, switch = k.wake_ipi.instructions, k.switch_instructions
    timer = Source(REAL_TIMER_SPEC).length
    waiter = _ping(k)
    cpu = k.cpus[1]
    assert k.wake_ipi.runs == [0, ROUNDS]
    assert cpu.wakes == ROUNDS + 1 and cpu.dispatches == ROUNDS + 1
    assert cpu.kernel_instructions == ROUNDS * wake + (ROUNDS + 1) * switch + cpu.timer_interrupts * timer
    assert waiter.stats.instructions == ROUNDS * 10_000
    k.machine.close()


@pytest.mark.parametrize("scheduler", ["linux24", "linux25ht"])
def test_the_reference_kernels_run_the_recorded_reschedule_ipi(real_paths, scheduler):
    # 2.4.19 and 2.5.32 enqueue from the waker and send RESCHEDULE_VECTOR (handler: ack_APIC_irq): CPU 1 runs the
    # recorded reschedule IPI (seed 0's instance, whole) after each HLT exit, then its switch path; its kernel
    # instructions are those, its switch-ins and its ticks, and the waiter runs nothing more (after_wake sees the
    # handler ran). The waiter is pinned to CPU 1, so the waker's CPU cannot take it.
    k = make_kernel(True, scheduler)
    handler = _seed0_length("resched_ipi")
    assert k.wake_ipi is not None and k.wake_ipi.spec == "kpath:resched_ipi,seed=0"
    assert k.wake_ipi.instructions == handler
    assert handler != kpaths.resched_ipi_instructions()  # the estimate's 750: the counts below tell them apart
    switch = k.switch_instructions
    timer = Source(REAL_TIMER_SPEC).length
    waiter = _ping(k)
    cpu = k.cpus[1]
    assert k.wake_ipi.runs == [0, ROUNDS]
    assert cpu.wakes == ROUNDS + 1 and cpu.dispatches == ROUNDS + 1
    assert cpu.kernel_instructions == ROUNDS * handler + (ROUNDS + 1) * switch + cpu.timer_interrupts * timer
    assert waiter.stats.instructions == ROUNDS * 10_000
    k.machine.close()
