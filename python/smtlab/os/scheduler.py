"""The scheduler interface the Kernel calls, and a base class with runqueues and balancing helpers.

A scheduler decides *where* a runnable task waits and *which* task a logical CPU runs next; the Kernel does the
mechanics (attach/detach, context-switch cost, time slices, accounting). The interface is small:

- ``setup(kernel)``: once, before the first task; topology is in ``kernel.cpus`` / ``kernel.cores``. A scheduler
  keeps one kernel's runqueues, so an instance belongs to that kernel; a second kernel is refused.
- ``enqueue(task, reason) -> cpu | None``: a task became runnable (``reason`` is ``"fork"``, ``"wakeup"``,
  ``"preempt"`` or ``"yield"``); put it on a runqueue and return a logical CPU that should reschedule now (an idle
  CPU, or one running a less important task), or None.
- ``pick_next(cpu, prev) -> task | None``: the CPU reschedules; ``prev`` is the task it runs (None if idle). Return
  ``prev`` to keep it, or take another task off a runqueue (the Kernel then requeues ``prev`` with ``"preempt"``).
- ``has_waiting(cpu) -> bool``: a queued task could run on this CPU (the Kernel preempts at slice expiry only then).
- ``tick(cpu)``: every timer tick on every CPU (passive load balancing lives here).
- ``idle(cpu)``: the CPU just found nothing to run (idle balancing, active migration).
- ``dequeue(task)``: take a queued task off its runqueue (used by the Kernel and by balancing).

Balancing uses two Kernel services: ``kernel.kick(cpu)`` (reschedule that CPU soon) and
``kernel.push_running(src, dst)`` (active migration of a running task to an idle CPU).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Hashable, Iterable

from .._core import UsageError
from .checks import check_number

if TYPE_CHECKING:
    from .kernel import Kernel
    from .tasks import Task


class Scheduler:
    """Base of every scheduler: the interface the Kernel calls (see the module doc)."""

    name = "scheduler"
    #: How the kernel this scheduler stands for wakes a task onto a halted logical CPU from another CPU, which decides
    #: the work the woken CPU does before its switch (smtlab.workloads.base.make_kernel reads it). False, as in Linux
    #: 2.4.19 and 2.5.32: the waker enqueues the task itself (try_to_wake_up) and sends the reschedule IPI
    #: (smp_send_reschedule), whose handler only acknowledges the local APIC (arch/i386/kernel/smp.c,
    #: smp_reschedule_interrupt). True, as in Linux since 3.0 ("sched: Move the second half of ttwu() to the remote
    #: cpu"; 6.1's ttwu_queue_wakelist): the waker queues the task on the target's wake list and sends a
    #: call-function IPI whose handler does the enqueue -- the path recorded as ``kpath:wake_ipi``.
    remote_wakeup = False
    #: The tick rate (HZ) and the time slice of a task at nice 0 in the kernel this scheduler stands for, which
    #: smtlab.workloads.base.make_kernel gives it unless told otherwise (a Kernel built directly takes its own
    #: ``hz`` and ``time_slice_ms``). Chosen for the base class: 1000 and 10 ms, a modern tick and a short slice.
    own_hz = 1000.0
    own_time_slice_ms = 10.0

    def __init__(self) -> None:
        self.kernel: Kernel | None = None

    def setup(self, kernel: "Kernel") -> None:
        """Called once by the Kernel before anything runs."""
        if self.kernel is not None and self.kernel is not kernel:
            raise UsageError(f"{self.name}: this scheduler instance already belongs to another kernel; give every "
                             "kernel its own instance")
        self.kernel = kernel

    def enqueue(self, task: "Task", reason: str) -> int | None:
        """Put a runnable task on a runqueue; return a CPU to reschedule now, or None."""
        raise NotImplementedError

    def dequeue(self, task: "Task") -> None:
        """Take a queued task off its runqueue."""
        raise NotImplementedError

    def pick_next(self, cpu: int, prev: "Task | None") -> "Task | None":
        """The task the CPU runs next: ``prev`` to keep it, a dequeued task, or None to idle."""
        raise NotImplementedError

    def has_waiting(self, cpu: int) -> bool:
        """True if a queued task could run on the CPU."""
        raise NotImplementedError

    def tick(self, cpu: int) -> None:
        """Timer tick on a CPU."""

    def idle(self, cpu: int) -> None:
        """The CPU found nothing to run."""

    def describe(self) -> dict[str, Any]:
        """Name and parameters, for results."""
        return {"scheduler": self.name}


@dataclass(frozen=True)
class SchedulerParams:
    """The one parameter set of the built-in schedulers: every constructor (and ``make_scheduler``,
    ``workloads.base.make_kernel(scheduler_params=...)``) takes these names as keywords, each scheduler with its own
    defaults (``RunqueueScheduler.defaults``) and refusing the ones it does not use (``uses``)."""

    cache_hot_ms: float = 2.5  # a task that left a CPU this recently is cache-hot: busy balancing leaves it
    idle_interval_ms: float = 1.0  # an idle CPU (package) balances this often
    busy_interval_ms: float = 200.0  # a busy CPU (package) balances this often
    wake_idle: bool = True  # Linux24: reschedule_idle(), a woken/forked task whose CPU is busy goes to an idle one
    active_balance: bool = True  # push a running task to a fully idle package (core)
    smt_interval_ms: float = 2.0  # IdleCoreFirst: SMT-domain balancing interval
    smt_imbalance_pct: int = 110  # ... and the imbalance it needs
    package_interval_ms: float = 4.0  # IdleCoreFirst: package-domain balancing interval
    package_imbalance_pct: int = 125  # ... and the imbalance it needs
    smt_gain: float = 0.1  # IdleCoreFirst: capacity of each extra sibling of a core
    # Wakeup preemption (Linux24, Linux25HT). False gives the older model: only a better fixed ``priority`` preempts.
    # Linux24: 2.4.19 kernel/sched.c goodness() / reschedule_idle() / preemption_goodness(); Linux25HT: 2.5.32
    # kernel/sched.c effective_prio() / TASK_PREEMPTS_CURR() (see linux24.py and linux25ht.py for the formulas).
    wakeup_preempt: bool = True
    proc_change_penalty: int = 15  # Linux24: goodness() bonus for the CPU a task last ran on (include/asm-i386/smp.h)
    # Linux24: one runqueue for every CPU, as 2.4.19 has it (kernel/sched.c: ``static LIST_HEAD(runqueue_head)``, which
    # schedule() on any CPU scans for the best goodness()). False: a runqueue per logical CPU with pull balancing, for
    # comparison (under it, a CPU keeps re-running its one queued task while hundreds wait on its sibling's queue:
    # chat's rooms starve).
    global_runqueue: bool = True
    # Linux24 (with wakeup_preempt): where add_to_runqueue() puts a woken or forked task on the run list, which
    # decides the order among equal goodness (schedule() takes the first best from the head). True: the head
    # (``list_add``), as 2.4.19 does, so the task woken last runs first; False: the tail, first come first served, as
    # B. Davda's patch against 2.4.19 proposed (linux-kernel, 13 Aug 2002).
    run_list_head: bool = True
    max_sleep_avg_ms: float = 2000.0  # Linux25HT: MAX_SLEEP_AVG = 2*HZ jiffies = 2 s (2.5.32 kernel/sched.c)
    max_bonus: int = 5  # Linux25HT: MAX_USER_PRIO 40 x PRIO_BONUS_RATIO 25 % / 2 = +-5 (2.5.32 kernel/sched.c)
    # Linux25HT: the sleep_avg, in % of MAX_SLEEP_AVG, of the launcher of tasks spawned from outside any task (the
    # shell that starts the benchmark); such a task inherits CHILD_PENALTY 95 % of it, as a forked child does of its
    # parent (2.5.32 wake_up_forked_process). Chosen 100: an interactive shell sleeps on the terminal far longer than
    # MAX_SLEEP_AVG (2 s) between commands and runs for a few ms, so it sits at the cap. 0 starts them at no bonus
    # (-5), under which windows shorter than MAX_SLEEP_AVG measure the bonus ramp-up.
    launcher_sleep_avg_pct: int = 100


_PARAM_FIELDS = {f.name: f for f in dataclasses.fields(SchedulerParams)}


class RunqueueScheduler(Scheduler):
    """Runqueues keyed by ``queue_key(cpu)`` (a CPU, or a package for a shared runqueue), priority order (lower
    ``priority`` first, FIFO among equals), wakeup preemption, and helpers for load balancing.

    Subclasses define ``queue_key`` and ``select_cpu`` (placement on fork and wakeup), their balancing in ``tick``
    and ``idle``, and which :class:`SchedulerParams` they use (``uses``) with their defaults (``defaults``). The
    constructor takes those names as keywords; the values are also attributes (``self.cache_hot_ms``, ...).
    """

    name = "runqueue"
    uses: ClassVar[tuple[str, ...]] = ("cache_hot_ms",)
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, **params: Any) -> None:
        super().__init__()
        for key, value in params.items():
            if key not in _PARAM_FIELDS:
                raise ValueError(f"{self.name}: unknown scheduler parameter {key!r}; the parameters are "
                                 f"{', '.join(_PARAM_FIELDS)}")
            if key not in self.uses:
                raise ValueError(f"{self.name}: does not use the parameter {key!r}; it takes {', '.join(self.uses)}")
            kind = _PARAM_FIELDS[key].type
            if kind == "bool":
                if not isinstance(value, bool):
                    raise ValueError(f"{self.name}: {key} must be True or False, not {value!r}")
            else:
                # Finite too: an interval of inf ms would fail as a conversion error when the kernel is built.
                check_number(self.name, key, value, kind=kind)
                if kind == "int" and not isinstance(value, int):
                    raise ValueError(f"{self.name}: {key} must be a non-negative {kind}, not {value!r}")
        self.params = SchedulerParams(**{**self.defaults, **params})
        for key in self.uses:
            setattr(self, key, getattr(self.params, key))
        self.queues: dict[Hashable, list[Task]] = {}
        self._where: dict[Task, tuple[Hashable, int]] = {}  # queued task -> (its runqueue, enqueue order)
        self._seq = 0
        self._cache_hot = 0
        self._queue_cpus: dict[Hashable, list[int]] = {}

    # --- to define in subclasses ---------------------------------------------------------------------------------
    def queue_key(self, cpu: int) -> Hashable:
        """The runqueue a CPU takes its tasks from."""
        raise NotImplementedError

    def select_cpu(self, task: "Task", reason: str) -> int:
        """Where a forked or woken task should go (a logical CPU it is allowed on)."""
        raise NotImplementedError

    # --- the interface ---------------------------------------------------------------------------------------------
    def setup(self, kernel: "Kernel") -> None:
        super().setup(kernel)
        self._cache_hot = kernel.ms_to_cycles(self.cache_hot_ms)
        self.queues = {}
        self._queue_cpus = {}
        for c in range(len(kernel.cpus)):
            key = self.queue_key(c)
            self.queues.setdefault(key, [])
            self._queue_cpus.setdefault(key, []).append(c)

    def enqueue(self, task: "Task", reason: str) -> int | None:
        k = self.kernel
        assert k is not None
        if reason in ("preempt", "yield") and task.last_cpu is not None and task.allowed(task.last_cpu):
            cpu = task.last_cpu
        else:
            cpu = self.select_cpu(task, reason)
        self._push(task, self.queue_key(cpu))
        if reason in ("preempt", "yield"):
            return None
        return self.kick_target(task, cpu)

    def kick_target(self, task: "Task", cpu: int) -> int | None:
        """After queueing a woken/forked task for ``cpu``: that CPU if idle, an idle CPU sharing its runqueue, or a
        CPU sharing the runqueue that runs a less important task (preemption); else None."""
        k = self.kernel
        assert k is not None
        if k.is_idle(cpu):
            return cpu
        peers = self._queue_cpus[self.queue_key(cpu)]
        for c in peers:
            if c != cpu and task.allowed(c) and k.is_idle(c):
                return c
        victim, worst = None, self.prio(task)
        for c in [cpu] + [p for p in peers if p != cpu]:
            cur = k.current(c)
            if cur is not None and task.allowed(c) and self.prio(cur) > worst:
                victim, worst = c, self.prio(cur)
        return victim

    def prio(self, task: "Task") -> int:
        """The priority runqueues order by and wakeups compare (lower is more important): the fixed
        ``task.priority`` here; Linux25HT adds its sleep_avg bonus."""
        return task.priority

    def dequeue(self, task: "Task") -> None:
        where = self._where.pop(task, None)
        if where is not None:
            self.queues[where[0]].remove(task)

    def pick_next(self, cpu: int, prev: "Task | None") -> "Task | None":
        best = self._best(self.queues[self.queue_key(cpu)], cpu)
        if prev is not None and (best is None or self.prio(best) > self.prio(prev)):
            return prev
        if best is not None:
            self.dequeue(best)
        return best

    def has_waiting(self, cpu: int) -> bool:
        for t in self.queues[self.queue_key(cpu)]:
            if t.affinity is None or cpu in t.affinity:
                return True
        return False

    # --- helpers ---------------------------------------------------------------------------------------------------
    def _push(self, task: "Task", key: Hashable) -> None:
        self._seq += 1
        self._where[task] = (key, self._seq)
        self.queues[key].append(task)

    def _best(self, queue: list["Task"], cpu: int) -> "Task | None":
        # A queue is in enqueue order, so the first allowed task of the best priority is the oldest of it.
        best, best_prio = None, 0
        for t in queue:
            if t.affinity is None or cpu in t.affinity:
                prio = self.prio(t)
                if best is None or prio < best_prio:
                    best, best_prio = t, prio
        return best

    def cpus_of(self, key: Hashable) -> list[int]:
        """The CPUs that take tasks from runqueue ``key``."""
        return self._queue_cpus[key]

    def nr_running(self, cpus: Iterable[int]) -> int:
        """Tasks running (or being switched in) on these CPUs."""
        k = self.kernel
        assert k is not None
        return sum(1 for c in cpus if not k.is_idle(c))

    def load(self, key: Hashable) -> int:
        """Runnable tasks of a runqueue: queued plus running on its CPUs."""
        return len(self.queues[key]) + self.nr_running(self._queue_cpus[key])

    def cache_hot(self, task: "Task") -> bool:
        """True if the task left a CPU less than cache_hot_ms ago."""
        k = self.kernel
        assert k is not None
        return task.last_cpu is not None and k.now - task.last_ran < self._cache_hot

    def pull(self, src_key: Hashable, dst_cpu: int, *, allow_hot: bool) -> "Task | None":
        """Moves one queued task from runqueue ``src_key`` to ``dst_cpu``'s runqueue (the most recently queued
        allowed one, which is the least cache-hot), kicking ``dst_cpu`` if it is idle. Returns the task or None."""
        k = self.kernel
        assert k is not None
        queue = self.queues[src_key]
        for t in reversed(queue):
            if t.allowed(dst_cpu) and (allow_hot or not self.cache_hot(t)):
                self.dequeue(t)
                self._push(t, self.queue_key(dst_cpu))
                k.log_decision(dst_cpu, "pull", t, f"from runqueue {src_key}")
                if k.is_idle(dst_cpu):
                    k.kick(dst_cpu)
                return t
        return None

    def describe(self) -> dict[str, Any]:
        return {"scheduler": self.name, **{key: getattr(self.params, key) for key in self.uses}}


class Interval:
    """A periodic action's clock: ``due(now)`` is True (and re-arms) once per ``cycles``."""

    __slots__ = ("cycles", "next")

    def __init__(self, cycles: int) -> None:
        self.cycles = max(1, cycles)
        self.next = 0

    def due(self, now: int) -> bool:
        """True if the interval has elapsed since the last time it was due."""
        if now >= self.next:
            self.next = now + self.cycles
            return True
        return False
