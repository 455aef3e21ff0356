"""Runs from a sampled run's window snapshots (docs/sampling.md "Window snapshots"), in parallel.

:func:`replay` simulates the windows of a ``smtlab run --sample --snapshots DIR`` folder again, in this process or in
parts on a local process pool or a Dask cluster, and returns the statistics dict of ``smtlab run --from-snapshots DIR
--json``: the same figures whichever way it ran (host times aside).

Each part is a contiguous range of windows, simulated through the binding
(:func:`smtlab._core.simulate_snapshot_windows`): a task needs only the smtlab package where it runs, as a sweep's
does, and hands its window records back as its result (bytes), so that no folder for results has to be shared; only
the snapshot folder must be readable at the same path everywhere. The ranges' records are merged in window order by
one call (:func:`smtlab._core.merge_snapshot_windows`), the code a run in one process adds its windows up with.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import time
from typing import Any, Sequence

from . import _core
from ._core import Config, Error, UsageError
from .workers import default_signals, end_pool, host_cpus, workers_problem

__all__ = ["replay", "window_ranges"]


def window_ranges(first: int, last: int, parts: int) -> list[tuple[int, int]]:
    """Windows first..last in at most ``parts`` contiguous ranges of nearly equal counts, in order.

    Contiguous, because a range reads each trace forward from its start to its first window and then on from window
    to window: windows dealt out one by one would each read the traces from the start again."""
    count = last - first + 1
    n = max(1, min(parts, count))
    return [(first + j * count // n, first + (j + 1) * count // n - 1) for j in range(n)]


def _window_bounds(windows: Any, count: int) -> tuple[int, int]:
    """(first, last) of ``windows``: None (all), a window K, (A, B) or "A-B"; checked against the folder's count."""
    if windows is None:
        first, last = 0, count - 1
    elif isinstance(windows, bool):
        raise UsageError(f"windows: give None, a window K, (A, B) or 'A-B', not {windows!r}")
    elif isinstance(windows, int):
        first = last = windows
    elif isinstance(windows, str):
        a, sep, b = windows.partition("-")
        try:
            first, last = (int(a), int(b)) if sep else (int(a), int(a))
        except ValueError:
            raise UsageError(f"windows {windows!r}: give 'A-B' with A <= B, or one window 'K' (numbered from 0)") \
                from None
    elif isinstance(windows, Sequence) and len(windows) == 2 and all(type(w) is int for w in windows):
        first, last = windows
    else:
        raise UsageError(f"windows: give None, a window K, (A, B) or 'A-B', not {windows!r}")
    if first < 0 or last < first:
        raise UsageError(f"windows {windows!r}: give A-B with 0 <= A <= B (windows are numbered from 0)")
    if first >= count:
        raise UsageError(f"windows {windows!r}: the snapshots hold windows 0-{count - 1}; {first} is not among them")
    return first, min(last, count - 1)


def _simulate_range(folder: str, config: Config, first: int, last: int) -> bytes:
    """One task: windows first..last, their window records."""
    return _core.simulate_snapshot_windows(folder, config, first, last)


def replay(folder: str | os.PathLike[str], workers: int | None = 1, scheduler: str | None = None,
           windows: Any = None, config: Config | None = None, executor: Any = None) -> dict[str, Any]:
    """The statistics dict of ``smtlab run --from-snapshots FOLDER --workers N --json``.

    - ``windows``: None (every window), a window K, (A, B) or "A-B".
    - ``config``: None, the folder's config; else one that differs from it only in keys that time the detailed model
      (policies, latencies, energy), as ``--set`` allows.
    - backend: ``executor`` (a ``concurrent.futures.Executor`` or a ``distributed.Client``), else ``scheduler`` (a
      Dask scheduler address, ``tcp://host:8786``; a client is opened and closed here; the workers must read the
      folder at the same path), else ``workers`` local processes (None: one per CPU; 1: in this process, window
      after window). With several, the windows are split into that many contiguous ranges, one task each.

    A task that fails or a worker that is lost raises :class:`smtlab.Error` naming the range's windows; the other
    tasks are cancelled and nothing is merged.
    """
    start = time.perf_counter()
    folder = os.fspath(folder)
    if workers is not None and (problem := workers_problem(workers, "workers")) is not None:
        raise UsageError(problem)
    if config is None:
        config = _core.snapshot_config(folder)
    elif not isinstance(config, Config):
        raise TypeError(f"config must be a smtlab.Config or None, not {type(config).__name__}")
    first, last = _window_bounds(windows, _core.snapshot_window_count(folder))
    if executor is None and scheduler is None and workers == 1:
        return _core.run_from_snapshots(folder, config, first, last)

    own = None
    if executor is None and scheduler is not None:
        from .sweep.backend import open_dask_client

        executor = own = open_dask_client(scheduler)
    ranges = window_ranges(first, last, workers or (len(executor.ncores()) if _is_dask(executor) else host_cpus()))
    if executor is None:
        executor = own = cf.ProcessPoolExecutor(max_workers=len(ranges), initializer=default_signals)
    finished = False
    try:
        records = _run_ranges(executor, folder, config, ranges)
        finished = True
    finally:
        if isinstance(own, cf.Executor):
            if finished:
                own.shutdown(wait=True)
            else:
                end_pool(own)
        elif own is not None:
            own.close()
    return _core.merge_snapshot_windows(folder, config, records, first, last, time.perf_counter() - start)


def _is_dask(executor: Any) -> bool:
    from .sweep.backend import is_dask_client

    return executor is not None and is_dask_client(executor)


def _run_ranges(executor: Any, folder: str, config: Config,
                ranges: list[tuple[int, int]]) -> list[tuple[str, bytes]]:
    """Each range on the executor; their records in window order. The first failure cancels the rest and raises."""
    if _is_dask(executor):
        from distributed import wait as dask_wait

        from .sweep.backend import check_dask_cluster

        check_dask_cluster(executor)
        futures = [executor.submit(_simulate_range, folder, config, a, b, key=f"smtlab-windows-{a}-{b}", pure=False)
                   for a, b in ranges]
        waiting = set(futures)
        while waiting:
            done, waiting_now = dask_wait(list(waiting), return_when="FIRST_COMPLETED")
            waiting = set(waiting_now)
            for fut in done:
                if fut.status != "finished":
                    for other in waiting:
                        other.cancel()
                    a, b = ranges[futures.index(fut)]
                    _raise_for(a, b, fut.exception())
    else:
        futures = [executor.submit(_simulate_range, folder, config, a, b) for a, b in ranges]
        done, not_done = cf.wait(futures, return_when=cf.FIRST_EXCEPTION)
        for fut, (a, b) in zip(futures, ranges):
            if fut.done() and fut.exception() is not None:
                for other in not_done:
                    other.cancel()
                _raise_for(a, b, fut.exception())
    return [(f"windows {a}-{b}", fut.result()) for fut, (a, b) in zip(futures, ranges)]


def _raise_for(first: int, last: int, exc: BaseException | None) -> None:
    if isinstance(exc, Error):
        raise type(exc)(f"windows {first}-{last}: {exc}") from exc
    raise Error(f"windows {first}-{last}: the worker simulating them was lost ({type(exc).__name__}: {exc}); no "
                f"result was merged") from exc
