"""The tables of a sweep: built from the stored records (one row per run, the CPI stacks in long form, the effective
configs), written as Parquet or CSV, and read back.

Metrics that combine a run with its single-thread baselines (speedups, STP, ANTT, hmean, fairness) are computed here,
in the driver, after every record is in: a worker only ever simulates one run.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from smtlab import fileio, metrics

from .spec import Run, RunSpec, SweepError, SweepSpec
from .store import Record


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


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _speedup_metrics(row: dict[str, Any], shared: list[float], alone: list[float]) -> None:
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


def build_result(sweep: SweepSpec, runs: list[Run], baselines: Mapping[str, RunSpec],
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
    """Writes ``results.<fmt>``, ``cpi_stacks.<fmt>`` and ``configs/<config_key>.toml`` into ``out``, each file
    atomically (a temporary name renamed when complete), so an interrupted write never leaves a truncated table."""
    out = Path(out)
    try:
        (out / "configs").mkdir(parents=True, exist_ok=True)
        for key, toml in result.configs.items():
            fileio.write_text(out / "configs" / f"{key}.toml", toml, "sweep config")
        for frame, stem in ((result.table, "results"), (result.cpi_stacks, "cpi_stacks")):
            with fileio.atomic_path(out / f"{stem}.{fmt}", "sweep table") as tmp:
                if fmt == "parquet":
                    _mixed_to_str(frame).to_parquet(tmp, index=False)
                else:
                    frame.to_csv(tmp, index=False)
    except ValueError as e:  # fileio's checks name the file
        raise SweepError(str(e)) from None
    except OSError as e:  # a full disk, the folder removed: the records in runs/ stay, a rerun writes the tables
        where = f"'{e.filename}'" if e.filename else f"into '{out}'"
        raise SweepError(f"cannot write the sweep's tables {where}: {e.strerror or e}") from None
    return out / f"results.{fmt}"


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
