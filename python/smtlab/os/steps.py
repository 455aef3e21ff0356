"""The step interpreter: how a task's program of steps runs on its logical CPU. ``Compute(n)`` attaches the step's
source and sets a retire limit so that the machine stops at exactly n instructions (the kernel's ``_on_event`` ends
the step at that limit, at a mark or at the source's end); the other steps (sleep, I/O, block, send, wake-all, spawn,
yield, exit) are carried out between machine runs.

The functions here are :class:`~smtlab.os.kernel.Kernel` methods written in their own file (kernel.py binds them
into the class, ``self`` is the kernel); they are not an API of their own. Call them as the kernel's methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._core import Source, TraceError, UsageError
from .tasks import IO, Block, Compute, Exit, Send, Sleep, Spawn, TaskState, WakeAll, Yield, check_step
from .timer import WAKE

if TYPE_CHECKING:
    from .cpu import CpuState
    from .kernel import Kernel
    from .tasks import Task

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


def step_done(self: "Kernel", cpu: CpuState, task: Task) -> None:
    self._bank(cpu, task)
    rec = task._record
    rec.step = None
    rec.remaining = None
    self._advance(cpu, task)


def resolve_source(self: "Kernel", task: Task, spec: Any) -> Source:
    if spec is None:
        spec = task.source
        if spec is None:
            raise UsageError(f"task {task.name!r}: a Compute step names no source and the task has none")
    if isinstance(spec, Source):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"task {task.name!r}: a source is a spec string or a Source, not {type(spec).__name__}")
    if ",page=" in spec:
        # A kpath: call on a file page of its own (page=P): nearly every call names another page, so its source is
        # opened for the step and not kept (the task's sources stay bounded; the instance's records are shared).
        return Source(spec)
    sources = task._record.sources
    src = sources.get(spec)
    if src is None:
        src = sources[spec] = Source(spec)
    return src


def advance(self: "Kernel", cpu: CpuState, task: Task) -> None:
    """Runs the task's steps from its current position until one that computes (the CPU keeps the task) or one
    that leaves the CPU (sleep, block, exit, yield: the CPU reschedules)."""
    rec = task._record
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
            src = self._resolve_source(task, step.source)
            if step.instructions is None and not step.loop and endless(src):
                # The step would end at the source's end, which never comes (nor does a mark: no generator emits
                # one): refused as `smtlab run` and run_traces refuse an endless generator without a count.
                if step.until_mark is None or step.until_mark is False:
                    raise UsageError(f"task {task.name!r}: Compute() without an instruction count runs to the end of "
                                     f"source '{src.name}', which is endless (count=0): give Compute(n), or "
                                     "Compute(loop=True) to compute for ever")
                raise UsageError(f"task {task.name!r}: Compute(until_mark={step.until_mark!r}) waits for a mark, "
                                 f"which no generator emits, on source '{src.name}', which is endless (count=0): "
                                 "give Compute(n), or a trace with marks")
            rec.step = step
            rec.remaining = step.instructions
            rec.source = src
            self._start_compute(cpu, task)
            return
        if isinstance(step, Sleep):  # and IO
            cycles = step.to_cycles(self.cycles_per_us)
            self._take_off(cpu, task, "io" if isinstance(step, IO) else "sleep")
            self._set_task_state(task, TaskState.SLEEPING, "io_wait" if isinstance(step, IO) else "sleeping")
            self._push_timer(self.now + cycles, WAKE, task)
            break
        if isinstance(step, Block):
            ch = step.channel
            if ch.pending > 0:
                ch.pending -= 1
                ch.received += 1
                continue
            ch.waiters.append(task)
            self._take_off(cpu, task, "block")
            self._set_task_state(task, TaskState.BLOCKED, "blocked")
            self._blocked += 1
            if not task.daemon:
                self._blocked_live += 1
            self.log_decision(cpu.id, "block", task, ch.name)
            break
        if isinstance(step, Send):
            ch = step.channel
            for _ in range(step.count):
                ch.sent += 1
                if ch.waiters:
                    ch.received += 1
                    self._unblock(ch.waiters.popleft(), ch, task)
                else:
                    ch.pending += 1
            continue
        if isinstance(step, WakeAll):
            ch = step.channel
            while ch.waiters:
                self._unblock(ch.waiters.popleft(), ch, task)
            continue
        if isinstance(step, Spawn):
            child = step.task
            if child._record is not None:
                raise UsageError(f"task {task.name!r}: Spawn of task {child.name!r}, which was spawned already")
            self._admit(child)
            self._start_task(child, task)
            continue
        if isinstance(step, Yield):
            if self.scheduler.has_waiting(cpu.id):
                self._take_off(cpu, task, "yield")
                self._set_task_state(task, TaskState.RUNNABLE, "runnable")
                self.scheduler.enqueue(task, "yield")
                break
            continue
        # Exit
        self._take_off(cpu, task, "exit")
        self._set_task_state(task, TaskState.EXITED, "")
        rec.stats.finished = self.now
        self._live_all -= 1
        if not task.daemon:
            self._live -= 1
        self.log_decision(cpu.id, "exit", task)
        break
    self.kick(cpu.id)


def start_compute(self: "Kernel", cpu: CpuState, task: Task) -> None:
    """Attaches the step's source (if another is attached) and sets the retire limit for what is left."""
    m = self.machine
    rec = task._record
    src = rec.source
    if cpu.source is not src:
        if cpu.source is not None:
            self._bank(cpu, task)
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
