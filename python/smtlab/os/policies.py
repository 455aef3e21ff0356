"""The built-in schedulers, after "Hyper-Threading speeds Linux", Ingo Molnar's 2.5 shared-runqueue patch (2002) and
the sched-domains design (Linux 2.6.7, 2004):

- :class:`Linux24`: HT-unaware. One runqueue per logical CPU; siblings are independent CPUs, so "1+1 busy on package
  A, 0+0 on package B" looks balanced. New tasks queue on their parent's CPU and idle CPUs pull waiting tasks at their
  (staggered) ticks, so where a task lands depends on which idle CPU gets to it first.
- :class:`Linux25HT`: Ingo Molnar's 2.5.32 shared-runqueue patch: one runqueue per physical package, with passive
  balancing per package, active balancing (a running task pushed to a fully idle package), HT-aware pickup (any
  sibling takes from the package queue), package affinity, and HT-aware wakeup (target, else an idle sibling, else
  preempt a sibling running a less important task).
- :class:`IdleCoreFirst`: today's placement (sched-domains / CFS select_idle_core): on fork and wakeup a fully idle
  core first, then an idle sibling; an SMT domain and a package domain balance with their own intervals and
  imbalance thresholds, a core of n siblings counting as 1 + 0.1 (n - 1) CPUs of capacity.

The classes live one per module (linux24.py, linux25ht.py, idle_core_first.py; shared placement helpers in
placement.py); this module names them.
"""

from __future__ import annotations

from typing import Any

from .idle_core_first import IdleCoreFirst
from .linux24 import Linux24
from .linux25ht import Linux25HT
from .scheduler import RunqueueScheduler

__all__ = ["SCHEDULERS", "IdleCoreFirst", "Linux24", "Linux25HT", "make_scheduler"]

SCHEDULERS = {cls.name: cls for cls in (Linux24, Linux25HT, IdleCoreFirst)}


def make_scheduler(name: str, **params: Any) -> RunqueueScheduler:
    """A built-in scheduler by name ('linux24', 'linux25ht', 'idle_core_first') with its parameters (names from
    :class:`~smtlab.os.scheduler.SchedulerParams`; one the scheduler does not use is an error)."""
    try:
        cls = SCHEDULERS[name]
    except KeyError:
        raise ValueError(f"unknown scheduler {name!r}; built in: {', '.join(SCHEDULERS)}") from None
    return cls(**params)
