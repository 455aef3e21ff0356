"""The kernel's accounting: where each cycle and instruction goes. A task's time is split into buckets (running,
runnable, switching, sleeping, io_wait, blocked; TaskStats) by its state changes; a CPU's into busy, switch and idle
(halted) cycles; instructions retired on a CPU are credited to the task whose source ran there (``bank``), kernel
paths' to the CPU's ``kernel_instructions``, and every one of them to the kernel's ``code_instructions`` and, if its
source was a generated stream, ``generated_instructions`` (``credit_code``).

The functions here are :class:`~smtlab.os.kernel.Kernel` methods written in their own file (kernel.py binds them
into the class, ``self`` is the kernel); ``flush_accounting`` is public, the others are called as the kernel's
private methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .cpu import CpuState
    from .kernel import Kernel
    from .record import TaskRecord
    from .tasks import Task, TaskState


def credit_code(self: "Kernel", cpu: CpuState, n: int) -> None:
    """Counts ``n`` instructions retired on ``cpu`` from the source attached there: all of them in
    ``code_instructions``, and in ``generated_instructions`` too if the source is a generated stream (a ``gen:``
    spec: the estimates that stand for work without a recording, e.g. a task's own stream)."""
    if n <= 0:
        return
    self.code_instructions += n
    src = cpu.source
    if src is not None and src.name.startswith("gen:"):
        self.generated_instructions += n


def bank(self: "Kernel", cpu: CpuState, task: Task) -> None:
    """Credits the instructions retired since the last bank to the task (and to its step)."""
    r = self.machine.retired(cpu.id)
    d = r - cpu.attach_retired
    cpu.attach_retired = r
    self._credit_code(cpu, d)
    rec = task._record
    rec.stats.instructions += d
    if rec.remaining is not None:
        rec.remaining -= d


def detach_kernel_code(self: "Kernel", cpu: CpuState) -> None:
    """Takes kernel code (a switch, interrupt or wake-up path) off the CPU; its instructions count as kernel work."""
    m = self.machine
    r = m.retired(cpu.id)
    cpu.kernel_instructions += r - cpu.attach_retired
    self._credit_code(cpu, r - cpu.attach_retired)
    cpu.attach_retired = r
    m.detach(cpu.id)
    cpu.source = None


def set_task_state(self: "Kernel", task: Task, state: TaskState, bucket: str) -> None:
    self._set_record_state(task._record, state, bucket)


def set_record_state(self: "Kernel", rec: TaskRecord, state: TaskState, bucket: str) -> None:
    now = self.now
    if rec.bucket:
        st = rec.stats
        setattr(st, rec.bucket, getattr(st, rec.bucket) + now - rec.since)
    rec.since = now
    rec.bucket = bucket
    rec.state = state


def set_cpu_state(self: "Kernel", cpu: CpuState, state: str) -> None:
    now = self.now
    d = now - cpu.since
    if cpu.state == "busy":
        cpu.busy_cycles += d
    elif cpu.state == "switch":
        cpu.switch_cycles += d
    else:
        cpu.idle_cycles += d
    cpu.since = now
    cpu.state = state


def flush_accounting(self: "Kernel") -> None:
    """Brings every CPU's and task's time accounting (and the tasks' instruction counts) up to the machine's current
    cycle. run() does it when it returns; call it to read consistent counters between runs."""
    self.now = self.machine.now
    for c in self.cpus:
        self._set_cpu_state(c, c.state)
        if c.current is not None and c.source is not None and not c.irq_kpath:
            self._bank(c, c.current)
    for rec in self.records:
        if rec.bucket:
            self._set_record_state(rec, rec.state, rec.bucket)
    # Kept so that the results can be read after the machine is closed.
    self.cpu_snapshot = [self.machine.cpu_stats(c.id) for c in self.cpus]
