"""The built-in schedulers, after shared/reference/linux_ht_scheduling.md:

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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .scheduler import Interval, RunqueueScheduler
from .tasks import TaskState

if TYPE_CHECKING:
    from .kernel import Kernel
    from .tasks import Task


def _home_cpu(sched: RunqueueScheduler, task: "Task", reason: str) -> int:
    """Where a task comes from: its last CPU on wakeup, its parent's CPU on fork, else the kernel's spawn CPU."""
    k = sched.kernel
    assert k is not None
    if reason != "fork" and task.last_cpu is not None:
        return task.last_cpu
    parent = task.parent
    if parent is not None:
        if parent.cpu is not None:
            return parent.cpu
        if parent.last_cpu is not None:
            return parent.last_cpu
    return k.spawn_cpu


def _first_allowed(sched: RunqueueScheduler, task: "Task") -> int:
    k = sched.kernel
    assert k is not None
    for c in range(len(k.cpus)):
        if task.allowed(c):
            return c
    raise ValueError(f"task {task.name!r}: its affinity {sorted(task.affinity or ())} names no CPU of this machine")


class Linux24(RunqueueScheduler):
    """HT-unaware scheduling: a runqueue per logical CPU, balancing that treats siblings as independent CPUs.

    ``idle_interval_ms``: an idle CPU looks for waiting tasks this often (and when it goes idle); ``busy_interval_ms``:
    a busy CPU pulls from a CPU with at least two more runnable tasks this often (cache-hot tasks stay).
    ``global_runqueue`` (default): one runqueue for every CPU, as 2.4.19 has it (kernel/sched.c ``runqueue_head``;
    schedule() on any CPU scans it for the best goodness(), ``can_schedule()`` skipping tasks running elsewhere), so
    an idle CPU finds any waiting task; a preempted task that an idle CPU could run makes it reschedule
    (__schedule_tail()'s ``reschedule_idle(prev)``). With ``global_runqueue=False``: a runqueue per logical CPU and
    the pull balancing below (the model's earlier approximation).
    ``wake_idle``: 2.4's ``reschedule_idle()``: a woken or forked task whose CPU is busy goes to an idle logical CPU
    at once. 2.4 takes the one idle longest, which says nothing about topology; the model draws one at random
    (seeded) among the idle ones, sibling or not, which is what makes 2.4 double tasks up on a package.

    ``wakeup_preempt`` (2.4.19 kernel/sched.c; the formulas are restated, not copied): every task has a time-slice
    ``counter`` in ticks, the running task's decremented at every tick (update_process_times; at 0 its CPU
    reschedules). ``goodness(p, cpu, mm)`` = 0 if the counter is used up, else counter + 20 - nice
    (+1 if ``p`` has the address space ``mm``, + ``proc_change_penalty`` if ``p`` last ran on ``cpu``, or for a task
    that has not run yet, if ``cpu`` is its parent's CPU at fork, do_fork()'s p->processor); ``nice`` is
    ``task.priority``. A CPU reschedules to the queued task of the highest goodness (its running task stays unless
    one is strictly better; FIFO among equals, chosen: the model's round-robin order); when the best goodness is 0,
    every task's counter is recalculated as counter/2 + the full slice, so a task that slept keeps credit.
    reschedule_idle(): a woken or forked task that finds no idle CPU goes to the CPU whose running task ``curr``
    gives the largest ``preemption_goodness = goodness(p) - goodness(curr)`` (both for that CPU and curr's address
    space), which reschedules if that is > 0. On fork the child gets half its parent's counter (rounded up) and the
    parent keeps half. Chosen: the counter counts the model's ticks and its full value (NICE_TO_TICKS(0), 6 ticks of
    HZ=100 in 2.4) is the kernel's time slice in ticks, so the model's slice keeps its meaning; NICE_TO_TICKS's
    dependence on nice is not modelled.
    """

    name = "linux24"
    uses = ("cache_hot_ms", "idle_interval_ms", "busy_interval_ms", "wake_idle", "wakeup_preempt",
            "proc_change_penalty", "global_runqueue")
    defaults = {"busy_interval_ms": 200.0}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._idle_iv: list[Interval] = []
        self._busy_iv: list[Interval] = []
        self.counter: dict["Task", int] = {}  # the scheduler's own per-task state: time-slice counter in ticks
        # p->processor of a task that has not run yet: 2.4's do_fork() gives the child its parent's CPU, and
        # goodness() counts that CPU as the one it last ran on.
        self.processor: dict["Task", int] = {}
        self._full = 1

    def setup(self, kernel: "Kernel") -> None:
        super().setup(kernel)
        n = len(kernel.cpus)
        self._idle_iv = [Interval(kernel.ms_to_cycles(self.idle_interval_ms)) for _ in range(n)]
        self._busy_iv = [Interval(kernel.ms_to_cycles(self.busy_interval_ms)) for _ in range(n)]
        self._full = max(1, kernel.time_slice // kernel.tick_cycles)

    # --- 2.4's counter and goodness --------------------------------------------------------------------------------
    def _counter(self, task: "Task") -> int:
        c = self.counter.get(task)
        if c is None:
            c = self.counter[task] = self._full
        return c

    def goodness(self, task: "Task", cpu: int, asid: int | None) -> int:
        """2.4's goodness() of ``task`` for ``cpu`` when the address space ``asid`` is loaded there."""
        c = self._counter(task)
        if c == 0:
            return 0
        k = self.kernel
        assert k is not None
        rec = k.record(task)
        last = rec.last_cpu if rec.last_cpu is not None else self.processor.get(task)
        return (c + 20 - task.priority + (self.proc_change_penalty if last == cpu else 0)
                + (1 if rec.asid == asid else 0))

    def _credit_queued(self, cpu: int) -> bool:
        """True if a task queued on any runqueue, allowed on ``cpu``, has counter left."""
        for queue in self.queues.values():
            for t in queue:
                if (t.affinity is None or cpu in t.affinity) and self._counter(t) > 0:
                    return True
        return False

    def _recalculate(self) -> None:
        full = self._full
        for task in list(self.counter):
            if task.state is TaskState.EXITED:
                del self.counter[task]
                self.processor.pop(task, None)
            else:
                self.counter[task] = self.counter[task] // 2 + full

    def enqueue(self, task: "Task", reason: str) -> int | None:
        if not self.wakeup_preempt:
            target = super().enqueue(task, reason)
            if reason in ("preempt", "yield"):
                self._kick_idle_for(task)
            return target
        k = self.kernel
        assert k is not None
        if reason == "fork" and task not in self.counter:
            parent = task.parent
            if parent is not None and parent in self.counter:
                pc = self.counter[parent]
                self.counter[task] = (pc + 1) // 2
                self.counter[parent] = pc // 2
            else:
                self.counter[task] = self._full
        if reason in ("preempt", "yield"):
            super().enqueue(task, reason)
            self._kick_idle_for(task)
            return None
        if reason == "fork":
            self.processor[task] = _home_cpu(self, task, reason)
        cpu = self.select_cpu(task, reason)
        if not k.is_idle(cpu):
            # reschedule_idle(): an idle CPU comes first (select_cpu already took one when wake_idle is on); with
            # no idle CPU allowed, the CPU where the woken task gains most over the running one.
            best, gain = None, 0
            for c in range(len(k.cpus)):
                cur = k.current(c)
                if not task.allowed(c):
                    continue
                if cur is None:
                    if k.is_idle(c):
                        best = None  # an idle CPU: 2.4 never preempts then (here the idle balancing pulls)
                        break
                    continue
                asid = k.record(cur).asid
                g = self.goodness(task, c, asid) - self.goodness(cur, c, asid)
                if g > gain:
                    best, gain = c, g
            if best is not None:
                self._push(task, self.queue_key(best))
                k.log_decision(best, "wake_preempt", task, f"preemption_goodness {gain}")
                return best
        self._push(task, self.queue_key(cpu))
        return cpu if k.is_idle(cpu) else None

    def _kick_idle_for(self, task: "Task") -> None:
        """With one runqueue: a task put back on it while a CPU it may run on is idle makes that CPU reschedule
        (2.4's __schedule_tail() calls reschedule_idle(prev) for a preempted task that is still runnable)."""
        k = self.kernel
        assert k is not None
        if not self.global_runqueue:
            return
        # Not the CPU it was just taken off: that one is switching to its next task (2.4 calls reschedule_idle(prev)
        # after the switch, when it is no longer idle).
        idle = [c for c in range(len(k.cpus)) if c != task.last_cpu and task.allowed(c) and k.is_idle(c)]
        if idle:
            k.kick(k.rng.choice(idle) if len(idle) > 1 else idle[0])

    def pick_next(self, cpu: int, prev: "Task | None") -> "Task | None":
        if not self.wakeup_preempt:
            return super().pick_next(cpu, prev)
        k = self.kernel
        assert k is not None
        asid = k.record(prev).asid if prev is not None else None
        record, counter, processor = k.record, self.counter, self.processor
        full, penalty = self._full, self.proc_change_penalty
        for _ in range(2):
            best, weight = None, -1
            # goodness() inlined: with one runqueue this loop scans every waiting task (1,600 chat tasks) per pick.
            for t in self.queues[self.queue_key(cpu)]:
                if t.affinity is None or cpu in t.affinity:
                    c = counter.get(t)
                    if c is None:
                        c = counter[t] = full
                    if c == 0:
                        g = 0
                    else:
                        rec = record(t)
                        last = rec.last_cpu if rec.last_cpu is not None else processor.get(t)
                        g = c + 20 - t.priority + (penalty if last == cpu else 0) + (1 if rec.asid == asid else 0)
                    if g > weight:
                        best, weight = t, g
            prev_weight = self.goodness(prev, cpu, asid) if prev is not None else -1
            if max(weight, prev_weight) == 0 and not self._credit_queued(cpu):
                # Every task that could run here has used its slice: 2.4's "recalculate:" step. (With per-CPU
                # queues, global_runqueue=False, a task with credit queued for another CPU is left to balancing,
                # and this CPU goes on with what it has.)
                self._recalculate()
                continue
            break
        if prev is not None and (best is None or weight <= prev_weight):
            return prev
        if best is not None:
            self.dequeue(best)
        return best

    def queue_key(self, cpu: int) -> int:
        return 0 if self.global_runqueue else cpu

    def select_cpu(self, task: "Task", reason: str) -> int:
        home = _home_cpu(self, task, reason)
        if not task.allowed(home):
            home = _first_allowed(self, task)
        k = self.kernel
        assert k is not None
        if self.wake_idle and reason in ("wakeup", "fork") and not k.is_idle(home):
            idle = [c for c in range(len(k.cpus)) if c != home and task.allowed(c) and k.is_idle(c)]
            if idle:
                return k.rng.choice(idle)
        return home

    def tick(self, cpu: int) -> None:
        k = self.kernel
        assert k is not None
        if self.wakeup_preempt:
            cur = k.cpus[cpu].current
            if cur is not None:
                c = self._counter(cur)
                if c > 0:
                    self.counter[cur] = c - 1
                if c <= 1:
                    # update_process_times(): the slice is used up, the CPU reschedules (and if nothing better
                    # waits, schedule() recalculates every counter and the task goes on).
                    k.kick(cpu)
        if k.is_idle(cpu):
            if self._idle_iv[cpu].due(k.now):
                self.balance(cpu, idle=True)
        elif self._busy_iv[cpu].due(k.now):
            self.balance(cpu, idle=False)

    def idle(self, cpu: int) -> None:
        self.balance(cpu, idle=True)

    def balance(self, cpu: int, *, idle: bool) -> None:
        """Pull one waiting task from the busiest other CPU: any waiting task when idle, else only if the busiest
        CPU has at least two more runnable tasks than this one. With one runqueue there is nothing to pull: an idle
        CPU that could run a waiting task reschedules."""
        if self.global_runqueue:
            k = self.kernel
            assert k is not None
            if idle and k.is_idle(cpu) and self.has_waiting(cpu):
                k.kick(cpu)
            return
        mine = self.load(cpu)
        busiest, most = None, 0
        for c, queue in self.queues.items():
            if c == cpu or not queue:
                continue
            load = self.load(c)
            if load > most:
                busiest, most = c, load
        if busiest is None:
            return
        if idle or most - mine >= 2:
            self.pull(busiest, cpu, allow_hot=idle)


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
            slept = st.sleeping + st.io_wait + st.blocked
            self.sleep_avg[rec.task] = self._max_sleep if slept >= st.running else 0
            at_cap += slept >= st.running
        return at_cap

    def queue_key(self, cpu: int) -> int:
        k = self.kernel
        assert k is not None
        return k.cpus[cpu].core

    def select_cpu(self, task: "Task", reason: str) -> int:
        k = self.kernel
        assert k is not None
        home = _home_cpu(self, task, reason)
        if not task.allowed(home):
            home = _first_allowed(self, task)
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
        home = _home_cpu(self, task, reason)
        if not task.allowed(home):
            home = _first_allowed(self, task)
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


SCHEDULERS = {cls.name: cls for cls in (Linux24, Linux25HT, IdleCoreFirst)}


def make_scheduler(name: str, **params: Any) -> RunqueueScheduler:
    """A built-in scheduler by name ('linux24', 'linux25ht', 'idle_core_first') with its parameters (names from
    :class:`~smtlab.os.scheduler.SchedulerParams`; one the scheduler does not use is an error)."""
    try:
        cls = SCHEDULERS[name]
    except KeyError:
        raise ValueError(f"unknown scheduler {name!r}; built in: {', '.join(SCHEDULERS)}") from None
    return cls(**params)
