"""Sweep files: a sweep described in TOML (docs/sweeps.md), as `smtlab sweep FILE.toml` reads it."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from .execute import Sweep
from .spec import SweepError, Workload

_KEYS = ("name", "config", "max_instructions", "warmup", "seeds", "baseline", "format", "output", "set", "axes",
         "points", "workloads", "scenarios")
_SCENARIO_KEYS = ("name", "function", "params")


def _relative(value: str, base: Path) -> str:
    """A file path relative to the sweep file's folder, if it names a file there; specs and presets stay as they are."""
    if value.startswith(("gen:", "kernel:")) or os.path.isabs(value):
        return value
    candidate = base / value
    return str(candidate) if candidate.exists() else value


def load_sweep_file(path: str | os.PathLike[str]) -> tuple[Sweep, dict[str, Any]]:
    """The :class:`Sweep` of a TOML file and its run options (``output``, ``format``). Paths in the file (config,
    trace files, output) are relative to the file's folder."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SweepError(f"sweep file '{path}': not found") from None
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"sweep file '{path}': {e}") from None
    where = str(path)
    for key in doc:
        if key not in _KEYS:
            raise SweepError(f"{where}: unknown key '{key}' (known: {', '.join(_KEYS)})")
    base = path.resolve().parent

    def typed(key: str, kind: type, default: Any) -> Any:
        if key not in doc:
            return default
        value = doc[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise SweepError(f"{where}: key '{key}' must be of type {kind.__name__}, got {type(value).__name__}")
        return value

    workloads: list[Workload] = []
    for name, traces in typed("workloads", dict, {}).items():
        if isinstance(traces, str):
            traces = [traces]
        if not isinstance(traces, list) or not traces or not all(isinstance(t, str) for t in traces):
            raise SweepError(f"{where}: workloads.{name} must be a list of trace specs")
        workloads.append(Workload(name, traces=tuple(_relative(t, base) for t in traces)))
    for i, sc in enumerate(typed("scenarios", list, [])):
        if not isinstance(sc, dict) or "function" not in sc:
            raise SweepError(f"{where}: scenarios[{i}] needs a 'function' = \"module:function\"")
        for key in sc:
            if key not in _SCENARIO_KEYS:
                raise SweepError(f"{where}: scenarios[{i}]: unknown key '{key}' (known: {', '.join(_SCENARIO_KEYS)})")
        fn = sc["function"]
        workloads.append(Workload(sc.get("name", fn.rpartition(":")[2]), scenario=fn, params=sc.get("params", {})))
    if not workloads:
        raise SweepError(f"{where}: no [workloads] and no [[scenarios]]")

    config = typed("config", str, None)
    if config is not None:
        config = _relative(config, base)
    seeds = doc.get("seeds")
    if seeds is not None and not (isinstance(seeds, int) or isinstance(seeds, list)
                                  and all(isinstance(s, int) for s in seeds)):
        raise SweepError(f"{where}: key 'seeds' must be an integer or a list of integers")
    try:
        sweep = Sweep(
            config,
            axes=typed("axes", dict, None),
            points=typed("points", list, None),
            workloads=workloads,
            overrides=typed("set", dict, None),
            seeds=seeds,
            max_instructions=typed("max_instructions", int, 0),
            warmup=typed("warmup", int, 0),
            baseline=typed("baseline", str, "threads1"),
            name=typed("name", str, path.stem),
        )
    except SweepError as e:
        raise SweepError(f"{where}: {e}") from None
    output = typed("output", str, None)
    options = {
        "output": str(base / output) if output is not None else None,
        "format": typed("format", str, "parquet"),
    }
    if options["format"] not in ("parquet", "csv"):
        raise SweepError(f"{where}: key 'format' must be 'parquet' or 'csv'")
    return sweep, options
