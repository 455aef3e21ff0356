"""A context switch's cost and its end (ContextSwitch, composed by the kernel).

Switching a task in costs either ``switch_cycles`` cycles during which the CPU runs nothing (the default: the CPU is
idle for the cost, so its sibling briefly gets recombined resources), or, when the kernel has a ``kernel_path`` (a
trace spec such as a recorded ``kpath:switch``), ``switch_instructions`` of that trace on the CPU in the kernel's
address space, so kernel code contends for the core like user code. A CPU that was halted first leaves HLT
(``os.wake_cycles``, with OS costs) and may run the wake-up IPI's handler (wake_ipi.py). When the switch is over the
task is dispatched: its accounting starts, a migration is counted, and, without tagged TLBs, the previous address
space's TLB entries are flushed (CR3 is loaded)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .._core import Source
from .cpu import KERNEL_ASID
from .steps import require_instructions
from .tasks import TaskState
from .timer import SWITCH_DONE, WOKEN

if TYPE_CHECKING:
    from .._core import Machine
    from .accounting import Accounting
    from .cpu import CpuState
    from .record import TaskRecord
    from .tasks import Task
    from .timer import Timers
    from .wake_ipi import WakeIpi


class ContextSwitch:
    """Switches tasks in on CPUs. ``dispatched(cpu, task)`` is called when a task is on its CPU (the kernel then
    runs its steps); ``log(cpu, what, task, detail)`` is the kernel's decision log."""

    __slots__ = ("machine", "cpus", "accounting", "timers", "wake_ipi", "switch_cycles", "switch_instructions",
                 "wake_cycles", "flush_tlbs", "record_of", "dispatched", "log", "clock")

    def __init__(self, machine: "Machine", cpus: "list[CpuState]", accounting: "Accounting", timers: "Timers",
                 wake_ipi: "WakeIpi | None", *, switch_cycles: int, kernel_path: str | None,
                 switch_instructions: int, wake_cycles: int, flush_tlbs: bool,
                 record_of: "Callable[[Task], TaskRecord]", dispatched: "Callable[[CpuState, Task], None]",
                 log: "Callable[..., None]", clock: "Callable[[], int]") -> None:
        self.machine = machine
        self.cpus = cpus
        self.accounting = accounting
        self.timers = timers
        self.wake_ipi = wake_ipi
        self.switch_cycles = switch_cycles
        self.switch_instructions = switch_instructions if kernel_path else 0
        self.wake_cycles = wake_cycles
        self.flush_tlbs = flush_tlbs
        self.record_of = record_of
        self.dispatched = dispatched
        self.log = log
        self.clock = clock
        if kernel_path:
            for c in cpus:
                c.kpath = Source(kernel_path)
            require_instructions(cpus[0].kpath, "Kernel: kernel_path")  # else restarted for ever

    def start(self, cpu: "CpuState", task: "Task") -> None:
        """Starts switching ``task`` in on ``cpu`` (the CPU runs nothing else)."""
        now = self.clock()
        cpu.incoming = task
        rec = self.record_of(task)
        rec.cpu = cpu.id
        self.accounting.set_record_state(rec, TaskState.RUNNING, "switching", now)
        self.log(cpu.id, "switch_in", task)
        halted, cpu.halted = cpu.halted, False
        cpu.from_halt, cpu.left_halt = halted or cpu.left_halt, False
        if self.wake_cycles and halted:
            # The CPU was halted: the IPI (or its own timer) wakes it, and HLT's exit takes its time before the
            # switch path can run.
            wake = self.machine.wake_cost(cpu.id)
            if wake:
                cpu.wakes += 1
                self.accounting.set_cpu_state(cpu, "switch", now)
                self.timers.push(now + wake, WOKEN, cpu)
                return
        self.switch_in(cpu)

    def switch_in(self, cpu: "CpuState") -> None:
        """The switch path proper (after any wake-up): kernel code, idle cycles, or nothing."""
        now = self.clock()
        if self.wake_ipi is not None and self.wake_ipi.start(cpu):
            self.accounting.set_cpu_state(cpu, "switch", now)
            return  # the wake-up IPI's handler runs first; its end calls switch_in again (a WOKEN event)
        if self.switch_instructions and cpu.kpath is not None:
            m = self.machine
            cpu.kpath_active = True
            self.accounting.set_cpu_state(cpu, "switch", now)
            m.attach(cpu.id, cpu.kpath, KERNEL_ASID)
            cpu.source = cpu.kpath
            cpu.attach_retired = m.retired(cpu.id)
            m.set_retire_limit(cpu.id, cpu.attach_retired + self.switch_instructions)
        elif self.switch_cycles:
            self.accounting.set_cpu_state(cpu, "switch", now)
            self.timers.push(now + self.switch_cycles, SWITCH_DONE, cpu)
        else:
            self.dispatch(cpu)

    def dispatch(self, cpu: "CpuState") -> None:
        """The switch is over: the incoming task starts (or resumes) on the CPU."""
        now = self.clock()
        if cpu.kpath_active:
            self.accounting.detach_kernel_code(cpu)
            cpu.kpath_active = False
        task = cpu.incoming
        assert task is not None
        cpu.incoming = None
        cpu.current = task
        cpu.dispatches += 1
        cpu.slice_start = now
        cpu.segment_start = now
        rec = self.record_of(task)
        st = rec.stats
        st.dispatches += 1
        if st.started is None:
            st.started = now
        if rec.last_cpu is not None and rec.last_cpu != cpu.id:
            st.migrations += 1
            if self.cpus[rec.last_cpu].core != cpu.core:
                st.core_migrations += 1
        rec.last_cpu = cpu.id
        if self.flush_tlbs and cpu.loaded_asid != rec.asid:
            # CR3 now points at the task's page tables: without tagged TLBs the previous space's entries go.
            if cpu.loaded_asid is not None:
                self.machine.flush_tlb(cpu.id, cpu.loaded_asid)
                cpu.tlb_flushes += 1
            cpu.loaded_asid = rec.asid
        self.accounting.set_record_state(rec, TaskState.RUNNING, "running", now)
        self.accounting.set_cpu_state(cpu, "busy", now)
        self.dispatched(cpu, task)
