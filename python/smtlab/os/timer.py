"""The kernel's timer: its timed events (their kinds and the queue that orders them) and the periodic tick's
state. What each event does when due is the kernel's (kernel.py, ``Kernel._on_timer``)."""

from __future__ import annotations

import heapq
from typing import Any, Iterator

# The kinds of the kernel's timed events.
TICK = 0  # the periodic timer tick
WAKE = 1  # a sleep or I/O is over: the task is runnable again
SWITCH_DONE = 2  # a context switch's idle cycles are over: the incoming task starts
SPAWN = 3  # a task spawned with Kernel.spawn(at=...) starts
WOKEN = 4  # OS costs: a halted CPU is awake (IPI delivery + HLT exit): it picks a task, or its switch path can run
IRQ_DONE = 5  # OS costs: a charged timer interrupt is over


class Timers:
    """Timed events in cycle order (events of one cycle in the order they were pushed), and the periodic tick:
    every ``tick_cycles`` from the kernel's start, one TICK event is due."""

    __slots__ = ("heap", "seq", "tick_cycles", "next_tick")

    def __init__(self, now: int, tick_cycles: int) -> None:
        self.heap: list[tuple[int, int, int, Any]] = []
        self.seq = 0
        self.tick_cycles = tick_cycles
        self.next_tick = now + tick_cycles
        self.push(self.next_tick, TICK, None)

    def push(self, cycle: int, kind: int, obj: Any) -> None:
        """Schedules an event of ``kind`` about ``obj`` at ``cycle``."""
        heapq.heappush(self.heap, (cycle, self.token(), kind, obj))

    def token(self) -> int:
        """A number no earlier call gave (the events' order among equals, a charged interrupt's identity)."""
        self.seq += 1
        return self.seq

    def next_cycle(self) -> int:
        """The cycle of the next event (there is always one: the next tick)."""
        return self.heap[0][0]

    def due(self, now: int) -> Iterator[tuple[int, Any]]:
        """Pops the events due by ``now``, in order, as (kind, obj); events pushed meanwhile for cycles up to ``now``
        come in their turn."""
        heap = self.heap
        while heap[0][0] <= now:
            _, _, kind, obj = heapq.heappop(heap)
            yield kind, obj

    def tick_done(self) -> None:
        """The tick due now was taken: schedules the next one."""
        self.next_tick += self.tick_cycles
        self.push(self.next_tick, TICK, None)
