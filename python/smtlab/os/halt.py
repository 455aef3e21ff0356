"""Halted logical CPUs waking up (HaltWake, composed by the kernel).

With OS costs (``os.wake_cycles``), a halted CPU asked to reschedule leaves HLT before it can run anything. Who then
takes the woken task depends on the kernel the scheduler stands for (``Scheduler.remote_wakeup``):

- handed over (today's Linux: ``try_to_wake_up`` queues the task on the halted target's wake list and sends a
  call-function IPI): the task is committed to that CPU at the wake-up, and the CPU switches it in after its HLT
  exit (switch.py), running the recorded IPI handler first if the kernel has one (wake_ipi.py);
- picked when awake (Linux 2.4.19 and 2.5.32: ``try_to_wake_up`` queues the task on a runqueue, and
  ``reschedule_idle`` (2.4) or ``resched_task`` (2.5) only sets ``need_resched`` on the target's idle task and sends
  the reschedule IPI, whose handler acknowledges the APIC): the CPU picks a task only once it has left HLT and its
  idle loop calls ``schedule()`` (:func:`woken`). Until then the task waits on its runqueue, where any CPU sharing
  that runqueue that reschedules first takes it -- in LMbench's pipe latency, the waker, which blocks in ``read()``
  right after its ``write()`` woke the reader -- and the woken CPU, finding nothing, halts again. ``need_resched``
  stays set while the CPU wakes, as on 2.4's idle task, so placement does not count the CPU as idle meanwhile.
  With a wake path (``Kernel(wake_path=...)``) and a task on another CPU having sent the IPI, the CPU runs that
  path, the IPI's handler, between its HLT exit and the pick, whether or not a task is left for it then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .timer import WOKEN

if TYPE_CHECKING:
    from .._core import Machine
    from .accounting import Accounting
    from .cpu import CpuState
    from .timer import Timers
    from .wake_ipi import WakeIpi

# CpuState.waking: 0 (not waking), then these two phases.
_HLT_EXIT = 1  # leaving HLT (os.wake_cycles)
_HANDLER = 2  # running the IPI's handler (the kernel's wake path)


class HaltWake:
    """A halted CPU's way out of HLT: the exit's latency, the IPI's handler, then the pick or the switch.
    ``switch_in(cpu)`` goes on with a switch the CPU was handed; ``schedule(cpu)`` makes the CPU pick;
    ``log(cpu, what, task, detail)`` is the kernel's decision log."""

    __slots__ = ("machine", "accounting", "timers", "wake_ipi", "switch_in", "schedule", "log", "clock")

    def __init__(self, machine: "Machine", accounting: "Accounting", timers: "Timers", wake_ipi: "WakeIpi | None",
                 switch_in: "Callable[[CpuState], None]", schedule: "Callable[[CpuState], None]",
                 log: "Callable[..., None]", clock: "Callable[[], int]") -> None:
        self.machine = machine
        self.accounting = accounting
        self.timers = timers
        self.wake_ipi = wake_ipi
        self.switch_in = switch_in
        self.schedule = schedule
        self.log = log
        self.clock = clock

    def start(self, cpu: "CpuState") -> bool:
        """For a halted CPU under a kernel whose idle CPUs pick when awake: starts the HLT exit (True;
        :meth:`woken` picks at its end), or returns False if the machine charges no exit here."""
        wake = self.machine.wake_cost(cpu.id)
        if not wake:
            return False
        now = self.clock()
        cpu.waking = _HLT_EXIT
        cpu.wakes += 1
        self.accounting.set_cpu_state(cpu, "switch", now)
        self.log(cpu.id, "hlt_exit", None, "reschedule IPI: leaving HLT to pick a task")
        self.timers.push(now + wake, WOKEN, cpu)
        return True

    def woken(self, cpu: "CpuState") -> None:
        """A WOKEN event: a CPU that left HLT to pick a task picks now (possibly nothing: another CPU took the task
        meanwhile, and it halts again); one that was handed its task goes on with the switch."""
        if not cpu.waking:
            self.switch_in(cpu)
            return
        ipi = self.wake_ipi
        if cpu.waking == _HLT_EXIT and ipi is not None and ipi.start_handler(cpu):
            cpu.waking = _HANDLER  # its end comes back here (the WakeIpi's resume)
            return
        cpu.waking = 0
        cpu.halted = False
        cpu.left_halt = True  # the pick below (or a later one, if nothing is left now) comes out of HLT
        self.accounting.set_cpu_state(cpu, "idle", self.clock())
        self.schedule(cpu)
        if cpu.incoming is None and cpu.current is None:
            if ipi is not None:
                ipi.nothing_picked(cpu)
            self.log(cpu.id, "idle", None, "woken, nothing left to run")
