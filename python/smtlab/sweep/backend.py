"""Where a sweep's runs execute: any ``concurrent.futures.Executor`` or a Dask ``distributed.Client``.

Both are driven the same way: submit every spec, yield records as they finish. A future that fails instead of
returning a record (a lost worker: ``BrokenProcessPool``, Dask's ``KilledWorker``) becomes a failed record that says
to rerun, so the driver stores it and the next run of the sweep resumes.

A Dask cluster unpickles each task twice before a worker runs it: once on the **scheduler** (the task graph) and once
on the worker. Both therefore need ``smtlab`` importable; a scheduler without it fails every run with "Error during
deserialization of the task graph". :func:`check_dask_cluster` asks the scheduler and every worker before anything
is submitted, and names which of them cannot import smtlab and how to fix it.
"""

from __future__ import annotations

import concurrent.futures as cf
from typing import Any, Callable, Iterable

from .progress import Progress
from .spec import RunSpec, SweepError
from .store import Record

#: Evaluated on the scheduler and on each worker (``eval`` is a builtin, so it unpickles anywhere): smtlab's version
#: if the package and its compiled module import there, else the ImportError comes back to the driver.
_PROBE = "__import__('smtlab.sweep.execute').__version__"

_FIX = ("start `dask scheduler` and `dask worker` with a Python that has smtlab installed (pip install the smtlab "
        "wheel or source tree into that environment, or set PYTHONPATH to the tree's python/ folder before starting "
        "them); the scheduler needs it too because it unpickles the task graph")


#: Seconds to reach a Dask scheduler given by address before giving up (Dask's own default is 30 s). A reachable
#: scheduler answers its handshake in milliseconds even across a data centre, so a few seconds only separate a live
#: scheduler from a wrong address, a stopped scheduler or a firewall, which the user is then told of at once.
CONNECT_TIMEOUT_SECONDS = 5


def open_dask_client(address: str) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``, or a :class:`SweepError` naming the address and the
    reason within :data:`CONNECT_TIMEOUT_SECONDS`."""
    try:
        from distributed import Client
    except ImportError as e:
        raise SweepError(f"--scheduler {address}: Dask is not installed here ({e}); pip install distributed") from None
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_SECONDS)
    except (OSError, ValueError, TypeError) as e:  # a timeout is an OSError; a malformed address a ValueError
        raise SweepError(f"cannot reach the Dask scheduler at {address}: {e}") from None


def is_dask_client(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed" and hasattr(executor, "gather")


def check_dask_cluster(client: Any) -> None:
    """Raises :class:`SweepError` naming the scheduler and the workers that cannot import smtlab, with the fix."""
    problems: list[str] = []
    try:
        client.run_on_scheduler(eval, _PROBE)
    except Exception as e:  # noqa: BLE001 - whatever the import raised there comes back as is
        problems.append(f"the scheduler ({client.scheduler.address}): {type(e).__name__}: {e}")
    try:
        answers = client.run(eval, _PROBE, on_error="return")
    except Exception as e:  # noqa: BLE001 - e.g. no worker could be reached
        answers = {"(workers)": e}
    for worker, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            problems.append(f"worker {worker}: {type(answer).__name__}: {answer}")
    if problems:
        raise SweepError("the Dask cluster cannot import smtlab, so it cannot run the sweep: " + "; ".join(problems)
                         + ". Fix: " + _FIX)


def lost_worker_record(spec: RunSpec, exc: BaseException) -> Record:
    text = f"{type(exc).__name__}: {exc}"
    if "deserializ" in text.lower():  # the check above passed, but the cluster changed (or a scenario's module)
        error = (f"the Dask scheduler or a worker could not unpickle the run ({text}); a module it needs is not "
                 f"importable there: {_FIX}")
    else:
        error = f"worker lost before the run finished ({text}); rerun the sweep to resume"
    return {"key": spec.key, "kind": spec.kind, "traces": list(spec.traces), "seed": spec.seed, "status": "failed",
            "error": error, "result": None, "wall_seconds": None}


def execute_all(executor: Any, runner: Callable[[RunSpec], Record], todo: list[RunSpec],
                progress: Progress) -> Iterable[Record]:
    """Submits every spec and yields records as they finish; cancels what is left if the caller stops early."""
    if is_dask_client(executor):
        from distributed import as_completed as dask_as_completed

        check_dask_cluster(executor)
        futures = {executor.submit(runner, s, key=f"smtlab-{s.kind}-{s.key}", pure=False): s for s in todo}
        completed: Iterable[Any] = dask_as_completed(list(futures))
    else:
        futures = {executor.submit(runner, s): s for s in todo}
        completed = cf.as_completed(futures)
    try:
        for fut in completed:
            spec = futures.pop(fut)
            try:
                rec = fut.result()
            except Exception as e:  # noqa: BLE001 - BrokenProcessPool, KilledWorker, a runner that raised
                rec = lost_worker_record(spec, e)
            progress.update(rec.get("status") == "ok")
            yield rec
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise
