"""Multiprogram throughput and fairness metrics (Eyerman & Eeckhout 2008; Luo, Gummaraju & Franklin 2001).

Each program i has a single-thread performance (IPC alone, or time alone) and a performance when sharing the machine.
Its *speedup* (progress rate) is ``ipc_shared / ipc_alone`` = ``time_alone / time_shared``.

- :func:`weighted_speedup` (system throughput, STP): the sum of the speedups. 2.0 on a 2-thread core means both
  threads ran as fast as alone; 1.0 means no gain over running them one after the other.
- :func:`antt` (average normalized turnaround time): the mean of the slowdowns (1 / speedup); lower is better.
- :func:`hmean_speedup`: the harmonic mean of the speedups, which balances throughput and fairness.
- :func:`fairness`: min over max of the speedups (1.0 is perfectly fair).

The arguments are sequences of numbers (lists, tuples, NumPy arrays, pandas Series). Every value must be finite and
positive, and so must every speedup and result: anything else is a ValueError naming the program and the argument.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence


def _values(values: Iterable[Any], name: str) -> list[Any]:
    """The values of ``name`` (a list, tuple, NumPy array or pandas Series) as a list."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"metrics: {name} must be a sequence of numbers (list, tuple, array, Series), "
                        f"not {type(values).__name__}")
    return list(values)


def _positive(value: Any, i: int, name: str) -> float:
    """``value`` as a finite positive float, or a ValueError naming program ``i`` and the argument."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"metrics: program {i} has a {name} value that is not a number: {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"metrics: program {i} has a non-finite {name} value ({x})")
    if x <= 0:
        raise ValueError(f"metrics: program {i} has a non-positive {name} value ({x})")
    return x


def _result(x: float, what: str) -> float:
    """``x`` when it is a finite positive number; else the ValueError of an aggregate that overflowed/underflowed."""
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"metrics: the {what} is {x}: the values are too far apart for floating point")
    return x


def _speedups(shared: Sequence[float], alone: Sequence[float], *, rate: bool) -> list[float]:
    shared, alone = _values(shared, "shared"), _values(alone, "alone")
    if len(shared) != len(alone):
        raise ValueError(f"metrics: {len(shared)} shared values but {len(alone)} alone values")
    if not shared:
        raise ValueError("metrics: no programs")
    out = []
    for i, (s, a) in enumerate(zip(shared, alone)):
        s, a = _positive(s, i, "shared"), _positive(a, i, "alone")
        x = s / a if rate else a / s
        if not (math.isfinite(x) and x > 0):
            ratio = f"shared / alone = {s} / {a}" if rate else f"alone / shared = {a} / {s}"
            raise ValueError(f"metrics: program {i}'s speedup ({ratio}) is {x}: the values are too far apart for "
                             f"floating point")
        out.append(x)
    return out


def speedups(shared: Sequence[float], alone: Sequence[float], *, times: bool = False) -> list[float]:
    """Per-program speedups: ``shared / alone`` for rates such as IPC, or ``alone / shared`` with ``times=True``
    (execution times or cycles)."""
    return _speedups(shared, alone, rate=not times)


def weighted_speedup(shared: Sequence[float], alone: Sequence[float], *, times: bool = False) -> float:
    """System throughput (STP): the sum of the per-program speedups."""
    return _result(sum(speedups(shared, alone, times=times)), "weighted speedup")


def antt(shared: Sequence[float], alone: Sequence[float], *, times: bool = False) -> float:
    """Average normalized turnaround time: the mean per-program slowdown (1 / speedup). Lower is better."""
    s = speedups(shared, alone, times=times)
    return _result(sum(1.0 / x for x in s) / len(s), "ANTT")


def hmean_speedup(shared: Sequence[float], alone: Sequence[float], *, times: bool = False) -> float:
    """Harmonic mean of the per-program speedups."""
    s = speedups(shared, alone, times=times)
    return _result(len(s) / sum(1.0 / x for x in s), "harmonic mean speedup")


def fairness(shared: Sequence[float], alone: Sequence[float], *, times: bool = False) -> float:
    """Minimum over maximum per-program speedup: 1.0 when every program is slowed down equally."""
    s = speedups(shared, alone, times=times)
    return _result(min(s) / max(s), "fairness")


__all__ = ["antt", "fairness", "hmean_speedup", "speedups", "weighted_speedup"]
