"""The timer interrupt charged as an OS cost (``Kernel(charge_os_costs=True)``): at every tick, a CPU running a task
loses it for ``os.timer_cycles`` idle cycles, or runs ``timer_instructions`` of the recorded handler
(``Kernel(timer_path=...)``) in the kernel's address space, so the interrupt contends for the core like user code. In
both cases the task's in-flight work is squashed and refetched, as an interrupt drains the pipeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .._core import Source
from .cpu import KERNEL_ASID
from .steps import require_instructions
from .timer import IRQ_DONE

if TYPE_CHECKING:
    from .._core import Machine
    from .accounting import Accounting
    from .cpu import CpuState
    from .record import TaskRecord
    from .tasks import Task
    from .timer import Timers


class TimerInterrupts:
    """Charges timer interrupts to CPUs. ``resume(cpu)`` continues the interrupted task when one is over."""

    __slots__ = ("machine", "accounting", "timers", "cycles", "instructions", "sources", "record_of", "resume",
                 "clock")

    def __init__(self, machine: "Machine", accounting: "Accounting", timers: "Timers", ncpu: int, cycles: int,
                 path: str | None, instructions: int | None, record_of: "Callable[[Task], TaskRecord]",
                 resume: "Callable[[CpuState], None]", clock: "Callable[[], int]") -> None:
        self.machine = machine
        self.accounting = accounting
        self.timers = timers
        self.cycles = cycles
        self.record_of = record_of
        self.resume = resume
        self.clock = clock
        self.instructions = 0
        self.sources: list[Source] = []
        if path is not None:
            self.sources = [Source(path) for _ in range(ncpu)]  # one per CPU: every CPU takes the tick at once
            require_instructions(self.sources[0], "Kernel: timer_path")  # else restarted for ever
            n = self.sources[0].length if instructions is None else instructions
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"Kernel: timer_instructions must be a positive int (the timer path '{path}' gives "
                                 f"{n!r}; name a count for a source of unknown length)")
            self.instructions = n

    def charge(self, cpu: "CpuState") -> None:
        """One interrupt on a CPU running a task (nothing for any other CPU): the task's source comes off for the
        interrupt."""
        if cpu.state != "busy" or cpu.current is None or cpu.source is None or cpu.irq_token:
            return
        m = self.machine
        self.accounting.bank(cpu, self.record_of(cpu.current))
        m.detach(cpu.id)
        cpu.source = None
        cpu.timer_interrupts += 1
        cpu.irq_token = self.timers.token()
        now = self.clock()
        self.accounting.set_cpu_state(cpu, "switch", now)
        if self.sources and self.instructions:
            # The interrupt as kernel code: the recorded handler runs on the CPU until its retire limit.
            src = self.sources[cpu.id]
            if src.retired and src.ended():
                src.restart()
            m.attach(cpu.id, src, KERNEL_ASID)
            cpu.source = src
            cpu.irq_kpath = True
            cpu.attach_retired = m.retired(cpu.id)
            m.set_retire_limit(cpu.id, cpu.attach_retired + self.instructions)
            return
        self.timers.push(now + self.cycles, IRQ_DONE, (cpu, cpu.irq_token))

    def end_path(self, cpu: "CpuState") -> None:
        """Takes the handler's path off the CPU (its instructions count as kernel work, not the task's)."""
        self.accounting.detach_kernel_code(cpu)
        cpu.irq_kpath = False

    def done(self, cpu: "CpuState", token: int) -> None:
        """The interrupt ``token`` is over (an IRQ_DONE event, or the handler's retire limit)."""
        if cpu.irq_token != token:
            return  # the task left the CPU during the interrupt; whatever runs there now is not interrupted
        cpu.irq_token = 0
        self.accounting.set_cpu_state(cpu, "busy", self.clock())
        self.resume(cpu)
