"""The kernel's timer: its timed events (their kinds, the queue, what each does when due), the periodic tick (time
slices, the scheduler's ticks, the deadlock check) and the timer interrupt charged as an OS cost
(``Kernel(charge_os_costs=True)``: ``os.timer_cycles`` idle cycles, or ``timer_instructions`` of ``timer_path`` run as
kernel code).

The functions here are :class:`~smtlab.os.kernel.Kernel` methods written in their own file (kernel.py binds them
into the class, ``self`` is the kernel); they are not an API of their own. Call them as the kernel's methods.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

from .._core import DeadlockError
from .cpu import KERNEL_ASID
from .tasks import TaskState

if TYPE_CHECKING:
    from .cpu import CpuState
    from .kernel import Kernel

# The kinds of the kernel's timed events (Kernel._push_timer; its run loop pops them in cycle order).
TICK = 0  # the periodic timer tick
WAKE = 1  # a sleep or I/O is over: the task is runnable again
SWITCH_DONE = 2  # a context switch's idle cycles are over: the incoming task starts
SPAWN = 3  # a task spawned with Kernel.spawn(at=...) starts
WOKEN = 4  # OS costs: a halted CPU is awake (IPI delivery + HLT exit): it picks a task, or its switch path can run
IRQ_DONE = 5  # OS costs: a charged timer interrupt is over


def push_timer(self: "Kernel", cycle: int, kind: int, obj: Any) -> None:
    self._timer_seq += 1
    heapq.heappush(self._timers, (cycle, self._timer_seq, kind, obj))


def on_timer(self: "Kernel", kind: int, obj: Any) -> None:
    if kind == TICK:
        self._tick()
    elif kind == WAKE:
        self._wake(obj)
    elif kind == SWITCH_DONE:
        self._dispatch(obj)
    elif kind == SPAWN:
        self._pending_spawns -= 1
        self._start_task(obj, None)
    elif kind == WOKEN:
        self._woken(obj)
    elif kind == IRQ_DONE:
        self._irq_done(*obj)


def tick(self: "Kernel") -> None:
    self._next_tick += self.tick_cycles
    self._push_timer(self._next_tick, TICK, None)
    now = self.now
    sched = self.scheduler
    order = self._tick_order
    self.rng.shuffle(order)
    for i in order:
        c = self.cpus[i]
        if c.current is not None and now - c.slice_start >= self.time_slice and sched.has_waiting(i):
            self.kick(i)
        sched.tick(i)
    if self.timer_cycles:
        for c in self.cpus:
            self._timer_interrupt(c)
    self._check_deadlock(now)


def timer_interrupt(self: "Kernel", cpu: CpuState) -> None:
    """Charges one timer interrupt to a CPU running a task: the task's source comes off (in-flight work
    squashed, as an interrupt drains the pipeline) for ``timer_cycles``, then goes on again."""
    if cpu.state != "busy" or cpu.current is None or cpu.source is None or cpu.irq_token:
        return
    m = self.machine
    self._bank(cpu, cpu.current)
    m.detach(cpu.id)
    cpu.source = None
    cpu.timer_interrupts += 1
    self._timer_seq += 1
    cpu.irq_token = self._timer_seq
    self._set_cpu_state(cpu, "switch")
    src = cpu.timer_src
    if src is not None and self.timer_instructions:
        # The interrupt as kernel code: the recorded handler runs on the CPU until its retire limit.
        if src.retired and src.ended():
            src.restart()
        m.attach(cpu.id, src, KERNEL_ASID)
        cpu.source = src
        cpu.irq_kpath = True
        cpu.attach_retired = m.retired(cpu.id)
        m.set_retire_limit(cpu.id, cpu.attach_retired + self.timer_instructions)
        return
    self._push_timer(self.now + self.timer_cycles, IRQ_DONE, (cpu, cpu.irq_token))


def end_irq_kpath(self: "Kernel", cpu: CpuState) -> None:
    """Takes the timer path off the CPU (its instructions count as kernel work, not the task's)."""
    self._detach_kernel_code(cpu)
    cpu.irq_kpath = False


def irq_done(self: "Kernel", cpu: CpuState, token: int) -> None:
    if cpu.irq_token != token:
        return  # the task left the CPU during the interrupt; whatever runs there now is not interrupted
    cpu.irq_token = 0
    task = cpu.current
    self._set_cpu_state(cpu, "busy")
    if task is not None and task._record.step is not None:
        self._start_compute(cpu, task)
    if cpu.need_resched and cpu.id not in self._resched:
        self._resched.append(cpu.id)  # a reschedule was asked for during the interrupt


def check_deadlock(self: "Kernel", now: int) -> None:
    """At a tick: raise DeadlockError when nobody is left to wake the blocked non-daemon tasks."""
    if not self._live or self._pending_spawns or self._blocked_live < self._live:
        self._stalled_since = None
        return
    waiting = ", ".join(f"{r.task.name!r}" for r in self.records
                        if r.state is TaskState.BLOCKED and not r.task.daemon)
    if self._blocked == self._live_all:
        raise DeadlockError(f"cycle {now}: every live task waits on a channel nobody will send to: {waiting}")
    if self._stalled_since is None:
        self._stalled_since = now
    elif now - self._stalled_since >= self.stall_cycles:
        busy = ", ".join(f"{r.task.name!r}" for r in self.records if r.task.daemon and
                         r.state in (TaskState.RUNNING, TaskState.RUNNABLE, TaskState.SLEEPING))
        raise DeadlockError(
            f"cycle {now}: every task that is not a daemon has waited on a channel for "
            f"{(now - self._stalled_since) / self.cycles_per_us / 1000.0:.1f} ms ({waiting}) while only daemons "
            f"ran ({busy}); nothing woke them. If a daemon really computes that long before it sends, raise "
            "Kernel(stall_ms=...)")
