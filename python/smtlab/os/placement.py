"""Placement helpers shared by the built-in schedulers (linux24.py, linux25ht.py, idle_core_first.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .scheduler import RunqueueScheduler

if TYPE_CHECKING:
    from .tasks import Task


def home_cpu(sched: RunqueueScheduler, task: "Task", reason: str) -> int:
    """Where a task comes from: its last CPU on wakeup, its parent's CPU on fork, else the kernel's spawn CPU."""
    k = sched.kernel
    assert k is not None
    if reason != "fork" and task.last_cpu is not None:
        return task.last_cpu
    parent = task.parent
    if parent is not None:
        if parent.cpu is not None:
            return parent.cpu
        if parent.last_cpu is not None:
            return parent.last_cpu
    return k.spawn_cpu


def first_allowed(sched: RunqueueScheduler, task: "Task") -> int:
    k = sched.kernel
    assert k is not None
    for c in range(len(k.cpus)):
        if task.allowed(c):
            return c
    raise ValueError(f"task {task.name!r}: its affinity {sorted(task.affinity or ())} names no CPU of this machine")


def allowed_home(sched: RunqueueScheduler, task: "Task", reason: str) -> int:
    """The task's home CPU (:func:`home_cpu`) if its affinity allows it, else the first CPU it allows."""
    home = home_cpu(sched, task, reason)
    return home if task.allowed(home) else first_allowed(sched, task)
