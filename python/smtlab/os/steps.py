"""The step interpreter: how a task's program of steps runs on its logical CPU. ``Compute(n)`` attaches the step's
source and sets a retire limit so that the machine stops at exactly n instructions (the kernel ends the step at that
limit, at a mark or at the source's end: :meth:`StepInterpreter.step_done`); the other steps (sleep, I/O, block,
send, wake-all, spawn, yield, exit) are carried out between machine runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .._core import Source, TraceError, UsageError
from .tasks import IO, Block, Compute, Exit, Send, Sleep, Spawn, TaskState, WakeAll, Yield, check_step
from .timer import WAKE

if TYPE_CHECKING:
    from .._core import Machine
    from .accounting import Accounting
    from .cpu import CpuState
    from .liveness import Liveness
    from .record import TaskRecord
    from .scheduler import Scheduler
    from .tasks import Channel, Task
    from .timer import Timers

_EXIT = Exit()


def endless(src: Source) -> bool:
    """True for a source that never ends: a generator of unknown length (``gen:...,count=0``), as `smtlab run`
    judges it (a file of unknown length, a text trace or a pipe, ends)."""
    return src.length is None and src.name.startswith("gen:")


def empty(src: Source) -> bool:
    """True for a detached source that has retired nothing and has no record to give (an empty file)."""
    n = src.length
    return n == 0 if n is not None else src.ended()


def require_instructions(src: Source, what: str) -> None:
    """Raises TraceError ``"{what} '{src.name}' has no instructions"`` for an empty source (detached, nothing
    retired): a step on it would end at once as if done, a kernel path would be restarted for ever."""
    if empty(src):
        raise TraceError(f"{what} '{src.name}' has no instructions")


class StepInterpreter:
    """Runs tasks' steps for one kernel. What it asks of the kernel: ``take_off(cpu, task, why)`` (the task leaves
    its CPU), ``unblock(task, channel, by)`` (a blocked task is woken by a message), ``spawn(child, parent)`` (a
    task forks), ``kick(cpu)`` (the CPU reschedules), ``log(cpu, what, task, detail)`` and ``record_of(task)``."""

    __slots__ = ("machine", "accounting", "timers", "liveness", "scheduler", "cycles_per_us", "clock", "record_of",
                 "take_off", "unblock", "spawn", "kick", "log")

    def __init__(self, machine: "Machine", accounting: "Accounting", timers: "Timers", liveness: "Liveness",
                 scheduler: "Scheduler", cycles_per_us: float, *, clock: "Callable[[], int]",
                 record_of: "Callable[[Task], TaskRecord]", take_off: "Callable[[CpuState, Task, str], None]",
                 unblock: "Callable[[Task, Channel, Task], None]", spawn: "Callable[[Task, Task], None]",
                 kick: "Callable[[int], None]", log: "Callable[..., None]") -> None:
        self.machine = machine
        self.accounting = accounting
        self.timers = timers
        self.liveness = liveness
        self.scheduler = scheduler
        self.cycles_per_us = cycles_per_us
        self.clock = clock
        self.record_of = record_of
        self.take_off = take_off
        self.unblock = unblock
        self.spawn = spawn
        self.kick = kick
        self.log = log

    def _set_state(self, rec: "TaskRecord", state: TaskState, bucket: str) -> None:
        self.accounting.set_record_state(rec, state, bucket, self.clock())

    def step_done(self, cpu: "CpuState", task: "Task") -> None:
        """The compute step in progress on ``cpu`` is over: the task goes on with its next steps."""
        rec = self.record_of(task)
        self.accounting.bank(cpu, rec)
        rec.step = None
        rec.remaining = None
        self.advance(cpu, task)

    def resolve_source(self, task: "Task", spec: Any) -> Source:
        """The Source a Compute step names (None: the task's own), opened once per task and continued by later
        steps."""
        if spec is None:
            spec = task.source
            if spec is None:
                raise UsageError(f"task {task.name!r}: a Compute step names no source and the task has none")
        if isinstance(spec, Source):
            return spec
        if not isinstance(spec, str):
            raise TypeError(f"task {task.name!r}: a source is a spec string or a Source, not {type(spec).__name__}")
        if ",page=" in spec:
            # A kpath: call on a file page of its own (page=P): nearly every call names another page, so its source
            # is opened for the step and not kept (the task's sources stay bounded; the instance's records are
            # shared).
            return Source(spec)
        sources = self.record_of(task).sources
        src = sources.get(spec)
        if src is None:
            src = sources[spec] = Source(spec)
        return src

    def advance(self, cpu: "CpuState", task: "Task") -> None:
        """Runs the task's steps from its current position until one that computes (the CPU keeps the task) or one
        that leaves the CPU (sleep, block, exit, yield: the CPU reschedules)."""
        rec = self.record_of(task)
        steps = rec.steps
        assert steps is not None
        while True:
            try:
                step = next(steps)
            except StopIteration:
                step = _EXIT
            check_step(task, step)
            if isinstance(step, Compute):
                if step.instructions == 0:
                    continue
                src = self.resolve_source(task, step.source)
                if step.instructions is None and not step.loop and endless(src):
                    # The step would end at the source's end, which never comes (nor does a mark: no generator emits
                    # one): refused as `smtlab run` and run_traces refuse an endless generator without a count.
                    if step.until_mark is None or step.until_mark is False:
                        raise UsageError(f"task {task.name!r}: Compute() without an instruction count runs to the "
                                         f"end of source '{src.name}', which is endless (count=0): give Compute(n), or "
                                         "Compute(loop=True) to compute for ever")
                    raise UsageError(f"task {task.name!r}: Compute(until_mark={step.until_mark!r}) waits for a mark, "
                                     f"which no generator emits, on source '{src.name}', which is endless (count=0): "
                                     "give Compute(n), or a trace with marks")
                rec.step = step
                rec.remaining = step.instructions
                rec.source = src
                self.start_compute(cpu, task)
                return
            if isinstance(step, Sleep):  # and IO
                cycles = step.to_cycles(self.cycles_per_us)
                self.take_off(cpu, task, "io" if isinstance(step, IO) else "sleep")
                self._set_state(rec, TaskState.SLEEPING, "io_wait" if isinstance(step, IO) else "sleeping")
                self.timers.push(self.clock() + cycles, WAKE, task)
                break
            if isinstance(step, Block):
                ch = step.channel
                if ch.pending > 0:
                    ch.pending -= 1
                    ch.received += 1
                    continue
                ch.waiters.append(task)
                self.take_off(cpu, task, "block")
                self._set_state(rec, TaskState.BLOCKED, "blocked")
                self.liveness.block(task.daemon)
                self.log(cpu.id, "block", task, ch.name)
                break
            if isinstance(step, Send):
                ch = step.channel
                for _ in range(step.count):
                    ch.sent += 1
                    if ch.waiters:
                        ch.received += 1
                        self.unblock(ch.waiters.popleft(), ch, task)
                    else:
                        ch.pending += 1
                continue
            if isinstance(step, WakeAll):
                ch = step.channel
                while ch.waiters:
                    self.unblock(ch.waiters.popleft(), ch, task)
                continue
            if isinstance(step, Spawn):
                child = step.task
                if child.kernel is not None:
                    raise UsageError(f"task {task.name!r}: Spawn of task {child.name!r}, which was spawned already")
                self.spawn(child, task)
                continue
            if isinstance(step, Yield):
                if self.scheduler.has_waiting(cpu.id):
                    self.take_off(cpu, task, "yield")
                    self._set_state(rec, TaskState.RUNNABLE, "runnable")
                    self.scheduler.enqueue(task, "yield")
                    break
                continue
            # Exit
            self.take_off(cpu, task, "exit")
            self._set_state(rec, TaskState.EXITED, "")
            rec.stats.finished = self.clock()
            self.liveness.exited(task.daemon)
            self.log(cpu.id, "exit", task)
            break
        self.kick(cpu.id)

    def start_compute(self, cpu: "CpuState", task: "Task") -> None:
        """Attaches the step's source (if another is attached) and sets the retire limit for what is left."""
        m = self.machine
        rec = self.record_of(task)
        src = rec.source
        if cpu.source is not src:
            if cpu.source is not None:
                self.accounting.bank(cpu, rec)
                m.detach(cpu.id)
            if src.attached:
                raise UsageError(f"task {task.name!r}: source '{src.name}' is attached to another CPU "
                                 "(tasks running at the same time need sources of their own)")
            if src.retired:
                if src.ended():
                    src.restart()
            else:  # nothing retired yet: an empty source would end the step at once with 0 instructions, as if done
                require_instructions(src, f"task {task.name!r}: source")
            m.attach(cpu.id, src, rec.asid)
            cpu.source = src
            cpu.source_ended = False
            cpu.loop_base = -1
            cpu.attach_retired = m.retired(cpu.id)
        elif cpu.source_ended:
            m.restart_trace(cpu.id)
            cpu.source_ended = False
        if rec.remaining is not None:
            m.set_retire_limit(cpu.id, cpu.attach_retired + rec.remaining)
        else:
            m.clear_retire_limit(cpu.id)
