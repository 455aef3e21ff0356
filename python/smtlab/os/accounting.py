"""The kernel's accounting: where each cycle and instruction goes. A task's time is split into buckets (running,
runnable, switching, sleeping, io_wait, blocked; TaskStats) by its state changes; a CPU's into busy, switch and idle
(halted) cycles; instructions retired on a CPU are credited to the task whose source ran there (:meth:`bank`), kernel
paths' to the CPU's ``kernel_instructions``, and every one of them to ``code_instructions`` and, if its source was a
generated stream, ``generated_instructions`` (:meth:`credit_code`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:
    from .._core import Machine
    from .cpu import CpuState
    from .record import TaskRecord
    from .tasks import Task, TaskState


class Accounting:
    """The counters of one kernel's machine: instructions retired from attached sources (``code_instructions``), and
    those of them from generated streams (``gen:`` specs, the estimates that stand for work without a recording:
    ``generated_instructions``). The per-CPU and per-task counters live in CpuState and TaskRecord.stats; the methods
    here are the only writers of both."""

    __slots__ = ("machine", "code_instructions", "generated_instructions")

    def __init__(self, machine: "Machine") -> None:
        self.machine = machine
        self.code_instructions = 0
        self.generated_instructions = 0

    def credit_code(self, cpu: "CpuState", n: int) -> None:
        """Counts ``n`` instructions retired on ``cpu`` from the source attached there."""
        if n <= 0:
            return
        self.code_instructions += n
        src = cpu.source
        if src is not None and src.name.startswith("gen:"):
            self.generated_instructions += n

    def bank(self, cpu: "CpuState", rec: "TaskRecord") -> None:
        """Credits the instructions retired on ``cpu`` since the last bank to the task of ``rec`` (and its step)."""
        r = self.machine.retired(cpu.id)
        d = r - cpu.attach_retired
        cpu.attach_retired = r
        self.credit(cpu, rec, d)

    def credit(self, cpu: "CpuState", rec: "TaskRecord", n: int) -> None:
        """Credits ``n`` instructions of the source on ``cpu`` to the task of ``rec`` (and its step): retired in
        detail (:meth:`bank`) or executed functionally (sampling.py)."""
        self.credit_code(cpu, n)
        rec.stats.instructions += n
        if rec.remaining is not None:
            rec.remaining -= n

    def detach_kernel_code(self, cpu: "CpuState") -> None:
        """Takes kernel code (a switch, interrupt or wake-up path) off the CPU; its instructions count as kernel
        work."""
        m = self.machine
        r = m.retired(cpu.id)
        cpu.kernel_instructions += r - cpu.attach_retired
        self.credit_code(cpu, r - cpu.attach_retired)
        cpu.attach_retired = r
        m.detach(cpu.id)
        cpu.source = None

    @staticmethod
    def set_record_state(rec: "TaskRecord", state: "TaskState", bucket: str, now: int) -> None:
        """The task's time since its last change goes to its bucket; from ``now`` on it is in ``state``, its time
        going to ``bucket``."""
        if rec.bucket:
            st = rec.stats
            setattr(st, rec.bucket, getattr(st, rec.bucket) + now - rec.since)
        rec.since = now
        rec.bucket = bucket
        rec.state = state

    @staticmethod
    def set_cpu_state(cpu: "CpuState", state: str, now: int) -> None:
        """The CPU's time since its last change goes to its state's counter; from ``now`` on it is ``state``
        (busy, switch or idle)."""
        d = now - cpu.since
        if cpu.state == "busy":
            cpu.busy_cycles += d
        elif cpu.state == "switch":
            cpu.switch_cycles += d
        else:
            cpu.idle_cycles += d
        cpu.since = now
        cpu.state = state

    def flush(self, now: int, cpus: Iterable["CpuState"], records: Iterable["TaskRecord"],
              record_of: "Callable[[Task], TaskRecord]") -> None:
        """Brings every CPU's and task's time accounting, and the instruction counts of the tasks on CPUs, up to
        ``now``. ``record_of(task)`` gives a running task's record."""
        for c in cpus:
            self.set_cpu_state(c, c.state, now)
            if c.current is not None and c.source is not None and not c.irq_kpath:
                self.bank(c, record_of(c.current))
        for rec in records:
            if rec.bucket:
                self.set_record_state(rec, rec.state, rec.bucket, now)
