"""The kernel's view of one logical CPU (CpuState): topology, what runs on it, and its time accounting. Its own
module so that the kernel, the schedulers and the results read one type without importing each other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._core import Source
    from .tasks import Task

# The address space of kernel-mode work run on a CPU (the context-switch path, the timer interrupt's path): kernel
# addresses are one region shared by every process, as on real hardware.
KERNEL_ASID = 0


class CpuState:
    """The kernel's view of one logical CPU."""

    __slots__ = (
        "id", "core", "thread", "siblings", "current", "incoming", "need_resched", "slice_start", "source",
        "attach_retired", "source_ended", "kpath", "kpath_active", "state", "since", "busy_cycles",
        "switch_cycles", "idle_cycles", "kernel_instructions", "dispatches", "segment_start", "loop_base",
        # Topology and OS costs (TLB flushes, wake-ups, timer interrupts, halting).
        "package", "loaded_asid", "tlb_flushes", "wakes", "timer_interrupts", "irq_token", "halted", "waking",
        "left_halt", "from_halt",
        # The timer interrupt run as kernel code (Kernel(timer_path=...)).
        "irq_kpath",
    )

    def __init__(self, info: dict[str, Any]) -> None:
        self.id: int = info["id"]
        self.core: int = info["core"]
        self.thread: int = info["thread"]
        self.siblings: list[int] = list(info["siblings"])
        self.current: Task | None = None  # the task on the CPU
        self.incoming: Task | None = None  # the task being switched in
        self.need_resched = False
        self.slice_start = 0
        self.source: Source | None = None  # what the kernel attached (task source or kernel path)
        self.attach_retired = 0  # the machine's retired count when the current accounting period began
        self.source_ended = False
        self.kpath: Source | None = None
        self.kpath_active = False
        self.state = "idle"  # idle | switch | busy
        self.since = 0
        self.busy_cycles = 0
        self.switch_cycles = 0
        self.idle_cycles = 0
        self.kernel_instructions = 0
        self.dispatches = 0
        self.segment_start = 0
        self.loop_base = -1  # retired count at the last restart of a looping source
        self.package: int = info["package"]  # physical package (its own LLC), from the machine
        self.loaded_asid: int | None = None  # the address space whose page tables the CPU holds (CR3)
        self.tlb_flushes = 0
        self.wakes = 0  # wake-ups from HLT charged with os.wake_cycles
        self.timer_interrupts = 0  # ticks charged with os.timer_cycles
        self.irq_token = 0  # > 0 while a charged timer interrupt holds the CPU (its end timer carries the value)
        self.halted = True  # in HLT: nothing to run since boot or since the scheduler last found nothing
        self.waking = 0  # > 0 while leaving HLT to pick a task once awake (halt.py's phases)
        self.left_halt = False  # left HLT to pick (halt.py) and has not switched a task in since
        self.from_halt = False  # the task switching in or running came onto the CPU out of HLT, not from a task
        self.irq_kpath = False  # True while that path runs on the CPU in place of the interrupted task

    def __repr__(self) -> str:
        cur = self.current.name if self.current else None
        return f"<CpuState {self.id} core={self.core} {self.state} current={cur!r}>"
