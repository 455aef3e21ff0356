"""Sweep files: a sweep described in TOML (docs/sweeps.md), as `smtlab sweep FILE.toml` reads it."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from .execute import Sweep
from .spec import MAX_RUNS, SweepError, Workload, short

_KEYS = ("name", "config", "max_instructions", "warmup", "seeds", "baseline", "format", "output", "set", "axes",
         "points", "workloads", "scenarios")
_SCENARIO_KEYS = ("name", "function", "params")


def _relative(value: str, base: Path) -> str:
    """A file path relative to the sweep file's folder, if it names a file there; specs and presets stay as they are."""
    if value.startswith(("gen:", "kernel:")) or os.path.isabs(value):
        return value
    candidate = base / value
    return str(candidate) if candidate.exists() else value


#: A sweep file is a few hundred lines; anything beyond this is another file given by mistake.
MAX_SWEEP_FILE_BYTES = 16 * 2**20


def _read_toml(path: Path) -> dict[str, Any]:
    """The parsed file, or one SweepError naming it: missing, not a regular file, unreadable, not UTF-8, not TOML,
    or nested deeper than the parser can follow."""
    try:
        with open(path, "rb") as f:
            # Bounded: a device or a pipe given as the file (/dev/zero) would otherwise be read for ever.
            data = f.read(MAX_SWEEP_FILE_BYTES + 1)
        if len(data) > MAX_SWEEP_FILE_BYTES:
            raise SweepError(f"sweep file '{path}': larger than {MAX_SWEEP_FILE_BYTES // 2**20} MiB, not a sweep file")
    except FileNotFoundError:
        raise SweepError(f"sweep file '{path}': not found") from None
    except IsADirectoryError:
        raise SweepError(f"sweep file '{path}': is a directory, not a file") from None
    except OSError as e:
        raise SweepError(f"sweep file '{path}': cannot read it: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise SweepError(f"sweep file '{path}': not UTF-8 text (byte 0x{data[e.start]:02x} at line {line}, column "
                         f"{column}); TOML files are UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"sweep file '{path}': {e}") from None
    except RecursionError:  # tomllib descends once per nested array or inline table
        raise SweepError(f"sweep file '{path}': arrays or inline tables nested too deeply to read") from None


def _plain_name(name: str) -> bool:
    """True for a name that is one file-name component: `<name>-results` stays in the folder it is made in."""
    return name.strip() not in ("", ".", "..") and not any(c in name for c in "/\\\0")


def load_sweep_file(path: str | os.PathLike[str], *, max_runs: int = MAX_RUNS) -> tuple[Sweep, dict[str, Any]]:
    """The :class:`Sweep` of a TOML file and its run options (``output``, ``format``). Paths in the file (config,
    trace files, output) are relative to the file's folder. ``max_runs``: as :class:`Sweep` takes it."""
    path = Path(path)
    doc = _read_toml(path)
    where = str(path)
    for key in doc:
        if key not in _KEYS:
            raise SweepError(f"{where}: unknown key '{short(key)}' (known: {', '.join(_KEYS)})")
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
            raise SweepError(f"{where}: workloads.{short(name)} must be a list of trace specs")
        workloads.append(Workload(name, traces=tuple(_relative(t, base) for t in traces)))
    for i, sc in enumerate(typed("scenarios", list, [])):
        if not isinstance(sc, dict) or "function" not in sc:
            raise SweepError(f"{where}: scenarios[{i}] needs a 'function' = \"module:function\"")
        for key in sc:
            if key not in _SCENARIO_KEYS:
                raise SweepError(f"{where}: scenarios[{i}]: unknown key '{short(key)}' (known: "
                                 f"{', '.join(_SCENARIO_KEYS)})")
        fn, params = sc["function"], sc.get("params", {})
        if not isinstance(fn, str):
            raise SweepError(f"{where}: scenarios[{i}]: key 'function' must be a string \"module:function\"")
        if not isinstance(params, dict):
            raise SweepError(f"{where}: scenarios[{i}]: key 'params' must be a table, got {type(params).__name__}")
        label = sc.get("name", fn.rpartition(":")[2])
        if not isinstance(label, str):
            raise SweepError(f"{where}: scenarios[{i}]: key 'name' must be a string, got {type(label).__name__}")
        workloads.append(Workload(label, scenario=fn, params=params))
    if not workloads:
        raise SweepError(f"{where}: no [workloads] and no [[scenarios]]")

    config = typed("config", str, None)
    if config is not None:
        config = _relative(config, base)
    seeds = doc.get("seeds")
    if seeds is not None and not (isinstance(seeds, int) or isinstance(seeds, list)
                                  and all(isinstance(s, int) for s in seeds)):
        raise SweepError(f"{where}: key 'seeds' must be an integer or a list of integers")
    sweep_name = typed("name", str, path.stem)
    if not _plain_name(sweep_name):
        raise SweepError(f"{where}: key 'name' must be a plain file name (no '/' or '\\', not '.' or '..', not "
                         f"empty): the default result folder is <name>-results; got {short(repr(sweep_name))}")
    # typed() names the file itself: only what Sweep raises gets the file in front here
    args = dict(axes=typed("axes", dict, None), points=typed("points", list, None), overrides=typed("set", dict, None),
                max_instructions=typed("max_instructions", int, 0), warmup=typed("warmup", int, 0),
                baseline=typed("baseline", str, "threads1"))
    try:
        sweep = Sweep(config, workloads=workloads, seeds=seeds, name=sweep_name, origin=where, max_runs=max_runs,
                      **args)
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
