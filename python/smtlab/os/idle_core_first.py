"""Today's placement (sched-domains / CFS select_idle_core): see :class:`IdleCoreFirst`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .placement import allowed_home
from .scheduler import Interval, RunqueueScheduler

if TYPE_CHECKING:
    from .kernel import Kernel
    from .tasks import Task


class IdleCoreFirst(RunqueueScheduler):
    """Today's placement: per-CPU runqueues; on fork and wakeup a fully idle core first (the task's own core first),
    then an idle CPU (its last CPU, then its siblings, then any); balancing in an SMT domain (siblings) and a package
    domain (cores as groups of capacity 1 + ``smt_gain`` per extra sibling), each with its interval and imbalance
    percentage; an idle CPU balances every ``idle_interval_ms`` and pulls a running task from a core running two or
    more (active balancing)."""

    name = "idle_core_first"
    remote_wakeup = True  # today's Linux: the woken CPU runs the enqueue from its wake list (Scheduler.remote_wakeup)
    uses = ("cache_hot_ms", "idle_interval_ms", "smt_interval_ms", "smt_imbalance_pct", "package_interval_ms",
            "package_imbalance_pct", "smt_gain")
    defaults = {"cache_hot_ms": 0.5}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._smt_iv: list[Interval] = []
        self._pkg_iv: list[Interval] = []
        self._idle_iv: list[Interval] = []

    def setup(self, kernel: "Kernel") -> None:
        super().setup(kernel)
        n = len(kernel.cpus)
        self._smt_iv = [Interval(kernel.ms_to_cycles(self.smt_interval_ms)) for _ in range(n)]
        self._pkg_iv = [Interval(kernel.ms_to_cycles(self.package_interval_ms)) for _ in range(n)]
        self._idle_iv = [Interval(kernel.ms_to_cycles(self.idle_interval_ms)) for _ in range(n)]

    def queue_key(self, cpu: int) -> int:
        return cpu

    def _core_idle(self, core_cpus: list[int]) -> bool:
        k = self.kernel
        assert k is not None
        return all(k.is_idle(c) and not self.queues[c] for c in core_cpus)

    def select_cpu(self, task: "Task", reason: str) -> int:
        k = self.kernel
        assert k is not None
        home = allowed_home(self, task, reason)
        cores = k.cores
        start = k.cpus[home].core
        # 1. A fully idle core, the task's own first, then the next ones in order.
        for i in range(len(cores)):
            core_cpus = cores[(start + i) % len(cores)]
            if self._core_idle(core_cpus):
                if home in core_cpus:
                    return home
                for c in core_cpus:
                    if task.allowed(c):
                        return c
        # 2. An idle CPU: the home CPU, its siblings, then any.
        for c in [home, *k.cpus[home].siblings, *range(len(k.cpus))]:
            if task.allowed(c) and k.is_idle(c) and not self.queues[c]:
                return c
        if reason != "fork":
            return home
        allowed = [c for c in range(len(k.cpus)) if task.allowed(c)]
        return min(allowed, key=lambda c: (self.load(c), c))

    def tick(self, cpu: int) -> None:
        k = self.kernel
        assert k is not None
        now = k.now
        if k.is_idle(cpu):
            if self._idle_iv[cpu].due(now):
                self.balance(cpu, idle=True, smt=True, package=True)
            return
        smt = self._smt_iv[cpu].due(now)
        package = self._pkg_iv[cpu].due(now)
        if smt or package:
            self.balance(cpu, idle=False, smt=smt, package=package)

    def idle(self, cpu: int) -> None:
        self.balance(cpu, idle=True, smt=True, package=True)

    def balance(self, cpu: int, *, idle: bool, smt: bool, package: bool) -> None:
        """SMT domain first (pull from a sibling), then the package domain (pull from the busiest core, or push a
        running task here if this CPU is idle and that core runs two or more)."""
        k = self.kernel
        assert k is not None
        mine = self.load(cpu)
        if smt:
            for s in k.cpus[cpu].siblings:
                if self.queues[s]:
                    theirs = self.load(s)
                    if theirs * 100 > mine * self.smt_imbalance_pct and theirs - mine >= 2:
                        if self.pull(s, cpu, allow_hot=idle):
                            return
        if not package:
            return
        local_core = k.cpus[cpu].core
        capacity = 1.0 + self.smt_gain * (len(k.cores[local_core]) - 1)
        local_nr = sum(self.load(c) for c in k.cores[local_core])
        busiest, most = None, 0
        for core, core_cpus in enumerate(k.cores):
            if core == local_core:
                continue
            nr = sum(self.load(c) for c in core_cpus)
            if nr > most:
                busiest, most = core, nr
        if busiest is None:
            return
        their_capacity = 1.0 + self.smt_gain * (len(k.cores[busiest]) - 1)
        if not (most / their_capacity * 100 > local_nr / capacity * self.package_imbalance_pct and
                most - local_nr >= 2):
            return
        for c in sorted(k.cores[busiest], key=lambda c: -self.load(c)):
            if self.queues[c] and self.pull(c, cpu, allow_hot=idle):
                return
        if idle and k.is_idle(cpu):
            running = [c for c in k.cores[busiest] if not k.is_idle(c)]
            if len(running) >= 2:
                for src in reversed(running):
                    task = k.current(src)
                    if task is not None and task.allowed(cpu) and k.push_running(src, cpu):
                        return
