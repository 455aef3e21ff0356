"""Built-in OS scenarios for sweeps: picklable functions ``fn(config, *, seed, max_instructions, **params) -> dict``.

A scenario runs the OS layer (:mod:`smtlab.os`) on one config point and returns scalars (table columns) and,
optionally, ``ipc`` (per task) and ``ipc_alone`` lists, from which the sweep computes STP / ANTT / hmean speedup.
Write your own the same way, in an importable module, and name it ``"package.module:function"`` in a sweep file.
"""

from __future__ import annotations

from typing import Any, Mapping

import smtlab


def cpu_bound(
    config: smtlab.Config,
    *,
    seed: int | None = None,
    max_instructions: int = 0,
    scheduler: str = "linux25ht",
    tasks: int = 2,
    source: str = "gen:mix",
    time_slice_ms: float = 1.0,
    hz: float = 1000.0,
    scheduler_params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``tasks`` CPU-bound tasks of ``max_instructions`` each (``source`` with seeds seed, seed+1, ...) under the
    named scheduler (linux24, linux25ht, idle_core_first) with ``scheduler_params`` (smtlab.os.SchedulerParams
    names, e.g. ``{"cache_hot_ms": 1.0}``; one the scheduler does not use is a ValueError). Results: makespan (cycles
    and ms), mean turnaround, migrations, per-task IPC while running."""
    from smtlab.os import Compute, Kernel, Task, make_scheduler

    if max_instructions <= 0:
        raise ValueError("cpu_bound needs max_instructions > 0 (the work of each task)")
    base = 1 if seed is None else seed
    sched = make_scheduler(scheduler, **(scheduler_params or {}))
    k = Kernel(config, sched, hz=hz, time_slice_ms=time_slice_ms, seed=base)
    for i in range(tasks):
        k.spawn(Task(f"t{i}", [Compute(max_instructions)], source=f"{source},count=0,seed={base + i}"))
    k.run()
    recs = k.task_records()
    makespan = max(r["finished"] for r in recs)
    return {
        "makespan_cycles": makespan,
        "makespan_ms": makespan / (config.freq_ghz * 1e6),
        "mean_turnaround": sum(r["turnaround"] for r in recs) / len(recs),
        "migrations": sum(r["migrations"] for r in recs),
        "ipc": [r["ipc"] for r in recs],
    }
