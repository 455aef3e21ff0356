"""Running a sweep: the per-run function, the result store (resume), any Executor or a Dask client, the table.

Runs and single-thread baselines are independent tasks, submitted together; the driver alone writes the store (one
JSON file per run, written atomically), so a worker that dies leaves nothing half-written and a cluster's workers need
no shared file system. Metrics that combine a run with its baselines are computed in the driver afterwards.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import math
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import smtlab

from .spec import Run, RunSpec, Sweep, _json_default, resolve_scenario

Record = dict[str, Any]


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
            result = json.loads(json.dumps(dict(result), default=_json_default))
        record.update(status="ok", error=None, result=result)
    except Exception as e:  # noqa: BLE001 - every failure becomes a reported row
        record.update(status="failed", error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc(), result=None)
    record["wall_seconds"] = time.perf_counter() - t0
    return record


class ResultStore:
    """One JSON file per run key under ``<dir>/runs/``; written by the driver, atomically (temp file + rename)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory) / "runs"
        self.dir.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    def get(self, key: str) -> Record | None:
        try:
            return json.loads(self.path(key).read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # unreadable: run it again

    def put(self, record: Record) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, default=_json_default)
        os.replace(tmp, self.path(record["key"]))


class _MemoryStore(ResultStore):
    def __init__(self) -> None:  # noqa: D107 - no directory: nothing is resumable
        self.records: dict[str, Record] = {}

    def get(self, key: str) -> Record | None:
        return self.records.get(key)

    def put(self, record: Record) -> None:
        self.records[record["key"]] = record


def _is_dask_client(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed" and hasattr(executor, "gather")


def _lost_worker_record(spec: RunSpec, exc: BaseException) -> Record:
    return {"key": spec.key, "kind": spec.kind, "traces": list(spec.traces), "seed": spec.seed, "status": "failed",
            "error": f"worker lost before the run finished ({type(exc).__name__}: {exc}); rerun the sweep to resume",
            "result": None, "wall_seconds": None}


@dataclass
class SweepResult:
    """The table (one row per run), the CPI stacks (long form: run, thread, component, cpi) and the effective configs
    (config key -> TOML text), plus the raw records by key."""

    table: Any
    cpi_stacks: Any
    configs: dict[str, str]
    records: dict[str, Record] = field(default_factory=dict)

    @property
    def failed(self) -> Any:
        return self.table[self.table["status"] != "ok"]


def run_sweep(
    sweep: Sweep,
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
      processes (default: all cores).
    - ``retry_failed``: runs stored as failed are run again (a lost worker is not the run's fault).
    - ``runner``: the picklable function that executes one :class:`RunSpec` (default :func:`execute_run`).
    """
    if fmt not in ("parquet", "csv"):
        raise ValueError(f"fmt must be 'parquet' or 'csv', got {fmt!r}")
    runs, baselines = sweep.expand()  # validates everything before any run starts
    store: ResultStore = ResultStore(out) if out is not None else _MemoryStore()

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
    cached = len(records)

    if todo:
        own = None
        if executor is None and scheduler is not None:
            from distributed import Client

            executor = own = Client(scheduler)
        elif executor is None:
            executor = own = cf.ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1)
        try:
            for rec in _execute(executor, runner, todo, progress=progress, cached=cached, name=sweep.name):
                store.put(rec)
                records[rec["key"]] = rec
        finally:
            if own is not None:
                if isinstance(own, cf.Executor):
                    own.shutdown(wait=True, cancel_futures=True)
                else:
                    own.close()

    result = build_result(sweep, runs, baselines, records)
    if out is not None:
        write_result(result, out, fmt=fmt)
    sweep.result = result
    return result


def _execute(executor: Any, runner: Callable[[RunSpec], Record], todo: list[RunSpec], *, progress: bool,
             cached: int, name: str) -> Iterable[Record]:
    """Submits every spec and yields records as they finish, with a progress bar."""
    from tqdm.auto import tqdm

    if _is_dask_client(executor):
        from distributed import as_completed as dask_as_completed

        futures = {executor.submit(runner, s, key=f"smtlab-{s.kind}-{s.key}", pure=False): s for s in todo}
        completed: Iterable[Any] = dask_as_completed(list(futures))
    else:
        futures = {executor.submit(runner, s): s for s in todo}
        completed = cf.as_completed(futures)
    failed = 0
    bar = tqdm(total=len(todo), desc=name, unit="run", disable=not progress, file=sys.stderr, dynamic_ncols=True)
    bar.set_postfix(failed=0, remaining=len(todo), cached=cached)
    try:
        for fut in completed:
            spec = futures.pop(fut)
            try:
                rec = fut.result()
            except Exception as e:  # noqa: BLE001 - BrokenProcessPool, KilledWorker, a runner that raised
                rec = _lost_worker_record(spec, e)
            failed += rec.get("status") != "ok"
            bar.update(1)
            bar.set_postfix(failed=failed, remaining=len(futures), cached=cached)
            yield rec
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise
    finally:
        bar.close()


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _speedup_metrics(row: dict[str, Any], shared: list[float], alone: list[float]) -> None:
    from smtlab import metrics

    for i, (s, a) in enumerate(zip(shared, alone)):
        row[f"ipc_alone_t{i}"] = a
        row[f"speedup_t{i}"] = s / a if a > 0 else math.nan
    try:
        row["stp"] = metrics.weighted_speedup(shared, alone)
        row["antt"] = metrics.antt(shared, alone)
        row["hmean_speedup"] = metrics.hmean_speedup(shared, alone)
        row["fairness"] = metrics.fairness(shared, alone)
    except ValueError:  # a thread that made no progress: the metrics are undefined
        for k in ("stp", "antt", "hmean_speedup", "fairness"):
            row[k] = math.nan


def build_result(sweep: Sweep, runs: list[Run], baselines: Mapping[str, RunSpec],
                 records: Mapping[str, Record]) -> SweepResult:
    """The table from the stored records: axes, status, per-thread IPC, metrics against the baselines, energy."""
    import pandas as pd

    axis_keys = sweep.axis_keys
    rows: list[dict[str, Any]] = []
    cpi_rows: list[dict[str, Any]] = []
    configs: dict[str, str] = {}
    for run in runs:
        configs.setdefault(run.config_key, run.spec.config.to_toml())
        if run.baseline_config_key is not None and run.baseline_keys:
            configs.setdefault(run.baseline_config_key, baselines[run.baseline_keys[0]].config.to_toml())
        rec = records.get(run.spec.key)
        row: dict[str, Any] = {"run": run.index, "workload": run.workload.name, "traces": "+".join(run.spec.traces),
                               "seed": run.seed}
        for k in axis_keys:
            row[k] = run.point.get(k)
        row.update(status="missing", error="not run", key=run.spec.key, config_key=run.config_key,
                   baseline_config_key=run.baseline_config_key)
        if rec is not None:
            row["status"], row["error"] = rec.get("status"), rec.get("error")
        res = rec.get("result") if rec is not None and rec.get("status") == "ok" else None
        if res is not None and run.spec.traces:
            cpus = res.get("logical_cpus", [])[: len(run.spec.traces)]
            shared = [float(c.get("ipc", math.nan)) for c in cpus]
            for i, c in enumerate(cpus):
                row[f"ipc_t{i}"] = shared[i]
                for comp, v in (c.get("cpi_stack") or {}).items():
                    cpi_rows.append({"run": run.index, "thread": i, "trace": run.spec.traces[i], "component": comp,
                                     "cpi": v})
            row["ipc_total"] = sum(shared)
            row["cycles"] = res.get("cycles")
            row["instructions"] = res.get("instructions")
            if run.baseline_keys:
                brecs = [records.get(k) for k in run.baseline_keys]
                bad = [(k, b) for k, b in zip(run.spec.traces, brecs) if b is None or b.get("status") != "ok"]
                if bad:
                    t, b = bad[0]
                    row["status"] = "failed"
                    row["error"] = f"baseline of '{t}': {b.get('error') if b else 'not run'}"
                else:
                    alone = [float(b["result"]["logical_cpus"][0]["ipc"]) for b in brecs]  # type: ignore[index]
                    _speedup_metrics(row, shared, alone)
        elif res is not None:  # an OS scenario: its scalars, and per-thread lists
            ipcs = res.get("ipc")
            for k, v in res.items():
                if _finite(v) or isinstance(v, str):
                    row[k] = v
            if isinstance(ipcs, list):
                for i, v in enumerate(ipcs):
                    row[f"ipc_t{i}"] = v
                alone = res.get("ipc_alone")
                if isinstance(alone, list) and len(alone) == len(ipcs):
                    _speedup_metrics(row, [float(x) for x in ipcs], [float(x) for x in alone])
        if res is not None:
            energy = res.get("energy")
            if isinstance(energy, Mapping):
                row["energy_j"] = energy.get("joules")
                row["power_w"] = energy.get("watts")
            row["host_seconds"] = res.get("host_seconds", rec.get("wall_seconds") if rec else None)
        rows.append(row)
    table = pd.DataFrame(rows)
    cpi = pd.DataFrame(cpi_rows, columns=["run", "thread", "trace", "component", "cpi"])
    if len(cpi):
        cpi = cpi.merge(table[["run", "workload", *axis_keys]], on="run", how="left")
    return SweepResult(table, cpi, configs, dict(records))


def write_result(result: SweepResult, out: str | os.PathLike[str], *, fmt: str = "parquet") -> Path:
    """Writes ``results.<fmt>``, ``cpi_stacks.<fmt>`` and ``configs/<config_key>.toml`` into ``out``."""
    out = Path(out)
    (out / "configs").mkdir(parents=True, exist_ok=True)
    for key, toml in result.configs.items():
        (out / "configs" / f"{key}.toml").write_text(toml)
    path = out / f"results.{fmt}"
    for frame, stem in ((result.table, "results"), (result.cpi_stacks, "cpi_stacks")):
        target = out / f"{stem}.{fmt}"
        if fmt == "parquet":
            _mixed_to_str(frame).to_parquet(target, index=False)
        else:
            frame.to_csv(target, index=False)
    return path


def _mixed_to_str(frame: Any) -> Any:
    """Parquet wants one type per column; an axis with mixed values (1 and "a") is written as text."""
    frame = frame.copy()
    for col in frame.columns:
        if frame[col].dtype == object:
            kinds = {type(v) for v in frame[col] if v is not None and not (isinstance(v, float) and math.isnan(v))}
            if len(kinds) > 1:
                frame[col] = frame[col].map(lambda v: None if v is None else str(v))
    return frame


def load_results(out: str | os.PathLike[str]) -> Any:
    """The table written by a sweep into ``out`` (Parquet or CSV)."""
    import pandas as pd

    out = Path(out)
    if (out / "results.parquet").exists():
        return pd.read_parquet(out / "results.parquet")
    return pd.read_csv(out / "results.csv")


def load_cpi_stacks(out: str | os.PathLike[str]) -> Any:
    """The CPI stacks (long form) written by a sweep into ``out``."""
    import pandas as pd

    out = Path(out)
    if (out / "cpi_stacks.parquet").exists():
        return pd.read_parquet(out / "cpi_stacks.parquet")
    return pd.read_csv(out / "cpi_stacks.csv")
