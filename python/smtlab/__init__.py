"""smtlab: a cycle-approximate model of simultaneous multithreading (Intel Hyper-Threading).

The C++ model lives in :mod:`smtlab._core` (re-exported here); pure-Python layers sit on top:

- :mod:`smtlab.os`: an operating-system layer (tasks, a kernel, Linux 2.4 / 2.5 HT-aware / idle-core-first
  schedulers) that drives a :class:`Machine`;
- :mod:`smtlab.metrics`: multiprogram metrics (weighted speedup, ANTT, harmonic mean of speedups, fairness).

Quick start::

    import smtlab
    cfg = smtlab.load_config("netburst", {"system.packages": 2})
    with smtlab.Machine(cfg) as m:
        m.attach(0, smtlab.Source("gen:alu,count=100k"), asid=1)
        events = m.run(cycles=1_000_000)
        print(events, m.cpu_stats(0)["ipc"])
"""

from __future__ import annotations

import os as _os
from pathlib import Path as _Path
from typing import Any as _Any, Mapping as _Mapping

try:
    from . import _core
except ImportError as _e:  # pragma: no cover - depends on the build
    raise ImportError(
        "smtlab._core (the compiled module) is missing: build it with "
        "`cmake -S . -B build -DSMTLAB_BUILD_PYTHON=ON && cmake --build build --target _core` "
        "(it lands in python/smtlab/) or install the package with `pip install .`"
    ) from _e

from ._core import (  # noqa: F401  (re-exports)
    ALLOCATION_POLICIES,
    CPI_CAUSES,
    FETCH_POLICIES,
    THREAD_CHOICE_POLICIES,
    UNIT_CLASSES,
    Config,
    ConfigError,
    DeadlockError,
    Error,
    Event,
    EventKind,
    Instr,
    Machine,
    Source,
    TraceError,
    UsageError,
    generator_names,
    open_trace,
    read_records,
    run_traces,
)

__version__: str = _core.__version__

#: Presets shipped inside an installed package (pip install .). The C++ loader searches them first in an installed
#: package, the source tree's configs/ in a tree build (smtlab/resources.py).
PACKAGED_CONFIG_DIR = _Path(__file__).with_name("configs")


def load_config(name_or_path: str | None = None, overrides: _Mapping[str, _Any] | None = None) -> Config:
    """Loads a config: a preset name (``"netburst"``) or TOML file, ``None`` for the defaults, then the overrides
    (``{"core.rob.entries": 96}``), validated. Same keys and errors (:class:`ConfigError`) as ``smtlab --set``.

    Presets are searched where the program searches them: ``SMTLAB_CONFIG_DIR``, then the installed package's presets
    (or, imported from the source tree, the tree's configs/).
    """
    if overrides is not None and not isinstance(overrides, _Mapping):
        raise TypeError(f"overrides must be a mapping of key to value, not {type(overrides).__name__}")
    try:
        return Config.load(name_or_path, dict(overrides) if overrides is not None else None)
    except ConfigError:
        if name_or_path and "/" not in name_or_path and not _os.path.exists(name_or_path):
            file = name_or_path if name_or_path.endswith(".toml") else name_or_path + ".toml"
            packaged = PACKAGED_CONFIG_DIR / file
            if packaged.is_file():
                return Config.load(str(packaged), dict(overrides) if overrides is not None else None)
        raise


__all__ = [
    "ALLOCATION_POLICIES",
    "CPI_CAUSES",
    "FETCH_POLICIES",
    "THREAD_CHOICE_POLICIES",
    "UNIT_CLASSES",
    "Config",
    "ConfigError",
    "DeadlockError",
    "Error",
    "Event",
    "EventKind",
    "Instr",
    "Machine",
    "Source",
    "TraceError",
    "UsageError",
    "generator_names",
    "load_config",
    "open_trace",
    "read_records",
    "run_traces",
    "__version__",
]
