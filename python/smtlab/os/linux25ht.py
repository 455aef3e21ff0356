"""The 2.5.32 HT-aware scheduler (Ingo Molnar's shared-runqueue patch): see :class:`Linux25HT`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .placement import allowed_home
from .scheduler import Interval, RunqueueScheduler
from .tasks import TaskState

if TYPE_CHECKING:
    from .kernel import Kernel
    from .tasks import Task


class Linux25HT(RunqueueScheduler):
    """The 2.5.32 HT-aware scheduler: a shared runqueue per physical package and the five HT-aware behaviours.

    ``idle_interval_ms`` / ``busy_interval_ms``: passive balancing per package (about 1 ms when the package has an
    idle CPU, 250 ms when busy). ``active_balance``: push a running task to a fully idle package when another
    package runs two.

    ``wakeup_preempt`` (2.5.32 kernel/sched.c, restated): every task has a ``sleep_avg`` (cycles here), raised by
    the time it slept when it wakes (activate_task) and lowered by one tick per tick while it runs
    (scheduler_tick), capped at ``max_sleep_avg_ms`` (MAX_SLEEP_AVG). Its effective priority (effective_prio) is
    ``task.priority - bonus`` with ``bonus = floor(2 max_bonus sleep_avg / MAX_SLEEP_AVG) - max_bonus``, i.e. -5..+5:
    a task that sleeps gains up to 5 levels, a CPU hog loses up to 5. Runqueues order by it, and a woken task
    preempts the task running on its CPU, or on a sibling (the HT wakeup), when its effective priority is better
    (try_to_wake_up: ``p->prio < rq->curr->prio``). A forked child inherits CHILD_PENALTY 95 % of its parent's
    sleep_avg (wake_up_forked_process); a task spawned from outside any task is the child of a launcher (the shell
    that starts the benchmark) whose sleep_avg is ``launcher_sleep_avg_pct`` % of MAX_SLEEP_AVG (chosen 100, the
    reason at SchedulerParams). Chosen: the effective priority is evaluated when compared
    rather than stored at activation and slice expiry (they differ by at most the decay during one slice), and the
    woken task must beat the running one strictly, as in 2.5.32.
    """

    name = "linux25ht"
    # 2.5.32 on i386: HZ=1000 (include/asm-i386/param.h, since 2.5.2), and task_timeslice() gives a task at nice 0
    # (static_prio 120) MIN_TIMESLICE + (MAX_TIMESLICE - MIN_TIMESLICE) x (MAX_PRIO - 1 - 120) / (MAX_USER_PRIO - 1)
    # = 10 + 290 x 19 / 39 ms, 151 whole ticks (kernel/sched.c: MIN 10 ms, MAX 300 ms, MAX_PRIO 140, MAX_USER_PRIO 40).
    own_hz = 1000.0
    own_time_slice_ms = 151.0
    uses = ("cache_hot_ms", "idle_interval_ms", "busy_interval_ms", "active_balance", "wakeup_preempt",
            "max_sleep_avg_ms", "max_bonus", "launcher_sleep_avg_pct")
    defaults = {"busy_interval_ms": 250.0}
    child_penalty_pct = 95  # 2.5.32 kernel/sched.c CHILD_PENALTY

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.launcher_sleep_avg_pct > 100:
            raise ValueError(f"{self.name}: launcher_sleep_avg_pct is a share of MAX_SLEEP_AVG, at most 100, not "
                             f"{self.launcher_sleep_avg_pct!r}")
        self._idle_iv: dict[int, Interval] = {}
        self._busy_iv: dict[int, Interval] = {}
        self.sleep_avg: dict["Task", int] = {}  # the scheduler's own per-task state, in cycles
        self._max_sleep = 1
        self._purge_at = 64

    def setup(self, kernel: "Kernel") -> None:
        super().setup(kernel)
        self._idle_iv = {p: Interval(kernel.ms_to_cycles(self.idle_interval_ms)) for p in self.queues}
        self._busy_iv = {p: Interval(kernel.ms_to_cycles(self.busy_interval_ms)) for p in self.queues}
        self._max_sleep = max(1, kernel.ms_to_cycles(self.max_sleep_avg_ms))

    def prio(self, task: "Task") -> int:
        """effective_prio(): the fixed priority less the sleep_avg bonus (when wakeup_preempt is on)."""
        if not self.wakeup_preempt:
            return task.priority
        avg = self.sleep_avg.get(task, 0)
        return task.priority - (2 * self.max_bonus * avg // self._max_sleep - self.max_bonus)

    def enqueue(self, task: "Task", reason: str) -> int | None:
        if self.wakeup_preempt:
            k = self.kernel
            assert k is not None
            if reason == "fork":
                if len(self.sleep_avg) >= self._purge_at:  # bounded memory: forget exited tasks now and then
                    self.sleep_avg = {t: v for t, v in self.sleep_avg.items() if t.state is not TaskState.EXITED}
                    self._purge_at = 2 * len(self.sleep_avg) + 64
                parent = task.parent
                inherited = (self.sleep_avg.get(parent, 0) if parent is not None
                             else self._max_sleep * self.launcher_sleep_avg_pct // 100)
                self.sleep_avg[task] = inherited * self.child_penalty_pct // 100
            elif reason == "wakeup":
                slept = k.now - k.record(task).last_ran
                self.sleep_avg[task] = min(self._max_sleep, self.sleep_avg.get(task, 0) + slept)
        return super().enqueue(task, reason)

    def settle_sleep_avg(self) -> int:
        """Set every live task's sleep_avg to where 2.5.32's estimator drifts in a long run, judged from the task's
        time so far; returns how many went to the cap. The estimator gains the time slept at each wake-up and loses a
        tick per tick run, clipped to [0, MAX_SLEEP_AVG]: a task that sleeps more than it runs drifts to the cap, one
        that runs more drifts to 0. A run must last several MAX_SLEEP_AVG (2 s) to get there by itself; a workload
        whose measurement window is shorter and whose published figure is a long run's calls this after its warm-up
        (``chat.run(settle=True)``). Sleeping here is any wait off the runqueue (Sleep, IO, Block), as in 2.5.32's
        deactivate/activate."""
        k = self.kernel
        assert k is not None
        at_cap = 0
        for rec in k.records:
            if rec.state in (TaskState.NEW, TaskState.EXITED):
                continue
            st = rec.stats
            sleeper = st.sleeping + st.io_wait + st.blocked >= st.running
            self.sleep_avg[rec.task] = self._max_sleep if sleeper else 0
            at_cap += sleeper
        return at_cap

    def queue_key(self, cpu: int) -> int:
        k = self.kernel
        assert k is not None
        return k.cpus[cpu].core

    def select_cpu(self, task: "Task", reason: str) -> int:
        k = self.kernel
        assert k is not None
        home = allowed_home(self, task, reason)
        if reason == "fork":
            # A new task has no package affinity yet: the least loaded package, the parent's first among equals.
            home_pkg = k.cpus[home].core
            best, best_key = None, None
            for pkg, cpus in self._queue_cpus.items():
                allowed = [c for c in cpus if task.allowed(c)]
                if not allowed:
                    continue
                key = (self.load(pkg), pkg != home_pkg, pkg)
                if best_key is None or key < best_key:
                    best, best_key = pkg, key
            assert best is not None
            cpus = [c for c in self._queue_cpus[best] if task.allowed(c)]
            if home in cpus and k.is_idle(home):
                return home
            for c in cpus:
                if k.is_idle(c):
                    return c
            return home if home in cpus else cpus[0]
        # Wakeup: the task's last CPU if idle, else an idle sibling (package affinity), else the last CPU.
        if k.is_idle(home):
            return home
        for s in k.cpus[home].siblings:
            if task.allowed(s) and k.is_idle(s):
                return s
        return home

    def tick(self, cpu: int) -> None:
        k = self.kernel
        assert k is not None
        if self.wakeup_preempt:
            cur = k.cpus[cpu].current
            if cur is not None:
                avg = self.sleep_avg.get(cur, 0)
                self.sleep_avg[cur] = max(0, avg - k.tick_cycles)
        pkg = k.cpus[cpu].core
        cpus = self._queue_cpus[pkg]
        has_idle = any(k.is_idle(c) for c in cpus)
        if (self._idle_iv[pkg] if has_idle else self._busy_iv[pkg]).due(k.now):
            self.balance_package(pkg)

    def idle(self, cpu: int) -> None:
        k = self.kernel
        assert k is not None
        self.balance_package(k.cpus[cpu].core)

    def balance_package(self, pkg: int) -> None:
        """Passive balancing: pull a waiting task from a package with at least two more runnable tasks; else active
        balancing: if this whole package is idle and another runs two or more tasks, push one of them here."""
        k = self.kernel
        assert k is not None
        cpus = self._queue_cpus[pkg]
        idle_cpus = [c for c in cpus if k.is_idle(c)]
        mine = self.load(pkg)
        busiest, most = None, 0
        for p in self.queues:
            if p == pkg:
                continue
            load = self.load(p)
            if load > most:
                busiest, most = p, load
        if busiest is None or most - mine < 2:
            return
        dst = idle_cpus[0] if idle_cpus else cpus[0]
        if self.queues[busiest] and self.pull(busiest, dst, allow_hot=bool(idle_cpus)):
            return
        if self.active_balance and len(idle_cpus) == len(cpus) and not self.queues[pkg]:
            src_cpus = [c for c in self._queue_cpus[busiest] if not k.is_idle(c)]
            if len(src_cpus) >= 2:
                for src in reversed(src_cpus):
                    task = k.current(src)
                    for d in idle_cpus:
                        if task is not None and task.allowed(d) and k.push_running(src, d):
                            return
