"""Multiprogram throughput and fairness metrics (Eyerman & Eeckhout 2008; Luo, Gummaraju & Franklin 2001).

Each program i has a single-thread performance (IPC alone, or time alone) and a performance when sharing the machine.
Its *speedup* (progress rate) is ``ipc_shared / ipc_alone`` = ``time_alone / time_shared``.

- :func:`weighted_speedup` (system throughput, STP): the sum of the speedups. 2.0 on a 2-thread core means both
  threads ran as fast as alone; 1.0 means no gain over running them one after the other.
- :func:`antt` (average normalized turnaround time): the mean of the slowdowns (1 / speedup); lower is better.
- :func:`hmean_speedup`: the harmonic mean of the speedups, which balances throughput and fairness.
- :func:`fairness`: min over max of the speedups (1.0 is perfectly fair).
"""

from __future__ import annotations

from typing import Sequence


def _speedups(shared: Sequence[float], alone: Sequence[float], *, rate: bool) -> list[float]:
    if len(shared) != len(alone):
        raise ValueError(f"metrics: {len(shared)} shared values but {len(alone)} alone values")
    if not shared:
        raise ValueError("metrics: no programs")
    out = []
    for i, (s, a) in enumerate(zip(shared, alone)):
        if s <= 0 or a <= 0:
            raise ValueError(f"metrics: program {i} has a non-positive value (shared {s}, alone {a})")
        out.append(s / a if rate else a / s)
    return out


def speedups(shared: Sequence[float], alone: Sequence[float], *, times: bool = False) -> list[float]:
    """Per-program speedups: ``shared / alone`` for rates such as IPC, or ``alone / shared`` with ``times=True``
    (execution times or cycles)."""
    return _speedups(shared, alone, rate=not times)


def weighted_speedup(shared: Sequence[float], alone: Sequence[float], *, times: bool = False) -> float:
    """System throughput (STP): the sum of the per-program speedups."""
    return sum(speedups(shared, alone, times=times))


def antt(shared: Sequence[float], alone: Sequence[float], *, times: bool = False) -> float:
    """Average normalized turnaround time: the mean per-program slowdown (1 / speedup). Lower is better."""
    s = speedups(shared, alone, times=times)
    return sum(1.0 / x for x in s) / len(s)


def hmean_speedup(shared: Sequence[float], alone: Sequence[float], *, times: bool = False) -> float:
    """Harmonic mean of the per-program speedups."""
    s = speedups(shared, alone, times=times)
    return len(s) / sum(1.0 / x for x in s)


def fairness(shared: Sequence[float], alone: Sequence[float], *, times: bool = False) -> float:
    """Minimum over maximum per-program speedup: 1.0 when every program is slowed down equally."""
    s = speedups(shared, alone, times=times)
    return min(s) / max(s)


__all__ = ["antt", "fairness", "hmean_speedup", "speedups", "weighted_speedup"]
