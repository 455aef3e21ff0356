"""Built-in OS scenarios for sweeps: picklable functions ``fn(config, *, seed, max_instructions, **params) -> dict``.

A scenario runs the OS layer (:mod:`smtlab.os`) on one config point and returns scalars (table columns) and,
optionally, ``ipc`` (per task) and ``ipc_alone`` lists, from which the sweep computes STP / ANTT / hmean speedup.
Write your own the same way, in an importable module, and name it ``"package.module:function"`` in a sweep file.
A scenario may carry a ``check_params`` attribute: a function of its arguments (a dict, defaults filled in, without
the config) that raises ``ValueError`` naming a bad parameter; the sweep calls it when it validates, before any run
(as :func:`check_cpu_bound` for :func:`cpu_bound`).
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

    check_cpu_bound({"seed": seed, "max_instructions": max_instructions, "scheduler": scheduler, "tasks": tasks,
                     "source": source, "time_slice_ms": time_slice_ms, "hz": hz, "scheduler_params": scheduler_params})
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


def check_cpu_bound(args: Mapping[str, Any]) -> None:
    """Raises ValueError naming the first bad argument of :func:`cpu_bound` (a dict of them all): what the sweep checks
    before any run, and what ``cpu_bound`` checks first itself."""
    from smtlab.os import SCHEDULERS, make_scheduler

    if args["max_instructions"] <= 0:
        raise ValueError("cpu_bound needs max_instructions > 0 (the work of each task)")
    tasks = args["tasks"]
    if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1:
        raise ValueError(f"cpu_bound: parameter 'tasks' must be a positive integer, got {tasks!r}")
    for key in ("time_slice_ms", "hz"):
        value = args[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"cpu_bound: parameter '{key}' must be a positive number, got {value!r}")
    scheduler, params = args["scheduler"], args["scheduler_params"]
    if not isinstance(scheduler, str) or scheduler not in SCHEDULERS:
        raise ValueError(f"cpu_bound: parameter 'scheduler': unknown scheduler {scheduler!r}; built in: "
                         f"{', '.join(SCHEDULERS)}")
    if params is not None and not isinstance(params, Mapping):
        raise ValueError(f"cpu_bound: parameter 'scheduler_params' must be a table of scheduler parameters, got "
                         f"{params!r}")
    try:
        make_scheduler(scheduler, **(params or {}))  # an unknown or bad parameter raises; building one is cheap
    except (ValueError, TypeError) as e:
        raise ValueError(f"cpu_bound: parameter 'scheduler_params': {e}") from None
    source = args["source"]
    if not isinstance(source, str):
        raise ValueError(f"cpu_bound: parameter 'source' must be a generator spec (gen:NAME,...), got {source!r}")
    try:
        smtlab.Source(f"{source},count=0,seed=1")  # what each task runs, with its own seed
    except smtlab.Error as e:
        raise ValueError(f"cpu_bound: parameter 'source': {e}") from None


cpu_bound.check_params = check_cpu_bound  # type: ignore[attr-defined]
