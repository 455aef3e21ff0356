"""The halted CPU's side of a wake-up from another CPU, run as kernel code (``Kernel(wake_path=...)``).

What it stands for (Linux 6.1, recorded as ``kpath:wake_ipi``, docs/tracing.md): a task on CPU A wakes a task whose
CPU B is idle. try_to_wake_up on A finds no task running on B (ttwu_queue_cond: nr_running == 0), queues the task on
B's wake list and sends CALL_FUNCTION_SINGLE_VECTOR (B's idle loop halts with HLT and does not poll, so the IPI is
needed). B leaves HLT -- the hardware's latency, the kernel's ``os.wake_cycles`` estimate (the preset names its
source) -- then runs the vector's handler (sched_ttwu_pending: the enqueue and the wake-up preemption check) and the
idle loop's exit up to __schedule, which the recording holds; the switch to the task is the kernel's switch path.

The kernel calls :meth:`WakeIpi.woken` at a wake-up by a task (the waker's CPU and the target the scheduler chose),
:meth:`WakeIpi.start` when a task switches in (after any HLT exit latency), and :meth:`WakeIpi.on_event` for the
events of a CPU that runs the path. A wake-up by a timer (a sleep's end) or a fork placed on an idle CPU sends no
call-function IPI in Linux and runs no path here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .._core import EventKind, Source
from .steps import require_instructions

if TYPE_CHECKING:
    from .._core import Machine
    from .accounting import Accounting
    from .cpu import CpuState
    from .tasks import Task

_RETIRE_LIMIT = EventKind.RETIRE_LIMIT
_SOURCE_ENDED = EventKind.SOURCE_ENDED


class WakeIpi:
    """Which halted CPUs have a wake-up IPI on the way, and the recorded handler each runs on receiving it."""

    __slots__ = ("machine", "cpus", "accounting", "spec", "instructions", "sources", "asid", "pending", "active",
                 "ran_task", "ran_dispatch", "runs", "resume", "handled")

    def __init__(self, machine: Machine, cpus: list[CpuState], accounting: Accounting, spec: str,
                 instructions: int | None, asid: int, resume: Callable[[CpuState], None]) -> None:
        self.machine = machine
        self.cpus = cpus
        self.accounting = accounting
        # Continues the switch after the path, from the kernel's timer queue at the same cycle: the machine may report
        # the path's source ended in the same batch of events, which must not reach the switch path attached next.
        self.resume = resume
        self.spec = spec
        ncpu = len(cpus)
        self.sources = [Source(spec) for _ in range(ncpu)]  # one per CPU: two CPUs may take an IPI at once
        require_instructions(self.sources[0], "Kernel: wake_path")  # else restarted for ever, retiring nothing
        n = self.sources[0].length if instructions is None else instructions
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"Kernel: wake_instructions must be a positive int (the wake path '{spec}' gives {n!r}; "
                             "name a count for a source of unknown length)")
        self.instructions = n
        self.asid = asid
        self.pending: list[Task | None] = [None] * ncpu  # the task an IPI to the (halted) CPU was sent for
        self.active = [False] * ncpu  # the CPU runs the path now
        self.ran_task: list[Task | None] = [None] * ncpu  # the task switched in after the CPU last ran the path
        self.ran_dispatch = [-1] * ncpu  # and the CPU's dispatch count at that switch-in
        self.runs = [0] * ncpu  # paths run per CPU
        self.handled = [False] * ncpu  # ran as the handler before the pick (start_handler); the pick is not known yet

    def woken(self, waker_cpu: int | None, target: int | None, task: Task) -> None:
        """A task on ``waker_cpu`` woke ``task`` and the scheduler asked ``target`` to reschedule: a halted target
        on another CPU is sent the IPI."""
        if waker_cpu is None or target is None or target == waker_cpu:
            return
        if self.cpus[target].halted:
            self.pending[target] = task

    def start_handler(self, cpu: CpuState) -> bool:
        """For a CPU that picks its task once awake (halt.py): at the end of its HLT exit, if an IPI was sent to it,
        attach the path (True: its end calls ``resume``, and the CPU then picks). Whatever task it then switches in
        counts as the one the path ran for (:meth:`start`); if it picks nothing, :meth:`nothing_picked`."""
        if self.pending[cpu.id] is None:
            return False
        self.pending[cpu.id] = None
        self._attach(cpu)
        self.handled[cpu.id] = True
        return True

    def nothing_picked(self, cpu: CpuState) -> None:
        self.handled[cpu.id] = False

    def _attach(self, cpu: CpuState) -> None:
        m = self.machine
        src = self.sources[cpu.id]
        if src.retired and src.ended():
            src.restart()
        m.attach(cpu.id, src, self.asid)
        cpu.source = src
        cpu.attach_retired = m.retired(cpu.id)
        m.set_retire_limit(cpu.id, cpu.attach_retired + self.instructions)
        self.active[cpu.id] = True
        self.runs[cpu.id] += 1

    def start(self, cpu: CpuState) -> bool:
        """At a switch-in: if an IPI was sent to this CPU for the task switching in, attach the path (True: the
        kernel accounts the CPU as switching, and the path's end continues the switch). Any pending IPI of the CPU
        is consumed: it is received before this switch-in."""
        if self.handled[cpu.id]:  # it ran before this pick (start_handler): this is the task it ran for
            self.handled[cpu.id] = False
            self.ran_task[cpu.id] = cpu.incoming
            self.ran_dispatch[cpu.id] = cpu.dispatches + 1
            return False
        task, self.pending[cpu.id] = self.pending[cpu.id], None
        if task is None or task is not cpu.incoming:
            return False
        self._attach(cpu)
        self.ran_task[cpu.id] = task
        self.ran_dispatch[cpu.id] = cpu.dispatches + 1  # the dispatch this switch-in ends with
        return True

    def on_event(self, cpu: CpuState, kind: Any) -> None:
        """An event of a CPU that runs the path: at its retire limit the path comes off (its instructions are kernel
        work) and the switch continues (``resume``)."""
        if kind == _RETIRE_LIMIT:
            self.accounting.detach_kernel_code(cpu)
            self.active[cpu.id] = False
            self.resume(cpu)
        elif kind == _SOURCE_ENDED:
            self.machine.restart_trace(cpu.id)  # a path shorter than wake_instructions runs again

    def ran_for(self, task: Task) -> bool:
        """True while ``task`` runs in the dispatch that the path preceded (the handler of its wake-up ran: a
        workload's own estimate of the IPI must not count it again)."""
        cpu = task.cpu
        if cpu is None:
            return False
        c = self.cpus[cpu]
        return self.ran_task[cpu] is task and self.ran_dispatch[cpu] == c.dispatches and c.current is task
