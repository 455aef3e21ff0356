"""The Kernel: runs tasks on a Machine's logical CPUs under a scheduler.

Mechanics (the scheduler only decides placement and order, see scheduler.py):

- **Time.** Simulated cycles. A timer tick every ``tick_cycles`` (``system.freq_ghz`` x 1e9 / ``hz``) calls the
  scheduler's ``tick`` on every CPU, in an order drawn at random (seeded) each tick: real CPUs' timer interrupts are
  staggered, and which idle CPU balances first decides where an HT-unaware kernel puts a task.
- **Time slice.** At a tick, a task that has run ``time_slice`` cycles since it was switched in is preempted if the
  scheduler has another task waiting for its CPU.
- **Compute.** The task's source is attached to the CPU; ``Compute(n)`` sets a retire limit so the machine stops at
  exactly n instructions; a preempted task's source is detached (in-flight work squashed and refetched later, so no
  instruction is lost or retired twice) and its remaining count is kept.
- **Context switch.** ``switch_cycles`` idle cycles, or ``switch_instructions`` of ``kernel_path`` run as kernel
  code (switch.py). Switching back to the task that was running costs nothing.
- **Sampling** (``sample=...``): long Compute steps fast-forwarded between detailed windows (sampling.py).
- **Idle.** A CPU with nothing to run is halted (HLT): its partitioned queues go to its sibling.
- **Migration.** Schedulers move waiting tasks between runqueues, and may push a running task to an idle CPU
  (``push_running``); a task switched in on another CPU than last time counts a migration.
- **OS costs** (``charge_os_costs=True``; off by default). The machine's config gives them (``os.*``,
  ``mem.tlb_tagged``, with sources in the presets): switching a task in on a halted CPU first costs ``os.wake_cycles``
  (IPI delivery + HLT exit); dispatching a task of another address space than the CPU last ran flushes the previous
  one's TLB entries (``Machine.flush_tlb``; nothing with tagged TLBs), so the refills cost page walks; each timer tick
  takes ``os.timer_cycles`` from every CPU running a task (its in-flight work squashed and refetched, as by an
  interrupt), or, with ``timer_path`` (a trace spec such as a recorded ``kpath:timer``), runs ``timer_instructions``
  of that kernel code on the CPU in address space 0, so the interrupt contends for the core like the switch path does.
  These cycles count as ``switch`` time. With ``wake_path`` (a recorded ``kpath:wake_ipi``), a halted CPU that another
  CPU woke a task onto runs that path (the wake-up IPI's handler, wake_ipi.py) after the HLT exit and before the
  switch path.
- **Who takes a woken task** (with ``os.wake_cycles``): handed to the halted CPU at the wake-up, or picked by it
  only once it has left HLT, as the scheduler's kernel did (halt.py).
- **Topology.** ``kernel.cpus[i].package`` / ``.core`` / ``.siblings`` come from the machine (``Machine.cpus``,
  numbered as Linux does, see docs/model.md); ``kernel.cores`` and ``kernel.packages`` list the CPUs of each.

Code. The Kernel is the one entry point: construction, services for schedulers, spawning, the run loop, the
machine's and the timer's events, and the scheduling decision. It composes parts that each own their state and talk
to the kernel through the callbacks it hands them: Accounting (accounting.py: where each cycle and instruction goes),
Timers (timer.py: the timed events and the tick), Liveness (liveness.py: live and blocked tasks, the deadlock check),
StepInterpreter (steps.py: a task's program of steps on its CPU), ContextSwitch (switch.py: a switch's cost and the
dispatch), TimerInterrupts (timer_interrupt.py), HaltWake (halt.py: a halted CPU's wake-up and who takes the woken
task), WakeIpi (wake_ipi.py) and ComputeSampler (sampling.py). None of them imports the kernel.

Per-task state lives in the kernel's own records (record.py; pids count from 1 per kernel); a Task only links to its
record. Results (``task_frame`` and the other frames, ``*_records`` as dicts) are results.py's functions bound here.
"""

from __future__ import annotations

import random
import time
from typing import Any, Iterable

from .._core import Config, EventKind, Machine, TraceError, UsageError
from . import checks, results, sampling, steps, timer
from .accounting import Accounting
from .cpu import KERNEL_ASID, CpuState
from .halt import HaltWake
from .liveness import Liveness
from .record import TaskRecord
from .scheduler import Scheduler
from .switch import ContextSwitch
from .timer import Timers
from .timer_interrupt import TimerInterrupts
from .wake_ipi import WakeIpi
from .tasks import Task, TaskState, steps_of

_RETIRE_LIMIT = EventKind.RETIRE_LIMIT
_MARK = EventKind.MARK
_SOURCE_ENDED = EventKind.SOURCE_ENDED
_CYCLE_BOUND = EventKind.CYCLE_BOUND

# The kinds of the kernel's timed events (timer.py says what each is).
_TICK, _WAKE, _SWITCH_DONE, _SPAWN, _WOKEN, _IRQ_DONE = (timer.TICK, timer.WAKE, timer.SWITCH_DONE, timer.SPAWN,
                                                        timer.WOKEN, timer.IRQ_DONE)


def _record_of(task: Task) -> TaskRecord:
    """The kernel's record of a task it runs (the link the kernel set at spawn)."""
    return task._record


class Kernel:
    """Drives a Machine with tasks and a scheduler.

    ``machine``: a Machine, or a Config to build one. ``scheduler``: a Scheduler instance (built-in: policies.py).
    ``hz`` or ``tick_cycles``: the timer tick. ``time_slice_ms`` or ``time_slice_cycles``: the slice.
    ``switch_cycles``: context-switch cost as idle cycles; or ``kernel_path`` (a trace spec) and
    ``switch_instructions``: the cost as kernel code run on the CPU. ``spawn_cpu``: the CPU that tasks spawned from
    outside any task come from (their "parent" CPU for fork placement). ``seed``: tick-order randomness.
    ``log``: keep a log of scheduling decisions (decision_frame). ``stall_ms``: when every task that is not a
    daemon has waited on a channel this long while only daemons ran, nothing is going to wake it: run() raises
    DeadlockError (see :meth:`run`). ``charge_os_costs``: charge the machine's OS costs (wake-up, TLB flush on an
    address-space switch, timer interrupt; see the module doc). ``timer_path`` (with ``charge_os_costs``): the timer
    interrupt runs this trace (``timer_instructions`` of it per tick, default its whole length) instead of
    ``os.timer_cycles`` idle cycles. ``wake_path`` (with ``charge_os_costs``): a halted CPU woken by a task on
    another CPU runs this trace (``wake_instructions`` of it, default its whole length) as the wake-up IPI's
    handler (wake_ipi.py). ``sample``: run long Compute steps sampled (True, or a dict of ``period``, ``window``,
    ``warmup`` in cycles): functional gaps between detailed windows, never across a context switch, a halt or a
    timed event (sampling.py; :meth:`sampling` says what it did).
    """

    def __init__(
        self,
        machine: Machine | Config,
        scheduler: Scheduler,
        *,
        hz: float = 1000.0,
        tick_cycles: int | None = None,
        time_slice_ms: float = 10.0,
        time_slice_cycles: int | None = None,
        switch_cycles: int = 2000,
        kernel_path: str | None = None,
        switch_instructions: int = 1000,
        spawn_cpu: int = 0,
        seed: int = 0,
        log: bool = False,
        stall_ms: float = 20.0,
        charge_os_costs: bool = False,
        timer_path: str | None = None,
        timer_instructions: int | None = None,
        wake_path: str | None = None,
        wake_instructions: int | None = None,
        sample: bool | dict[str, int] | None = None,
    ) -> None:
        if isinstance(machine, Config):
            machine = Machine(machine)
        if not isinstance(machine, Machine):
            raise TypeError(f"Kernel: machine must be a Machine or a Config, not {type(machine).__name__}")
        if not isinstance(scheduler, Scheduler):
            raise TypeError(f"Kernel: scheduler must be a Scheduler, not {type(scheduler).__name__}")
        checks.check_machine_free(machine)
        if getattr(scheduler, "kernel", None) is not None:
            raise UsageError(f"Kernel: the {scheduler.name} scheduler instance already belongs to another kernel; "
                             "a scheduler keeps that kernel's runqueues, so give every kernel its own instance")
        checks.check_number("Kernel", "stall_ms", stall_ms, positive=True, unit=" of milliseconds")
        for name, value in (("switch_cycles", switch_cycles), ("switch_instructions", switch_instructions)):
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"Kernel: {name} must be a non-negative int, not {value!r}")
        self.machine = machine
        self.scheduler = scheduler
        self.freq_ghz: float = machine.config.freq_ghz
        self.cycles_per_us = self.freq_ghz * 1000.0
        # Times and rates are refused here, naming the argument the caller gave (not as a conversion error in run).
        self.tick_cycles = checks.tick_cycles(self.freq_ghz, hz, tick_cycles)
        self.time_slice = checks.time_slice(self.freq_ghz, time_slice_ms, time_slice_cycles)
        if not 0 <= spawn_cpu < machine.logical_cpus:
            raise UsageError(f"Kernel: spawn_cpu {spawn_cpu} does not exist (CPUs 0..{machine.logical_cpus - 1})")
        self.spawn_cpu = spawn_cpu
        self.rng = random.Random(seed)
        self.cpus = [CpuState(info) for info in machine.cpus]
        ncores = 1 + max(c.core for c in self.cpus)
        self.cores: list[list[int]] = [[c.id for c in self.cpus if c.core == k] for k in range(ncores)]
        npackages = 1 + max(c.package for c in self.cpus)
        self.packages: list[list[int]] = [[c.id for c in self.cpus if c.package == p] for p in range(npackages)]
        # OS costs (context switch, wake-up, TLB flush), read once from the machine's config.
        if not isinstance(charge_os_costs, bool):
            raise TypeError(f"Kernel: charge_os_costs must be a bool, not {charge_os_costs!r}")
        self.charge_os_costs = charge_os_costs
        cfg = machine.config
        self.wake_cycles: int = int(cfg.get("os.wake_cycles")) if charge_os_costs else 0
        # With an HLT exit to pay, a halted CPU picks its task when awake unless the kernel hands it the task at the
        # wake-up (module doc, "Who takes a woken task").
        self.pick_when_awake: bool = bool(self.wake_cycles) and not getattr(scheduler, "remote_wakeup", False)
        self.timer_cycles: int = int(cfg.get("os.timer_cycles")) if charge_os_costs else 0
        self.flush_tlbs: bool = charge_os_costs and not cfg.get("mem.tlb_tagged")
        self.now = machine.now
        self.accounting = Accounting(machine)
        self.timers = Timers(self.now, self.tick_cycles)
        self.liveness = Liveness(self.ms_to_cycles(stall_ms), self.cycles_per_us * 1000.0)
        self.irq = TimerInterrupts(machine, self.accounting, self.timers, len(self.cpus), self.timer_cycles,
                                   timer_path if charge_os_costs else None, timer_instructions, _record_of,
                                   self._irq_resume, self._clock)
        self.timer_instructions = self.irq.instructions
        # The wake-up IPI to a halted CPU as kernel code (wake_ipi.py).
        self.wake_ipi = (WakeIpi(machine, self.cpus, self.accounting, wake_path, wake_instructions, KERNEL_ASID,
                                 lambda cpu: self.timers.push(self.now, _WOKEN, cpu))
                         if wake_path is not None and charge_os_costs else None)
        self.switch = ContextSwitch(machine, self.cpus, self.accounting, self.timers, self.wake_ipi,
                                    switch_cycles=switch_cycles, kernel_path=kernel_path,
                                    switch_instructions=switch_instructions, wake_cycles=self.wake_cycles,
                                    flush_tlbs=self.flush_tlbs, record_of=_record_of, dispatched=self._dispatched,
                                    log=self.log_decision, clock=self._clock)
        self.switch_cycles = switch_cycles
        self.switch_instructions = self.switch.switch_instructions
        self.halt = HaltWake(machine, self.accounting, self.timers, self.wake_ipi, self.switch.switch_in,
                             self._schedule, self.log_decision, self._clock)
        self.steps = steps.StepInterpreter(machine, self.accounting, self.timers, self.liveness, scheduler,
                                           self.cycles_per_us, clock=self._clock, record_of=_record_of,
                                           take_off=self._take_off, unblock=self._unblock, spawn=self._spawn_child,
                                           kick=self.kick, log=self.log_decision)
        for c in self.cpus:
            c.since = self.now
            if machine.busy(c.id):
                raise UsageError(f"Kernel: CPU {c.id} already has a source attached; give the kernel an idle machine")
        self.tasks: list[Task] = []
        self.records: list[TaskRecord] = []  # one per task, in spawn order (pid = index + 1)
        self.log_enabled = log
        self.decisions: list[tuple[int, int, str, str, str]] = []
        self.segments: list[tuple[int, int, int, int, str]] = []  # (cpu, pid, start, end, how it ended)
        self.host_run_seconds = 0.0  # host time inside Machine.run
        self.host_seconds = 0.0  # host time inside Kernel.run
        self.machine_runs = 0
        self.cpu_snapshot: list[dict[str, Any]] = []
        self._resched: list[int] = []
        self._next_asid = 1
        self._tick_order = list(range(len(self.cpus)))
        opts = sampling.options(sample)
        self.sampler = (sampling.ComputeSampler(machine, self.cpus, self.accounting, _record_of, self.wake_ipi,
                                                self.now, opts) if opts is not None else None)
        scheduler.setup(self)
        checks.claim_machine(machine)
        self.failure: str | None = None  # the exception that stopped a run (check_usable)

    # --- counters ----------------------------------------------------------------------------------------------------
    @property
    def code_instructions(self) -> int:
        """Instructions retired from attached sources (tasks' and kernel paths'), credited when they come off their
        CPU or are banked (:meth:`flush_accounting`)."""
        return self.accounting.code_instructions

    @property
    def generated_instructions(self) -> int:
        """Those of :attr:`code_instructions` that came from generated streams (``gen:`` specs)."""
        return self.accounting.generated_instructions

    def flush_accounting(self) -> None:
        """Brings every CPU's and task's time accounting (and the tasks' instruction counts) up to the machine's
        current cycle. run() does it when it returns; call it to read consistent counters between runs."""
        self.now = self.machine.now
        self.accounting.flush(self.now, self.cpus, self.records, _record_of)
        # Kept so that the results can be read after the machine is closed.
        self.cpu_snapshot = [self.machine.cpu_stats(c.id) for c in self.cpus]

    def came_from_halt(self, task: Task) -> bool:
        """True if ``task``, running now, was switched onto a CPU that was halted (HLT) rather than running another
        task: a wake-up that sent it there sent its IPI to an idle CPU, not into a running one (kpaths.after_wake)."""
        cpu = self.record(task).cpu
        return cpu is not None and self.cpus[cpu].current is task and self.cpus[cpu].from_halt

    def _clock(self) -> int:
        return self.now

    def _set_task_state(self, task: Task, state: TaskState, bucket: str) -> None:
        self.accounting.set_record_state(task._record, state, bucket, self.now)

    def _set_cpu_state(self, cpu: CpuState, state: str) -> None:
        self.accounting.set_cpu_state(cpu, state, self.now)

    # --- services for schedulers -------------------------------------------------------------------------------------
    def ms_to_cycles(self, ms: float) -> int:
        """Milliseconds of simulated time as cycles (system.freq_ghz); a negative time is 0 cycles, a NaN or an
        infinity a ValueError."""
        checks.check_finite("Kernel.ms_to_cycles", "ms", ms)
        return max(0, round(ms * 1000.0 * self.cycles_per_us))

    def is_idle(self, cpu: int) -> bool:
        """True if the CPU runs nothing, is switching nothing in, and has no reschedule pending."""
        c = self.cpus[cpu]
        return c.current is None and c.incoming is None and not c.need_resched

    def current(self, cpu: int) -> Task | None:
        """The task running on (or being switched in on) the CPU."""
        c = self.cpus[cpu]
        return c.current if c.current is not None else c.incoming

    def kick(self, cpu: int) -> None:
        """Asks the CPU to reschedule at the end of the current event (idle CPU: pick a task; busy: maybe preempt)."""
        c = self.cpus[cpu]
        if not c.need_resched:
            c.need_resched = True
            self._resched.append(cpu)

    def push_running(self, src: int, dst: int) -> bool:
        """Active migration: takes the task running on ``src`` off it and switches it in on the idle CPU ``dst``.
        Returns False (and does nothing) if ``src`` runs no task or ``dst`` is not idle."""
        s, d = self.cpus[src], self.cpus[dst]
        task = s.current
        if task is None or not self.is_idle(dst) or not task.allowed(dst):
            return False
        self._take_off(s, task, "migrated")
        task._record.stats.preemptions += 1
        self.log_decision(src, "active_migrate", task, f"to CPU {dst}")
        self._set_task_state(task, TaskState.RUNNABLE, "runnable")
        self.switch.start(d, task)
        self.kick(src)
        return True

    def log_decision(self, cpu: int, what: str, task: Task | None, detail: str = "") -> None:
        """Appends to the decision log (when the kernel was made with log=True)."""
        if self.log_enabled:
            self.decisions.append((self.now, cpu, what, task.name if task is not None else "", detail))

    # --- tasks -------------------------------------------------------------------------------------------------------
    def spawn(self, task: Task, *, at: int | None = None) -> Task:
        """Adds a task from outside: runnable at cycle ``at`` (default now), placed as a fork from ``spawn_cpu``."""
        if not isinstance(task, Task):
            raise TypeError(f"Kernel.spawn: expected a Task, not {type(task).__name__}")
        checks.check_usable(self.failure, "Kernel.spawn")
        if task._record is not None:
            raise UsageError(f"Kernel.spawn: task {task.name!r} was spawned already")
        if at is not None:
            checks.check_number("Kernel.spawn", "at", at, unit=" (a cycle)")
        self._admit(task)
        if at is not None and at > self.now:
            self.liveness.pending_spawns += 1
            self.timers.push(int(at), _SPAWN, task)
        else:
            self._start_task(task, None)
        return task

    def record(self, task: Task) -> TaskRecord:
        """The kernel's record of a task it runs (read it; the kernel writes it)."""
        rec = task._record
        if rec is None or rec.kernel is not self:
            raise UsageError(f"Kernel.record: task {task.name!r} was not spawned on this kernel")
        return rec

    def spawn_all(self, tasks: Iterable[Task]) -> list[Task]:
        """Spawns several tasks now, in order."""
        return [self.spawn(t) for t in tasks]

    def _admit(self, task: Task) -> None:
        for c in task.affinity or ():
            if not 0 <= c < len(self.cpus):
                raise UsageError(f"task {task.name!r}: affinity names CPU {c}, which does not exist "
                                 f"(CPUs 0..{len(self.cpus) - 1})")
        if task.affinity is not None and not task.affinity:
            raise UsageError(f"task {task.name!r}: empty affinity")
        asid = task.asid
        if asid is None:
            asid = self._next_asid
            self._next_asid += 1
        rec = TaskRecord(task, self, len(self.records) + 1, asid)
        task._record = rec
        self.tasks.append(task)
        self.records.append(rec)

    def _spawn_child(self, child: Task, parent: Task) -> None:
        self._admit(child)
        self._start_task(child, parent)

    def _start_task(self, task: Task, parent: Task | None) -> None:
        rec = task._record
        rec.parent = parent
        rec.stats.created = self.now
        rec.since = self.now
        rec.bucket = "runnable"
        rec.steps = steps_of(task)
        rec.state = TaskState.RUNNABLE
        self.liveness.started(task.daemon)
        self.log_decision(parent.cpu if parent is not None and parent.cpu is not None else self.spawn_cpu, "fork",
                          task)
        target = self.scheduler.enqueue(task, "fork")
        if target is not None:
            self.kick(target)

    # --- the run loop ------------------------------------------------------------------------------------------------
    def run(self, until: int | None = None) -> "Kernel":
        """Runs until every task that is not a daemon has exited (or until cycle ``until``). Raises DeadlockError if
        every live task waits on a channel (nobody is left to send), or if every live task that is not a daemon has
        waited on a channel for ``stall_ms`` while only daemons ran (a daemon may compute forever; with ``until``
        too). A run that raised leaves the kernel refusing further runs and spawns (checks.check_usable says why)."""
        checks.check_usable(self.failure, "Kernel.run")
        if until is not None:
            checks.check_until(until, self.now)
        m = self.machine
        timers = self.timers
        live = self.liveness
        sampler = self.sampler
        perf = time.perf_counter
        start = perf()
        try:
            self._process_resched()
            # With a bound, daemons keep the machine going until it; without one, the non-daemon tasks do.
            while live.running(until is not None):
                bound = timers.next_cycle()
                if until is not None:
                    if self.now >= until:
                        break
                    if until < bound:
                        bound = until
                t0 = perf()
                if sampler is not None:
                    sampler.observe(self.now)
                    if sampler.gap(self.now, bound):
                        events = None
                    else:
                        events = m.run(sampler.bound(bound))
                else:
                    events = m.run(bound)
                self.host_run_seconds += perf() - t0
                self.machine_runs += 1
                self.now = now = m.now
                if events is not None and events[0].kind != _CYCLE_BOUND:
                    # A source's end is noted first: a step that ends by its retire limit or a mark in the same
                    # cycle may be followed by a compute on the same source, which must then start it again.
                    for e in events:
                        if e.kind == _SOURCE_ENDED:
                            self.cpus[e.cpu].source_ended = True
                    for e in events:
                        self._on_event(e)
                for kind, obj in timers.due(now):
                    self._on_timer(kind, obj)
                if self._resched:
                    self._process_resched()
        except BaseException as e:
            self.failure = f"{type(e).__name__}: {e}"
            raise
        finally:
            self.flush_accounting()
            self.host_seconds += perf() - start
        return self

    def sampling(self) -> dict[str, Any] | None:
        """What sampled Compute steps did (``Kernel(sample=...)``; sampling.py): windows, warm-ups, gaps, and the
        cycles and instructions run functionally. None when the kernel does not sample."""
        return self.sampler.stats() if self.sampler is not None else None

    # --- timed events ------------------------------------------------------------------------------------------------
    def _on_timer(self, kind: int, obj: Any) -> None:
        if kind == _TICK:
            self._tick()
        elif kind == _WAKE:
            self._wake(obj)
        elif kind == _SWITCH_DONE:
            self.switch.dispatch(obj)
        elif kind == _SPAWN:
            self.liveness.pending_spawns -= 1
            self._start_task(obj, None)
        elif kind == _WOKEN:
            self.halt.woken(obj)
        elif kind == _IRQ_DONE:
            self.irq.done(*obj)

    def _tick(self) -> None:
        """The periodic tick: a task past its time slice is preempted if its CPU has another task waiting, every
        CPU's scheduler tick runs (in an order drawn at random: real CPUs' timer interrupts are staggered), the
        timer interrupt is charged, and the deadlock check runs."""
        self.timers.tick_done()
        now = self.now
        sched = self.scheduler
        order = self._tick_order
        self.rng.shuffle(order)
        for i in order:
            c = self.cpus[i]
            if c.current is not None and now - c.slice_start >= self.time_slice and sched.has_waiting(i):
                self.kick(i)
            sched.tick(i)
        if self.timer_cycles:
            for c in self.cpus:
                self.irq.charge(c)
        self.liveness.check(now, self.records)

    def _irq_resume(self, cpu: CpuState) -> None:
        """A timer interrupt is over: the interrupted task's step goes on, and a reschedule asked for meanwhile is
        taken."""
        task = cpu.current
        if task is not None and task._record.step is not None:
            self.steps.start_compute(cpu, task)
        if cpu.need_resched and cpu.id not in self._resched:
            self._resched.append(cpu.id)

    def _on_event(self, e: Any) -> None:
        m = self.machine
        cpu = self.cpus[e.cpu]
        kind = e.kind
        if self.wake_ipi is not None and self.wake_ipi.active[cpu.id]:
            self.wake_ipi.on_event(cpu, kind)
            return
        if cpu.irq_kpath:
            if kind == _RETIRE_LIMIT:
                self.irq.end_path(cpu)
                self.irq.done(cpu, cpu.irq_token)
            elif kind == _SOURCE_ENDED:
                m.restart_trace(cpu.id)
            return
        if cpu.kpath_active:
            if kind == _RETIRE_LIMIT:
                self.switch.dispatch(cpu)
            elif kind == _SOURCE_ENDED:
                m.restart_trace(cpu.id)
            return
        task = cpu.current
        if task is None:
            return
        rec = task._record
        step = rec.step
        if step is None:
            return
        if kind == _RETIRE_LIMIT:
            remaining = rec.remaining
            if remaining is not None and m.retired(cpu.id) - cpu.attach_retired >= remaining:
                self.steps.step_done(cpu, task)
        elif kind == _MARK:
            want = step.until_mark
            if want is True or (want is not None and want is not False and e.mark_id == want):
                self.steps.step_done(cpu, task)
        elif kind == _SOURCE_ENDED:
            if not cpu.source_ended:
                return  # a later compute step already started the source again
            if step.loop:
                cpu.source_ended = False
                retired = m.retired(cpu.id)
                if retired == cpu.loop_base:  # nothing retired since the last restart: an empty source
                    raise TraceError(f"task {task.name!r}: source '{rec.source.name}' has no instructions to loop")
                cpu.loop_base = retired
                m.restart_trace(cpu.id)
            else:
                self.steps.step_done(cpu, task)

    def _take_off(self, cpu: CpuState, task: Task, why: str) -> None:
        """Detaches the task's source from its CPU and ends its run segment; the CPU is then free."""
        if cpu.irq_kpath:
            self.irq.end_path(cpu)  # the task leaves during a timer interrupt (its own source is off already)
        if cpu.source is not None:
            self.accounting.bank(cpu, task._record)
            self.machine.detach(cpu.id)
            cpu.source = None
        rec = task._record
        self.segments.append((cpu.id, rec.pid, cpu.segment_start, self.now, why))
        cpu.irq_token = 0  # a charged timer interrupt in progress ends with the task's time on the CPU
        cpu.current = None
        rec.cpu = None
        rec.last_ran = self.now
        self._set_cpu_state(cpu, "idle")

    def _unblock(self, task: Task, ch: Any, by: Task) -> None:
        self.liveness.unblock(task.daemon)
        self.log_decision(by.cpu if by.cpu is not None else -1, "wake", task, f"{ch.name} by {by.name}")
        target = self._wake(task)
        if self.wake_ipi is not None:
            self.wake_ipi.woken(by.cpu, target, task)

    def _wake(self, task: Task) -> int | None:
        self._set_task_state(task, TaskState.RUNNABLE, "runnable")
        target = self.scheduler.enqueue(task, "wakeup")
        if target is not None:
            self.kick(target)
        return target

    # --- switching ---------------------------------------------------------------------------------------------------
    def _process_resched(self) -> None:
        queue = self._resched
        while queue:
            cpu = self.cpus[queue.pop(0)]
            if cpu.need_resched:
                self._schedule(cpu)

    def _schedule(self, cpu: CpuState) -> None:
        if cpu.incoming is not None:
            return  # mid-switch: need_resched stays set and the dispatch asks again once the task is in
        if cpu.irq_token:
            return  # in a timer interrupt: need_resched stays set and the interrupt's end asks again
        if cpu.waking:
            return  # leaving HLT: need_resched stays set and HaltWake.woken picks
        if cpu.halted and self.pick_when_awake and cpu.current is None and self.halt.start(cpu):
            return  # the pick waits until the CPU has left HLT (halt.py)
        cpu.need_resched = False
        prev = cpu.current
        nxt = self.scheduler.pick_next(cpu.id, prev)
        if nxt is prev:
            if prev is not None:
                cpu.slice_start = self.now
            else:
                # Left with nothing (its task blocked, slept or exited): the machine idles a CPU without a source,
                # which is HLT, so the next switch-in pays the wake-up (os.wake_cycles).
                cpu.halted = True
            return
        if prev is not None:
            self._take_off(cpu, prev, "preempted")
            prev._record.stats.preemptions += 1
            self._set_task_state(prev, TaskState.RUNNABLE, "runnable")
            self.scheduler.enqueue(prev, "preempt")
            self.log_decision(cpu.id, "preempt", prev, f"for {nxt.name}" if nxt is not None else "")
        if nxt is None:
            self.machine.halt(cpu.id)
            cpu.halted = True
            self.log_decision(cpu.id, "idle", None)
            self.scheduler.idle(cpu.id)
            return
        self.switch.start(cpu, nxt)

    def _dispatched(self, cpu: CpuState, task: Task) -> None:
        """A switch is over (switch.py): the task's steps run on."""
        if task._record.step is not None:
            self.steps.start_compute(cpu, task)
        else:
            self.steps.advance(cpu, task)
        if cpu.need_resched and cpu.id not in self._resched:
            self._resched.append(cpu.id)  # a reschedule was asked for during the switch

    # --- results (results.py: functions over the kernel, bound as its methods) --------------------------------------
    task_records = results.task_records
    cpu_records = results.cpu_records
    timeline_records = results.timeline_records
    decision_records = results.decision_records
    task_frame = results.task_frame
    cpu_frame = results.cpu_frame
    timeline_frame = results.timeline_frame
    decision_frame = results.decision_frame
    overhead = results.overhead
