"""How many worker processes a study or a sweep may start on this host: by default one per CPU the process may use,
never more than WORKERS_PER_CPU per CPU (each worker is a process running one simulation)."""

from __future__ import annotations

import os

__all__ = ["WORKERS_PER_CPU", "host_cpus", "workers_problem"]

#: The most local worker processes per host CPU. Runs are CPU-bound, so processes beyond the CPUs only cost memory
#: and start-up time; a few per CPU still lets a pool oversubscribe (another job holding some cores), while a count
#: far beyond that (a typo, 100000) is refused before thousands of processes are started.
WORKERS_PER_CPU = 4


def host_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one): the default number of workers."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def workers_problem(workers: object, what: str) -> str | None:
    """What is wrong with ``workers`` as a number of worker processes (``what`` names it in the message), or None when
    it is an integer from 1 to WORKERS_PER_CPU x the host's CPUs. Each caller raises its own error type with it."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        return f"{what} must be an integer of at least 1, got {workers!r}"
    cpus = host_cpus()
    if workers > WORKERS_PER_CPU * cpus:
        return (f"{what} {workers} is too many for this host: at most {WORKERS_PER_CPU} per CPU ({cpus} CPUs, so "
                f"{WORKERS_PER_CPU * cpus}); each worker is a process running one simulation")
    return None
