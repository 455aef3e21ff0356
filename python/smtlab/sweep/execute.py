"""Running a sweep: the per-run function, the driver that resumes from the store, dispatches, and writes tables, and
:class:`Sweep` (a :class:`~.spec.SweepSpec` that runs itself).

Runs and single-thread baselines are independent tasks, submitted together (:mod:`.backend`); the driver alone writes
the store (:mod:`.store`, one JSON file per run, written atomically), so a worker that dies leaves nothing
half-written and a cluster's workers need no shared file system. The tables are built from the records afterwards
(:mod:`.tables`).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import time
import traceback
from typing import Any, Callable, Mapping

import smtlab

from ..workers import WORKERS_PER_CPU, default_signals, end_pool, host_cpus, workers_problem
from .backend import execute_all, open_dask_client
from .progress import Progress
from .spec import RunSpec, SweepError, SweepSpec, json_default, resolve_scenario
from .store import MemoryStore, Record, ResultStore
from .tables import SweepResult, build_result, load_cpi_stacks, load_results, write_result

__all__ = ["WORKERS_PER_CPU", "Sweep", "check_workers", "execute_run", "host_cpus", "load_cpi_stacks", "load_results",
           "run_sweep", "write_result"]

def check_workers(workers: int | None, what: str = "workers") -> None:
    """Raises :class:`SweepError` unless ``workers`` is None (the default) or 1 .. WORKERS_PER_CPU x the host's CPUs
    (smtlab/workers.py); ``what`` names the value in the message (``--workers`` on the command line)."""
    if workers is not None and (problem := workers_problem(workers, what)) is not None:
        raise SweepError(problem)


def execute_run(spec: RunSpec) -> Record:
    """Simulates one run or baseline; never raises for a failed simulation: returns a record with status 'failed'
    and the error, so the failure is stored and reported like a result."""
    t0 = time.perf_counter()
    record: Record = {"key": spec.key, "kind": spec.kind, "traces": list(spec.traces), "seed": spec.seed}
    try:
        if spec.scenario is None:
            result = smtlab.run_traces(spec.config, list(spec.traces), spec.max_instructions, spec.warmup)
        else:
            fn = resolve_scenario(spec.scenario)
            result = fn(spec.config, seed=spec.seed, max_instructions=spec.max_instructions, **spec.params)
            if not isinstance(result, Mapping):
                raise TypeError(f"scenario returned {type(result).__name__}, expected a dict of results")
            result = json.loads(json.dumps(dict(result), default=json_default))
        record.update(status="ok", error=None, result=result)
    except Exception as e:  # noqa: BLE001 - every failure becomes a reported row
        record.update(status="failed", error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc(), result=None)
    record["wall_seconds"] = time.perf_counter() - t0
    return record


def run_sweep(
    sweep: SweepSpec,
    out: str | os.PathLike[str] | None = None,
    *,
    executor: Any = None,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    retry_failed: bool = True,
    runner: Callable[[RunSpec], Record] = execute_run,
    fmt: str = "parquet",
) -> SweepResult:
    """Runs every run and baseline not already finished in the store, then builds and writes the table.

    - ``out``: the result directory (``runs/`` store, ``results.parquet`` or ``.csv``, ``cpi_stacks.*``, ``configs/``);
      ``None`` keeps everything in memory (no resume).
    - backend: ``executor`` (any ``concurrent.futures.Executor``, or a ``distributed.Client``), else ``scheduler``
      (a Dask scheduler address: a client is opened and closed here), else a ``ProcessPoolExecutor`` with ``workers``
      processes (default: all cores; never more than there are runs to do; more than ``WORKERS_PER_CPU`` per CPU is a
      :class:`SweepError`).
    - ``retry_failed``: runs stored as failed are run again (a lost worker is not the run's fault).
    - ``runner``: the picklable function that executes one :class:`RunSpec` (default :func:`execute_run`).
    """
    if fmt not in ("parquet", "csv"):
        raise ValueError(f"fmt must be 'parquet' or 'csv', got {fmt!r}")
    check_workers(workers)
    runs, baselines = sweep.expand()  # validates everything before any run starts (and refuses a sweep of no runs)
    store: ResultStore | MemoryStore = ResultStore(out) if out is not None else MemoryStore()
    try:
        records, todo = _stored_and_todo(store, runs, baselines, retry_failed)
        if todo:
            _execute(sweep.name, todo, store, records, executor=executor, workers=workers, scheduler=scheduler,
                     progress=progress, runner=runner)
        result = build_result(sweep, runs, baselines, records)
        if out is not None:
            write_result(result, out, fmt=fmt)
    except BaseException:
        store.remove_if_unused()  # a sweep that stored nothing leaves no empty folder behind
        raise
    return result


def _stored_and_todo(store: ResultStore | MemoryStore, runs: list[Any], baselines: dict[str, RunSpec],
                     retry_failed: bool) -> tuple[dict[str, Record], list[RunSpec]]:
    """The records already in the store that count, and the runs and baselines left to execute."""
    specs: dict[str, RunSpec] = dict(baselines)
    for r in runs:
        specs.setdefault(r.spec.key, r.spec)
    records: dict[str, Record] = {}
    todo: list[RunSpec] = []
    for key, spec in specs.items():
        rec = store.get(key)
        if rec is not None and (rec.get("status") == "ok" or not retry_failed):
            records[key] = rec
        else:
            todo.append(spec)
    return records, todo


def _execute(name: str, todo: list[RunSpec], store: ResultStore | MemoryStore, records: dict[str, Record], *,
             executor: Any, workers: int | None, scheduler: str | None, progress: bool,
             runner: Callable[[RunSpec], Record]) -> None:
    """Executes ``todo`` on the backend (:func:`run_sweep` says which), storing each record as it finishes."""
    own = None
    if executor is None and scheduler is not None:
        executor = own = open_dask_client(scheduler)
    elif executor is None:
        executor = own = cf.ProcessPoolExecutor(max_workers=min(workers or host_cpus(), len(todo)),
                                                initializer=default_signals)
    bar = Progress(len(todo), name, cached=len(records), enabled=progress)
    finished = False
    try:
        for rec in execute_all(executor, runner, todo, bar):
            store.put(rec)
            records[rec["key"]] = rec
        finished = True
    finally:
        bar.close()
        if isinstance(own, cf.Executor):
            # Stopped early (a signal, Ctrl-C, an error storing a record): the running simulations are ended, not
            # waited for; every finished run is stored already.
            if finished:
                own.shutdown(wait=True)
            else:
                end_pool(own)
        elif own is not None:
            own.close()


class Sweep(SweepSpec):
    """A parameter sweep (see :class:`~smtlab.sweep.spec.SweepSpec` for its arguments) that runs itself.

    >>> sw = Sweep("netburst", axes={"core.fetch_policy": ["round_robin", "icount"]},
    ...            workloads=[("gen:mix", "gen:branchy")], max_instructions=20_000)
    >>> df = sw.run("out/fetch", workers=2)                      # doctest: +SKIP
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.result: SweepResult | None = None  # the SweepResult of the last self.run() (set by run() only)

    def run(self, out: str | os.PathLike[str] | None = None, **kwargs: Any) -> Any:
        """Executes the sweep; see :func:`run_sweep` for the arguments. Returns the table (``self.result.table``)."""
        self.result = run_sweep(self, out, **kwargs)
        return self.result.table
