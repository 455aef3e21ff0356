"""Which tasks are alive, and whether any can still make progress: the kernel's run ends when no task that is not a
daemon is left (or pending), and a run in which every live task waits on a channel that nobody will send to, or in
which only daemons have run for ``stall_ms`` while every other task waited, is a deadlock (DeadlockError) rather than
a hang."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from .._core import DeadlockError
from .tasks import TaskState

if TYPE_CHECKING:
    from .record import TaskRecord


class Liveness:
    """Counts of live, blocked and pending tasks, and the deadlock check the kernel runs at every tick."""

    __slots__ = ("live", "live_all", "blocked", "blocked_live", "pending_spawns", "stall_cycles", "stalled_since",
                 "cycles_per_ms")

    def __init__(self, stall_cycles: int, cycles_per_ms: float) -> None:
        self.live = 0  # spawned, not exited, not daemons: the run ends when none is left
        self.live_all = 0  # spawned, not exited, daemons too
        self.blocked = 0  # live tasks (daemons too) waiting on a channel
        self.blocked_live = 0  # live non-daemon tasks waiting on a channel
        self.pending_spawns = 0  # spawned for a later cycle (Kernel.spawn(at=...)), not started yet
        self.stall_cycles = stall_cycles
        self.stalled_since: int | None = None  # since when every live non-daemon task has been blocked
        self.cycles_per_ms = cycles_per_ms

    def running(self, bounded: bool) -> bool:
        """True while the run goes on: a task that is not a daemon is live or pending, or (``bounded``: the run has
        an end cycle) any task is live."""
        return bool(self.live or self.pending_spawns or (bounded and self.live_all))

    def started(self, daemon: bool) -> None:
        self.live_all += 1
        if not daemon:
            self.live += 1

    def exited(self, daemon: bool) -> None:
        self.live_all -= 1
        if not daemon:
            self.live -= 1

    def block(self, daemon: bool) -> None:
        self.blocked += 1
        if not daemon:
            self.blocked_live += 1

    def unblock(self, daemon: bool) -> None:
        self.blocked -= 1
        if not daemon:
            self.blocked_live -= 1
            self.stalled_since = None

    def check(self, now: int, records: Iterable["TaskRecord"]) -> None:
        """At a tick: raises DeadlockError when nobody is left to wake the blocked tasks that are not daemons."""
        if not self.live or self.pending_spawns or self.blocked_live < self.live:
            self.stalled_since = None
            return
        records = list(records)
        waiting = ", ".join(f"{r.task.name!r}" for r in records
                            if r.state is TaskState.BLOCKED and not r.task.daemon)
        if self.blocked == self.live_all:
            raise DeadlockError(f"cycle {now}: every live task waits on a channel nobody will send to: {waiting}")
        if self.stalled_since is None:
            self.stalled_since = now
        elif now - self.stalled_since >= self.stall_cycles:
            busy = ", ".join(f"{r.task.name!r}" for r in records if r.task.daemon and
                             r.state in (TaskState.RUNNING, TaskState.RUNNABLE, TaskState.SLEEPING))
            raise DeadlockError(
                f"cycle {now}: every task that is not a daemon has waited on a channel for "
                f"{(now - self.stalled_since) / self.cycles_per_ms:.1f} ms ({waiting}) while only daemons "
                f"ran ({busy}); nothing woke them. If a daemon really computes that long before it sends, raise "
                "Kernel(stall_ms=...)")
