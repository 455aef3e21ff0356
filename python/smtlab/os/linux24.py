"""Linux 2.4.19's scheduler (HT-unaware): see :class:`Linux24`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .placement import allowed_home, home_cpu
from .scheduler import Interval, RunqueueScheduler
from .tasks import TaskState

if TYPE_CHECKING:
    from .kernel import Kernel
    from .tasks import Task


class Linux24(RunqueueScheduler):
    """HT-unaware scheduling: a runqueue per logical CPU, balancing that treats siblings as independent CPUs.

    ``idle_interval_ms``: an idle CPU looks for waiting tasks this often (and when it goes idle); ``busy_interval_ms``:
    a busy CPU pulls from a CPU with at least two more runnable tasks this often (cache-hot tasks stay).
    ``global_runqueue`` (default): one runqueue for every CPU, as 2.4.19 has it (kernel/sched.c ``runqueue_head``;
    schedule() on any CPU scans it for the best goodness(), ``can_schedule()`` skipping tasks running elsewhere), so
    an idle CPU finds any waiting task; a preempted task that an idle CPU could run makes it reschedule
    (__schedule_tail()'s ``reschedule_idle(prev)``). With ``global_runqueue=False``: a runqueue per logical CPU and
    the pull balancing below (an approximation kept for comparison: per-CPU queues are what 2.6 has, not 2.4).
    ``wake_idle``: 2.4's ``reschedule_idle()``: a woken or forked task whose CPU is busy goes to an idle logical CPU
    at once. Which one, as 2.4.19 chooses (kernel/sched.c, read from the bticino/linux-2.4.19-rmk7-pxa2-btweb tree,
    whose scheduler and i386 code are the generic 2.4.19): scanning the CPUs in order, the first idle one whose
    sibling is idle too (the i386 block "Check if two siblings are idle in the same physical package", taken when
    the CPUs have two siblings each), else the one idle longest (the oldest ``last_schedule``, here the time the CPU
    went idle).

    ``wakeup_preempt`` (2.4.19 kernel/sched.c; the formulas are restated, not copied): every task has a time-slice
    ``counter`` in ticks, the running task's decremented at every tick (update_process_times; at 0 its CPU
    reschedules). ``goodness(p, cpu, mm)`` = 0 if the counter is used up, else counter + 20 - nice
    (+1 if ``p`` has the address space ``mm``, + ``proc_change_penalty`` if ``p`` last ran on ``cpu``, or for a task
    that has not run yet, if ``cpu`` is its parent's CPU at fork, do_fork()'s p->processor); ``nice`` is
    ``task.priority``. A CPU reschedules to the task of the highest goodness, its running task included, and among
    equals to the one nearest the head of 2.4.19's run list: add_to_runqueue() puts a woken or forked task at the
    head (``list_add``), a running or preempted task keeps its place (it stays on the list), sched_yield() moves the
    caller to the tail (``move_last_runqueue``), and schedule() scans from the head taking only a strictly better
    goodness, so among equals the task woken last runs first (``list_order``; 2.4.19 kernel/sched.c, and the same
    lines quoted by B. Davda's patch against it, "Re: Linux 2.4.20-pre2", linux-kernel, 13 Aug 2002, which proposed
    the tail instead). ``run_list_head=False`` puts woken and forked tasks at the tail instead: first come, first
    served among equals (for comparison). When the best goodness is 0,
    every task's counter is recalculated as counter/2 + the full slice, so a task that slept keeps credit.
    reschedule_idle(): a woken or forked task that finds no idle CPU goes to the CPU whose running task ``curr``
    gives the largest ``preemption_goodness = goodness(p) - goodness(curr)`` (both for that CPU and curr's address
    space), which reschedules if that is > 0. On fork the child gets half its parent's counter (rounded up) and the
    parent keeps half. The counter counts the model's ticks and its full value is the kernel's time slice in ticks:
    at this scheduler's own HZ and slice (``own_hz``, ``own_time_slice_ms``, make_kernel's defaults) that is 2.4's
    NICE_TO_TICKS(0) = 6 ticks of HZ=100; a Kernel with another HZ or slice keeps the slice's length in time.
    NICE_TO_TICKS's dependence on nice is not modelled.
    """

    name = "linux24"
    # 2.4.19 on i386: HZ=100 (include/asm-i386/param.h), and a task at nice 0 gets NICE_TO_TICKS(0) =
    # TICK_SCALE(20) + 1 = 20/4 + 1 = 6 ticks (kernel/sched.c, TICK_SCALE(x) = x >> 2 for HZ < 200): 60 ms.
    own_hz = 100.0
    own_time_slice_ms = 60.0
    uses = ("cache_hot_ms", "idle_interval_ms", "busy_interval_ms", "wake_idle", "wakeup_preempt",
            "proc_change_penalty", "global_runqueue", "run_list_head")
    defaults = {"busy_interval_ms": 200.0}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._idle_iv: list[Interval] = []
        self._busy_iv: list[Interval] = []
        self.counter: dict["Task", int] = {}  # the scheduler's own per-task state: time-slice counter in ticks
        # p->processor of a task that has not run yet: 2.4's do_fork() gives the child its parent's CPU, and
        # goodness() counts that CPU as the one it last ran on.
        self.processor: dict["Task", int] = {}
        # Each task's place on 2.4.19's run list (wakeup_preempt): larger is nearer the head. A woken or forked task
        # gets the next head stamp, a yielding one the next tail stamp (negative); a preempted task keeps its own.
        self.list_order: dict["Task", int] = {}
        self._head = 0
        self._tail = 0
        self._full = 1
        # What 2.4.19's own schedule() would walk, counted but not charged as kernel code (the model's switch is the
        # recorded path whatever the list holds: docs/study.md, chat's "Rooms"): ``walk_counts``.
        self.walks = 0  # run-list walks of schedule() (wakeup_preempt)
        self.walked = 0  # run-list entries those walks visit
        self.recalculations = 0  # "recalculate:" passes
        self.recalculated = 0  # tasks those passes visit (for_each_task)

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
        self.recalculations += 1
        for task in list(self.counter):
            if task.state is TaskState.EXITED:
                del self.counter[task]
                self.processor.pop(task, None)
                self.list_order.pop(task, None)
            else:
                self.counter[task] = self.counter[task] // 2 + full
                self.recalculated += 1

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
        if reason == "yield":
            self._tail -= 1
            self.list_order[task] = self._tail  # move_last_runqueue()
        elif reason != "preempt" or task not in self.list_order:
            # add_to_runqueue(): the head (run_list_head, 2.4.19), else the tail.
            if self.run_list_head:
                self._head += 1
                self.list_order[task] = self._head
            else:
                self._tail -= 1
                self.list_order[task] = self._tail
        if reason in ("preempt", "yield"):
            super().enqueue(task, reason)
            self._kick_idle_for(task)
            return None
        if reason == "fork":
            self.processor[task] = home_cpu(self, task, reason)
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
            k.kick(self.idle_choice(idle))

    def idle_choice(self, idle: list[int]) -> int:
        """2.4.19 reschedule_idle()'s idle CPU among ``idle`` (ascending): the first whose sibling is idle too (two
        siblings per package), else the one that went idle first (class doc)."""
        k = self.kernel
        assert k is not None
        cpus = k.cpus
        for c in idle:
            sib = cpus[c].siblings
            if len(sib) == 1 and k.is_idle(sib[0]):
                return c
        return min(idle, key=lambda c: (cpus[c].since, c))

    def pick_next(self, cpu: int, prev: "Task | None") -> "Task | None":
        if not self.wakeup_preempt:
            return super().pick_next(cpu, prev)
        k = self.kernel
        assert k is not None
        asid = k.record(prev).asid if prev is not None else None
        record, counter, processor, order = k.record, self.counter, self.processor, self.list_order
        full, penalty = self._full, self.proc_change_penalty
        queue = self.queues[self.queue_key(cpu)]
        # 2.4.19's run list holds the waiting tasks and the running ones, this CPU's ``prev`` (the CPU's current task)
        # and those on other CPUs, switching in too: schedule() visits them, and can_schedule() skips the latter.
        running = sum(1 for c in k.cpus if c.current is not None or c.incoming is not None)
        for _ in range(2):
            self.walks += 1
            self.walked += len(queue) + running
            # 2.4.19's schedule(): the highest goodness, and among equals the task nearest the list's head (the
            # largest list_order; class doc).
            best, weight, place = None, -1, 0
            # goodness() inlined: with one runqueue this loop scans every waiting task (1,600 chat tasks) per pick.
            for t in queue:
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
                    if g > weight or (g == weight and order.get(t, 0) > place):
                        best, weight, place = t, g, order.get(t, 0)
            prev_weight = self.goodness(prev, cpu, asid) if prev is not None else -1
            if max(weight, prev_weight) == 0 and not self._credit_queued(cpu):
                # Every task that could run here has used its slice: 2.4's "recalculate:" step. (With per-CPU
                # queues, global_runqueue=False, a task with credit queued for another CPU is left to balancing,
                # and this CPU goes on with what it has.)
                self._recalculate()
                continue
            break
        # The running task is on the list too, at its own place: it stays if no queued task is better, or as good
        # and nearer the head.
        if prev is not None and (best is None or (weight, place) < (prev_weight, order.get(prev, 0))):
            return prev
        if best is not None:
            self.dequeue(best)
        return best

    def queue_key(self, cpu: int) -> int:
        return 0 if self.global_runqueue else cpu

    def walk_counts(self) -> dict[str, int]:
        """What 2.4.19's schedule() would have walked so far (with ``wakeup_preempt``; not charged as kernel code):
        ``walks`` (one per pick, two for a pick that recalculates, as schedule() walks the list again after its
        "recalculate:" step), ``walked`` (run-list entries those walks visit: the waiting tasks and the running ones,
        see :meth:`pick_next`), ``recalculations`` and ``recalculated`` (the tasks whose counters those passes
        recomputed: for_each_task visits every task)."""
        return {"walks": self.walks, "walked": self.walked, "recalculations": self.recalculations,
                "recalculated": self.recalculated}

    def select_cpu(self, task: "Task", reason: str) -> int:
        home = allowed_home(self, task, reason)
        k = self.kernel
        assert k is not None
        if self.wake_idle and reason in ("wakeup", "fork") and not k.is_idle(home):
            idle = [c for c in range(len(k.cpus)) if c != home and task.allowed(c) and k.is_idle(c)]
            if idle:
                return self.idle_choice(idle)
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
