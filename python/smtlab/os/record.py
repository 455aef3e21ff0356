"""What a kernel keeps about each task it runs (TaskRecord): its pid, address space, state and accounting, and the
step in progress. The kernel owns and writes the record; :class:`~smtlab.os.tasks.Task` only holds a link to it and
hands out read-only views (``task.state``, ``task.stats``, ``task.cpu``, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from .tasks import TaskState, TaskStats

if TYPE_CHECKING:
    from .._core import Source
    from .tasks import Compute, Task


class TaskRecord:
    """One task as its kernel sees it."""

    __slots__ = ("task", "kernel", "pid", "asid", "state", "stats", "parent", "steps", "step", "remaining", "source",
                 "sources", "since", "bucket", "cpu", "last_cpu", "last_ran")

    def __init__(self, task: "Task", kernel: Any, pid: int, asid: int) -> None:
        self.task = task
        self.kernel = kernel
        self.pid = pid
        self.asid = asid
        self.state = TaskState.NEW
        self.stats = TaskStats()
        self.parent: Task | None = None
        self.steps: Iterator[Any] | None = None
        self.step: Compute | None = None  # the compute step in progress
        self.remaining: int | None = None  # its instructions left (None: bounded by a mark or the end)
        self.source: Source | None = None  # its Source
        self.sources: dict[Any, Source] = {}  # spec -> opened Source (so later steps continue it)
        self.since = 0  # cycle of the last state change (for accounting)
        self.bucket = ""  # which TaskStats field the time since ``since`` goes to
        self.cpu: int | None = None  # CPU it runs on (or is switched in on)
        self.last_cpu: int | None = None
        self.last_ran = 0  # cycle it last left a CPU (cache-hot test)

    def __repr__(self) -> str:
        return f"<TaskRecord pid={self.pid} {self.task.name!r} {self.state.value}>"
