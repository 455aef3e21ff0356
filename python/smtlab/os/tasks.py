"""Software tasks as programs of steps, and the channels they block on.

A task's program is any iterable of steps (a list, or a generator function's generator, which allows loops and
decisions). The kernel executes the steps in order while the task holds a logical CPU:

========================  ==============================================================================================
step                      meaning
========================  ==============================================================================================
``Compute(n)``            run ``n`` instructions of a trace source (the task's own, or ``source=``); or until a ``mark``
                          instruction (``until_mark=id`` or ``True`` for any) retires; or, with neither, to the
                          source's end (refused for an endless generator, ``count=0``: it has none). A source that
                          ends early ends the step (``loop=True`` starts it again instead). An empty source is a
                          TraceError naming the task and the source.
``Sleep(cycles|ms|us)``   leave the CPU for a time (a timer wakes the task)
``IO(cycles|ms|us)``      a simulated I/O request: blocked for its latency, then woken (counted as I/O wait)
``Block(channel)``        wait for a message on a channel (takes a pending one at once if there is one)
``Send(channel, n=1)``    wake up to ``n`` waiters in FIFO order; messages nobody waits for stay pending
``WakeAll(channel)``      wake every waiter (a condition broadcast; nothing stays pending)
``Spawn(task)``           create a task (the scheduler places it as on fork)
``Yield()``               give the CPU to another runnable task if there is one
``Exit()``                end the task (also implied at the end of the program)
========================  ==============================================================================================

Times are simulated cycles; ``ms=``/``us=`` are converted with the machine's ``system.freq_ghz``. A time must be a
finite, non-negative number: a NaN or an infinity is refused when the step is built (checks.py).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Union

from .checks import check_number

if TYPE_CHECKING:
    from .._core import Source

SourceLike = Union[str, "Source"]


class TaskState(Enum):
    """Where a task is in its life."""

    NEW = "new"  # created, not yet spawned (or spawn time in the future)
    RUNNABLE = "runnable"  # on a runqueue
    RUNNING = "running"  # on a logical CPU (or being switched in)
    SLEEPING = "sleeping"  # Sleep or IO timer pending
    BLOCKED = "blocked"  # waiting on a channel
    EXITED = "exited"


def _time_to_cycles(cycles: int | None, ms: float | None, us: float | None, cycles_per_us: float, what: str) -> int:
    given = [x is not None for x in (cycles, ms, us)]
    if sum(given) != 1:
        raise ValueError(f"{what}: give exactly one of cycles=, ms=, us=")
    if cycles is not None:
        value = cycles
    elif ms is not None:
        value = round(ms * 1000.0 * cycles_per_us)
    else:
        value = round(us * cycles_per_us)  # type: ignore[operator]
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what}: the duration must be a non-negative number of cycles, not {value!r}")
    return value


@dataclass(frozen=True)
class Compute:
    """Run instructions of a trace source on the task's logical CPU.

    ``instructions``: how many to retire (None: until ``until_mark`` or the source's end; on an endless generator,
    ``gen:...,count=0``, which emits no mark, the step would never end and is refused with a UsageError when it
    starts, unless ``loop``).
    ``until_mark``: a mark id, or True for any mark. ``source``: a spec/file (opened once per task and continued by
    later steps) or a Source; None means the task's own source. ``loop``: start the source again when it ends
    instead of ending the step (``Compute(loop=True)`` computes for ever). ``sample``: under a sampling kernel
    (``Kernel(sample=...)``), whether the step may be fast-forwarded between detailed windows; False keeps it in
    detail throughout.
    """

    instructions: int | None = None
    until_mark: int | bool | None = None
    source: SourceLike | None = None
    loop: bool = False
    sample: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.sample, bool):
            raise TypeError(f"Compute: sample must be a bool, not {self.sample!r}")
        n = self.instructions
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 0):
            raise ValueError(f"Compute: instructions must be a non-negative int, not {n!r}")
        m = self.until_mark
        if m is not None and not isinstance(m, (bool, int)):
            raise TypeError(f"Compute: until_mark must be a mark id or True, not {type(m).__name__}")


_UNITS = {"cycles": " of cycles", "ms": " of milliseconds", "us": " of microseconds"}


@dataclass(frozen=True)
class Sleep:
    """Leave the CPU for a duration (exactly one of cycles, ms, us)."""

    cycles: int | None = None
    ms: float | None = None
    us: float | None = None

    def __post_init__(self) -> None:
        what = type(self).__name__
        given = [(name, x) for name, x in (("cycles", self.cycles), ("ms", self.ms), ("us", self.us)) if x is not None]
        if len(given) != 1:
            raise ValueError(f"{what}: give exactly one of cycles=, ms=, us=")
        name, value = given[0]
        # Refused here, when the step is built, not as a conversion error inside Kernel.run (NaN, an infinity).
        check_number(what, name, value, unit=_UNITS[name])
        if self.cycles is not None and not isinstance(self.cycles, int):
            raise ValueError(f"{what}: cycles must be an int, not {self.cycles!r}")

    def to_cycles(self, cycles_per_us: float) -> int:
        """The duration in cycles."""
        return _time_to_cycles(self.cycles, self.ms, self.us, cycles_per_us, type(self).__name__)


@dataclass(frozen=True)
class IO(Sleep):
    """A simulated I/O request: blocked for its latency (exactly one of cycles, ms, us), then woken."""


class Channel:
    """A wait queue with pending messages: ``Send`` wakes the oldest waiter or leaves a message, ``Block`` takes a
    message or waits. Waiters are woken in FIFO order."""

    __slots__ = ("name", "pending", "waiters", "sent", "received")

    def __init__(self, name: str = "channel") -> None:
        self.name = name
        self.pending = 0
        self.waiters: deque[Task] = deque()
        self.sent = 0
        self.received = 0

    def __repr__(self) -> str:
        return f"<Channel {self.name!r} pending={self.pending} waiters={[t.name for t in self.waiters]}>"


@dataclass(frozen=True)
class Block:
    """Wait for a message on a channel."""

    channel: Channel

    def __post_init__(self) -> None:
        if not isinstance(self.channel, Channel):
            raise TypeError(f"Block: channel must be a Channel, not {type(self.channel).__name__}")


@dataclass(frozen=True)
class Send:
    """Send ``count`` messages on a channel: each wakes the oldest waiter or stays pending."""

    channel: Channel
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.channel, Channel):
            raise TypeError(f"Send: channel must be a Channel, not {type(self.channel).__name__}")
        if not isinstance(self.count, int) or self.count < 1:
            raise ValueError(f"Send: count must be a positive int, not {self.count!r}")


@dataclass(frozen=True)
class WakeAll:
    """Wake every task waiting on a channel; nothing stays pending."""

    channel: Channel

    def __post_init__(self) -> None:
        if not isinstance(self.channel, Channel):
            raise TypeError(f"WakeAll: channel must be a Channel, not {type(self.channel).__name__}")


@dataclass(frozen=True)
class Spawn:
    """Create a task, placed by the scheduler as on fork (near its parent)."""

    task: "Task"

    def __post_init__(self) -> None:
        if not isinstance(self.task, Task):
            raise TypeError(f"Spawn: expected a Task, not {type(self.task).__name__}")


@dataclass(frozen=True)
class Yield:
    """Give the CPU to another runnable task, if any (sched_yield)."""


@dataclass(frozen=True)
class Exit:
    """End the task."""


Step = Union[Compute, Sleep, IO, Block, Send, WakeAll, Spawn, Yield, Exit]
_STEP_TYPES = (Compute, Sleep, Block, Send, WakeAll, Spawn, Yield, Exit)


@dataclass(eq=False)
class TaskStats:
    """Cycle accounting of one task (all in simulated cycles)."""

    instructions: int = 0
    running: int = 0  # attached to a logical CPU
    runnable: int = 0  # on a runqueue, waiting for a CPU
    switching: int = 0  # being switched in (context-switch cost)
    sleeping: int = 0  # Sleep
    io_wait: int = 0  # IO
    blocked: int = 0  # Block on a channel
    created: int | None = None
    started: int | None = None  # first cycle on a CPU
    finished: int | None = None
    dispatches: int = 0  # times switched in
    preemptions: int = 0  # taken off a CPU while still runnable (slice, wakeup preemption, migration)
    migrations: int = 0  # switched in on a different logical CPU than last time
    core_migrations: int = 0  # ... on a different core (package)


class Task:
    """A software task (a thread or a single-threaded process).

    ``program``: an iterable of steps, or a callable returning one (e.g. a generator function), called at spawn.
    ``source``: the default trace source of ``Compute`` steps (spec string, file name or Source).
    ``asid``: address-space id; tasks of one process share one; None gives the task its own.
    ``priority``: lower is more important (like nice); equal priorities share the CPU round-robin.
    ``affinity``: the logical CPUs the task may run on (None: all).
    ``daemon``: a service task (a server loop): Kernel.run ends when only daemons are left.
    """

    def __init__(
        self,
        name: str,
        program: Iterable[Step] | Callable[[], Iterable[Step]],
        source: SourceLike | None = None,
        *,
        asid: int | None = None,
        priority: int = 0,
        affinity: Iterable[int] | None = None,
        daemon: bool = False,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"Task: name must be a str, not {type(name).__name__}")
        if not callable(program) and not isinstance(program, Iterable):
            raise TypeError(f"Task {name!r}: program must be an iterable of steps or a callable returning one")
        if not isinstance(priority, int):
            raise TypeError(f"Task {name!r}: priority must be an int")
        self.name = name
        self.program = program
        self.source = source
        self.asid = asid  # as given; the address space the kernel runs it in is ``space``
        self.priority = priority
        self.affinity: frozenset[int] | None = frozenset(affinity) if affinity is not None else None
        self.daemon = bool(daemon)
        # The one link a kernel sets, once, at spawn: its record of this task (kernel.TaskRecord). Everything the
        # kernel keeps about the task lives there; the properties below are read-only views of it.
        self._record: Any = None

    # --- read-only views of the kernel's record ------------------------------------------------------------------
    @property
    def kernel(self) -> Any:
        """The Kernel the task was spawned on (None before)."""
        return self._record.kernel if self._record is not None else None

    @property
    def pid(self) -> int | None:
        """The process id its kernel gave it at spawn (1, 2, ... per kernel); None before."""
        return self._record.pid if self._record is not None else None

    @property
    def space(self) -> int | None:
        """The address-space id it runs in: ``asid`` if given, else one its kernel allocated; None before spawn."""
        return self._record.asid if self._record is not None else None

    @property
    def state(self) -> TaskState:
        """Where the task is in its life."""
        return self._record.state if self._record is not None else TaskState.NEW

    @property
    def stats(self) -> TaskStats:
        """Its cycle accounting (a fresh, empty one before spawn)."""
        return self._record.stats if self._record is not None else TaskStats()

    @property
    def parent(self) -> "Task | None":
        """The task that spawned it (None: spawned from outside)."""
        return self._record.parent if self._record is not None else None

    @property
    def cpu(self) -> int | None:
        """The logical CPU it runs on (or is being switched in on), else None."""
        return self._record.cpu if self._record is not None else None

    @property
    def last_cpu(self) -> int | None:
        """The logical CPU it last ran on."""
        return self._record.last_cpu if self._record is not None else None

    @property
    def last_ran(self) -> int:
        """The cycle it last left a CPU (the cache-hot test)."""
        return self._record.last_ran if self._record is not None else 0

    @property
    def done(self) -> bool:
        """True once the task exited."""
        return self.state is TaskState.EXITED

    def allowed(self, cpu: int) -> bool:
        """True if the task may run on the logical CPU."""
        return self.affinity is None or cpu in self.affinity

    def __repr__(self) -> str:
        return f"<Task {self.name!r} pid={self.pid} {self.state.value}>"


def steps_of(task: Task) -> Iterator[Any]:
    """The task's program as an iterator of steps (calling it first if it is a callable)."""
    program = task.program
    if callable(program) and not isinstance(program, Iterable):
        program = program()
        if not isinstance(program, Iterable):
            raise TypeError(f"Task {task.name!r}: its program callable returned {type(program).__name__}, "
                            "not an iterable of steps")
    return iter(program)


def check_step(task: Task, step: Any) -> None:
    """Raises TypeError naming the task if ``step`` is not a step."""
    if not isinstance(step, _STEP_TYPES):
        raise TypeError(f"Task {task.name!r}: its program yielded {step!r}, which is not a step "
                        "(Compute, Sleep, IO, Block, Send, WakeAll, Spawn, Yield, Exit)")


__all__ = [
    "Block",
    "Channel",
    "Compute",
    "Exit",
    "IO",
    "Send",
    "Sleep",
    "Spawn",
    "Step",
    "Task",
    "TaskState",
    "TaskStats",
    "WakeAll",
    "Yield",
]
