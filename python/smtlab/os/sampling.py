"""Sampled Compute steps: the kernel's long computations fast-forwarded by functional warming between detailed
windows (``Kernel(sample=...)``; docs/sampling.md, "The OS layer").

Time-based sampling, as Sniper does it (Carlson et al., ISPASS 2013): the run alternates a detailed stretch (a warm-up,
then a measurement window) with a functional gap. In the gap, simulated time advances and every running task's source
executes, through the caches, TLBs, branch predictor and prefetchers of its CPU (``Machine.warm``), the instructions
it retired per cycle in the window just measured, so the threads of a core keep their co-run rates and the shared
tables hold their mix. One window is taken per ``period`` cycles.

A gap is taken only while the machine is in a state a window measured and nothing else can happen:

- every logical CPU either runs a task's Compute step on that task's own source (not a kernel path, a timer
  interrupt, a switch or a wake-up), or is idle with nothing attached;
- the set of what runs where is the one the last window measured: a context switch, a halt, a wake-up, a step that
  ends or blocks, anything that changes what a CPU runs, starts a new detailed warm-up before the next gap (the
  window's rates describe the old mix, and the new task's state is cold);
- the gap ends before the kernel's next timed event (tick, wake-up, spawn), so every scheduling decision is taken in
  detail, at its exact cycle;
- a step keeps a detailed tail: the gap ends while each step has at least a warm-up's worth of instructions left, so
  it ends (and its source ends) in detail, at an exact count.

A step whose end the kernel cannot foresee runs in detail: ``Compute(until_mark=...)``, a step on a source of unknown
length that is not an endless generator, and any step given ``Compute(..., sample=False)``.

Instructions executed in gaps count for the tasks (``task.stats.instructions``, steps end at exact counts); the
machine's own statistics (``Machine.stats``, ``cpu_stats``) count only the detailed stretches.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

from .._core import UsageError
from .steps import endless
from .tasks import Compute

if TYPE_CHECKING:
    from .._core import Machine
    from .accounting import Accounting
    from .cpu import CpuState
    from .record import TaskRecord
    from .tasks import Task
    from .wake_ipi import WakeIpi

#: The defaults, in cycles. A window of 20 k cycles holds about 10-40 k instructions per thread at the IPCs of the
#: presets (the size of a SMARTS window, Wunderlich et al., ISCA 2003: 1 k instructions is the unit, 10 k what the
#: machine-level sampler uses); 40 k cycles of detailed warm-up refills the ROB, queues and L1s many times over (chosen:
#: twice the window, as the machine-level sampler's calibration finds warm-ups of 1-2 windows on the bench programs);
#: a period of 1 M cycles (chosen: 6 % of it detailed) takes one or two windows per tick of a 1000 Hz kernel at 1.6 GHz
#: (1.6 M cycles), so a 10 ms time slice holds about 16.
DEFAULTS: dict[str, int] = {"period": 1_000_000, "window": 20_000, "warmup": 40_000}


def options(sample: Any) -> dict[str, int] | None:
    """The sampling options from ``Kernel(sample=...)``: None or False (off), True (the defaults) or a dict of
    ``period``, ``window``, ``warmup`` (cycles). Raises UsageError naming the key for anything else."""
    if sample is None or sample is False:
        return None
    if sample is True:
        return dict(DEFAULTS)
    if not isinstance(sample, dict):
        raise UsageError(f"Kernel: sample must be True, False, None or a dict of period, window, warmup (cycles), "
                         f"not {type(sample).__name__}")
    out = dict(DEFAULTS)
    for key, value in sample.items():
        if key not in DEFAULTS:
            raise UsageError(f"Kernel: sample has no key {key!r} (known: period, window, warmup; all in cycles)")
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise UsageError(f"Kernel: sample[{key!r}] must be a positive int of cycles, not {value!r}")
        out[key] = value
    if out["period"] < 2 * (out["window"] + out["warmup"]):
        raise UsageError(f"Kernel: sample['period'] ({out['period']}) must be at least twice window + warmup "
                         f"({out['window']} + {out['warmup']}): shorter periods leave no gap worth taking")
    return out


class ComputeSampler:
    """The phases of sampled Compute steps for one kernel: ``warmup`` (detailed, not measured), ``measure`` (the
    window: each CPU's retired instructions over its cycles give its rate) and ``gap`` (functional, while the
    conditions of the module doc hold). The kernel asks it, before each machine run, for a shorter bound
    (:meth:`bound`) or to take a gap instead (:meth:`gap`)."""

    def __init__(self, machine: "Machine", cpus: "list[CpuState]", accounting: "Accounting",
                 record_of: "Callable[[Task], TaskRecord]", wake_ipi: "WakeIpi | None", now: int,
                 opts: dict[str, int]) -> None:
        self.machine = machine
        self.cpus = cpus
        self.accounting = accounting
        self.record_of = record_of
        self.wake_ipi = wake_ipi
        self.period = opts["period"]
        self.window = opts["window"]
        self.warmup = opts["warmup"]
        self.state = "warmup"
        self.until = now + self.warmup  # end of the detailed phase in progress
        self.window_start = 0  # cycle at which the last window began
        self.next_window = 0  # in a gap: the cycle at which the next warm-up starts
        self.signature: tuple[Any, ...] = self._signature()
        self.start_retired: list[int] = []
        self.ipc: list[float] = []
        # What happened, for results and checks.
        self.windows = 0
        self.warmups = 1
        self.functional_cycles = 0
        self.functional_instructions = 0
        self.gaps: list[tuple[int, int]] = []  # (first cycle, end cycle) of each gap

    # --- the state the windows describe ----------------------------------------------------------------------------
    def _signature(self) -> tuple[Any, ...]:
        ipi = self.wake_ipi
        return tuple(
            (id(c.current), id(c.source), id(c.incoming), c.state, c.halted, c.waking, c.kpath_active, c.irq_kpath,
             c.irq_token, bool(ipi is not None and ipi.active[c.id]))
            for c in self.cpus)

    def _restart(self, now: int) -> None:
        self.state = "warmup"
        self.until = now + self.warmup
        self.warmups += 1

    def observe(self, now: int) -> None:
        """Moves the phases on to cycle ``now``, after the kernel handled everything due by then."""
        sig = self._signature()
        if sig != self.signature:
            self.signature = sig
            self._restart(now)
            return
        if self.state == "warmup":
            if now >= self.until:
                m = self.machine
                self.state = "measure"
                self.window_start = now
                self.until = now + self.window
                self.start_retired = [m.retired(c.id) for c in self.cpus]
        elif self.state == "measure":
            if now >= self.until:
                m = self.machine
                cycles = now - self.window_start
                self.ipc = [(m.retired(c.id) - r0) / cycles for c, r0 in zip(self.cpus, self.start_retired)]
                self.windows += 1
                self.state = "gap"
                self.next_window = self.window_start - self.warmup + self.period
        elif now >= self.next_window:
            self._restart(now)

    def bound(self, bound: int) -> int:
        """The bound of the next detailed run: the end of the phase in progress, if sooner."""
        if self.state != "gap" and self.until < bound:
            return self.until
        return bound

    # --- the gap ---------------------------------------------------------------------------------------------------
    def _lane_limit(self, cpu: "CpuState", ipc: float) -> float | None:
        """The most cycles this CPU may spend in the gap (math.inf: no limit of its own), or None if it may not take
        one at all."""
        task = cpu.current
        if task is None:
            return math.inf if cpu.source is None and cpu.incoming is None and cpu.state == "idle" else None
        rec = self.record_of(task)
        step = rec.step
        src = rec.source
        if (not isinstance(step, Compute) or not step.sample or step.until_mark not in (None, False)
                or cpu.source is not src or src is None or cpu.state != "busy" or cpu.source_ended):
            return None
        if ipc <= 0:
            return math.inf  # retired nothing in its window: it waits the gap out
        tail = ipc * self.warmup  # instructions kept for the detailed warm-up before the step's end
        left = math.inf
        if rec.remaining is not None:
            self.accounting.bank(cpu, rec)
            left = rec.remaining
        if not endless(src):
            n = src.length
            if n is None:
                return None  # a pipe or a text trace: its end cannot be foreseen
            left = min(left, n - (src.retired - src.restarts * n))
        if left == math.inf:
            return math.inf
        return max(0.0, (left - tail) / ipc)

    def gap(self, now: int, bound: int) -> bool:
        """Takes a functional gap from ``now`` up to ``bound`` (the kernel's next timed event) if the module doc's
        conditions hold and it is worth it (at least one window long). Returns True if it did."""
        if self.state != "gap":
            return False
        end = min(bound, self.next_window)
        limit = float(end - now)
        for cpu, ipc in zip(self.cpus, self.ipc):
            lane = self._lane_limit(cpu, ipc)
            if lane is None:
                return False
            limit = min(limit, lane)
        cycles = int(limit)
        if cycles < self.window:
            return False
        m = self.machine
        lanes = []
        running = [c for c in self.cpus if c.current is not None]
        for cpu in running:
            rec = self.record_of(cpu.current)
            self.accounting.bank(cpu, rec)
            m.detach(cpu.id)
            lanes.append((cpu.id, rec.source, self.ipc[cpu.id], rec.asid))
        done = m.warm(lanes, cycles)
        for cpu, out in zip(running, done):
            rec = self.record_of(cpu.current)
            n = out["instructions"]
            m.attach(cpu.id, rec.source, rec.asid)
            cpu.attach_retired = m.retired(cpu.id)
            self.accounting.credit(cpu, rec, n)
            if rec.remaining is not None:
                m.set_retire_limit(cpu.id, cpu.attach_retired + rec.remaining)
            else:
                m.clear_retire_limit(cpu.id)
            self.functional_instructions += n
        self.functional_cycles += cycles
        self.gaps.append((now, now + cycles))
        return True

    def stats(self) -> dict[str, Any]:
        """What sampling did: windows measured, warm-ups begun (one per change of what runs where, and one per
        period), gaps taken, and the cycles and instructions run functionally."""
        return {"period": self.period, "window": self.window, "warmup": self.warmup, "windows": self.windows,
                "warmups": self.warmups, "gaps": len(self.gaps), "functional_cycles": self.functional_cycles,
                "functional_instructions": self.functional_instructions}
