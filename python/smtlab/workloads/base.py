"""What every workload model shares: the simulated system (netburst preset, HT off/on, a Linux-like kernel) and the
statistics the study explains its tables with."""

from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable

from .. import load_config
from ..os import Kernel, make_scheduler
from . import kpaths
from .kpaths import real_paths_on, switch_path, wake_path

#: Scheduler names of the two kernels of the reference study.
KERNELS = {"2.4.19": "linux24", "2.5.32": "linux25ht"}

#: User-mode code of the micro-benchmarks' loops (LMbench's timing loop, the shell's own work): a small integer
#: program over a few KiB.
USER_SPEC = ("gen:mix,load=0.25,store=0.10,branch=0.15,imul=0.01,dep=4,footprint=64k,hot=0.9,hot_kb=8,"
             "predictability=0.95,body=1024,count=0,seed={seed}")


def user_spec(seed: int = 1) -> str:
    """A user-mode integer program (see USER_SPEC) with its own seed."""
    return USER_SPEC.format(seed=seed)


#: The recorded timer interrupt (docs/tracing.md, an excursion path: one tick's kernel records). Every logical CPU
#: runs the same instance (seed 0) per tick, for the reason kpaths.REAL_SWITCH_SPEC gives.
REAL_TIMER_SPEC = "kpath:timer,seed=0"


def timer_path() -> str | None:
    """The timer interrupt's kernel path when real kernel paths are on (else None: the kernel charges
    ``os.timer_cycles`` idle cycles per tick instead)."""
    if real_paths_on():
        from .._core import Source

        if Source(REAL_TIMER_SPEC).length:
            return REAL_TIMER_SPEC
    return None


def make_kernel(ht: bool, scheduler: str, *, cores: int = 1, seed: int = 0, preset: str = "netburst",
                hz: float | None = None, time_slice_ms: float | None = None, log: bool = False,
                overrides: dict[str, Any] | None = None, scheduler_params: dict[str, Any] | None = None,
                charge_os_costs: bool = True) -> Kernel:
    """A kernel on the preset with HT off (``core.threads=1``) or on (2), ``cores`` packages, and the context-switch
    path run as kernel code (kpaths.switch_path: the recorded Linux switch when real kernel paths are on, else
    kpaths.SWITCH_SPEC, 1500 instructions) so that a switch contends for the core like the
    real schedule() + switch_to. ``hz`` and ``time_slice_ms`` default to the scheduler's kernel's own
    (``Scheduler.own_hz``, ``own_time_slice_ms``): linux24 HZ=100 and 60 ms (2.4.19), linux25ht HZ=1000 and 151 ms
    (2.5.32), idle_core_first 1000 and 10 ms (chosen). ``scheduler_params``:
    keywords of the scheduler (smtlab.os.SchedulerParams names, e.g. ``{"wake_idle": False}``).
    ``charge_os_costs`` (default on for every study experiment): the preset's OS costs (smtlab.os.Kernel): waking a
    halted logical CPU (``os.wake_cycles``), the TLB flush of an address-space switch (untagged TLBs), and the timer
    interrupt at every tick, run as the recorded ``kpath:timer`` when real kernel paths are on (:func:`timer_path`),
    else ``os.timer_cycles``; and a halted CPU that a task on another CPU sends an IPI runs its handler as kernel
    code. With a scheduler whose kernel hands the task over through the target's wake list
    (``Scheduler.remote_wakeup``: idle_core_first, today's Linux) that is the recorded call-function IPI
    (``kpath:wake_ipi``, kpaths.wake_path) when real kernel paths are on, else nothing (after_wake's estimate). The
    2.4.19 and 2.5.32 kernels (linux24, linux25ht) enqueue from the waker and send the reschedule IPI, whose handler
    only acknowledges the APIC; the halted CPU runs it after its HLT exit (the recorded ``kpath:resched_ipi`` when
    real kernel paths are on, else the estimate, trap + 300 instructions: kpaths.resched_wake_path) and then picks a
    task, if the waker's CPU has not taken it meanwhile (smtlab/os/halt.py)."""
    cfg = load_config(preset, {"core.threads": 2 if ht else 1, "system.packages": cores, **(overrides or {})})
    sched = make_scheduler(scheduler, **(scheduler_params or {}))
    hz = sched.own_hz if hz is None else hz
    time_slice_ms = sched.own_time_slice_ms if time_slice_ms is None else time_slice_ms
    kernel_path, switch_instructions = switch_path()  # the recorded switch when real kernel paths are on
    wake_spec, wake_instructions = None, None
    if charge_os_costs:
        if sched.remote_wakeup:
            wake_spec = wake_path()
        else:
            wake_spec, wake_instructions = kpaths.resched_wake_path()
    return Kernel(cfg, sched, hz=hz, time_slice_ms=time_slice_ms, kernel_path=kernel_path,
                  switch_instructions=switch_instructions, seed=seed, log=log, charge_os_costs=charge_os_costs,
                  timer_path=timer_path() if charge_os_costs else None,
                  wake_path=wake_spec, wake_instructions=wake_instructions)


_STACK_GROUPS = {
    "base": ("base",),
    "memory": ("mem_l1", "mem_l2", "mem_llc", "mem_dram"),
    "branch": ("branch_mispredict",),
    "frontend": ("frontend",),
    "execute": ("execute",),
    "partition": ("rob_partition", "iq_partition", "lq_partition", "sq_partition"),
    "full": ("rob_full", "iq_full", "lq_full", "sq_full", "regs"),  # regs: a physical register file is full
    "drain": ("drain",),
    "sibling": ("sibling_retire",),
    "pause": ("pause",),
}


#: How long an adaptive warm-up or window goes on past its minimum without progress toward its criterion, in
#: simulated ms (:func:`run_until`). Chosen from the criteria's progress measured at 0.25 ms steps
#: (bench/progress_gaps.py; docs/study.md, "Stalled warm-ups"): under service in turn (Linux25HT) the longest gap is
#: 5.5 ms (tbench, 120 clients, HT off: from the last of 240 tasks' first dispatch to the first reply read) and chat's
#: criterion moves at every step; under 2.4.19's head-first order progress comes only at ticks, about 10 ms apart at
#: best (HZ=100: a pair that wakes each other keeps the CPU until the ticks use up its counters). 8.5 ms lies between
#: the two: at least 1.5 x the longest gap of a convoy, and seen (in the workloads' 1 ms steps) at 9 ms, before the
#: first tick could move a head-first criterion (tests/python/test_study_stalled_warmups.py measures the gap again).
STALL_MS = 8.5


def started(k: Kernel, tasks: Iterable[Any]) -> int:
    """How many of ``tasks`` have been on a CPU (the progress of a start-up convoy, run_until)."""
    return sum(1 for t in tasks if k.record(t).stats.started is not None)


def run_until(k: Kernel, met: Callable[[], bool], progress: Callable[[], Hashable], cap: int, step: int,
              stall_ms: float | None = STALL_MS) -> str:
    """Runs ``k`` in steps of ``step`` cycles until ``met()``, until ``progress()`` (a value that changes whenever
    the run gets closer to the criterion) has not changed for ``stall_ms`` simulated ms (None: never), or until the
    next step would pass cycle ``cap``. The stall clock starts at the call. Returns why it stopped: ``"met"``,
    ``"stalled"`` (the scheduler is not working through a start-up but serving the tasks it holds, so waiting longer
    measures that same state) or ``"bound"``. Raises ValueError for a ``stall_ms`` that is not a positive number."""
    if stall_ms is not None and not (isinstance(stall_ms, (int, float)) and 0 < stall_ms < float("inf")):
        raise ValueError(f"stall_ms must be a positive number of simulated ms or None, got {stall_ms!r}")
    stall = k.ms_to_cycles(stall_ms) if stall_ms is not None else None
    last, since = progress(), k.now
    while True:
        if met():
            return "met"
        if stall is not None and k.now - since >= stall:
            return "stalled"
        if k.now + step > cap:
            return "bound"
        k.run(until=k.now + step)
        now = progress()
        if now != last:
            last, since = now, k.now


def progress_gaps(k: Kernel, met: Callable[[], bool], progress: Callable[[], Hashable], cap: int,
                  step: int) -> dict[str, Any]:
    """Runs ``k`` in steps of ``step`` cycles until ``met()`` or cycle ``cap``, as :func:`run_until` without a stall,
    and measures how ``progress()`` moved: ``longest_ms`` (the longest time it stayed the same, in simulated ms, at
    the step's resolution), ``longest_from_ms`` / ``longest_to_ms`` (where that gap lay, from the start of the run)
    and ``met_ms`` (when the criterion was met; None at the bound). STALL_MS is chosen from these gaps."""
    last, since = progress(), k.now
    longest, span = 0, (k.now, k.now)
    while not met() and k.now + step <= cap:
        k.run(until=k.now + step)
        now = progress()
        if now != last:
            if k.now - since > longest:
                longest, span = k.now - since, (since, k.now)
            last, since = now, k.now
    if k.now - since > longest:  # the gap still open at the end counts too
        longest, span = k.now - since, (since, k.now)
    per_ms = k.ms_to_cycles(1.0)
    return {"longest_ms": longest / per_ms, "longest_from_ms": span[0] / per_ms, "longest_to_ms": span[1] / per_ms,
            "met_ms": k.now / per_ms if met() else None}


def counters(k: Kernel) -> dict[str, float]:
    """A flat snapshot of the machine's cumulative counters (instructions, cycles with work, CPI-stack cycles by
    group, partition drains, L1D / L2 misses, branch mispredicts and pattern-table tag misses) and the kernel's busy
    / idle CPU cycles, for differences between two points of a run (Machine.reset_stats would also reset the retire
    counts the kernel's accounting relies on)."""
    k.flush_accounting()
    st = k.machine.stats()
    out: dict[str, float] = {g: 0.0 for g in _STACK_GROUPS}
    out.update(instructions=0, work_cycles=0, cycles=st["cycles"], mispredicts=0, pht_tag_misses=0)
    for c in st["logical_cpus"]:
        out["instructions"] += c["instructions"]
        out["mispredicts"] += c["mispredicts"]
        out["pht_tag_misses"] += c["fetched_pht_tag_misses"]
        out["work_cycles"] += c["cycles"]
        for g, names in _STACK_GROUPS.items():
            out[g] += sum(c["cpi_stack_cycles"].get(n, 0) for n in names)
    cores = st["cores"]
    out["partition_drains"] = sum(x["partition_drains"] for x in cores)
    out["l1d_misses"] = sum(x["l1d"]["misses"] for x in cores)
    out["l2_misses"] = sum(x["l2"]["misses"] for x in cores)
    out["busy"] = sum(c.busy_cycles + c.switch_cycles for c in k.cpus)
    out["idle"] = sum(c.idle_cycles for c in k.cpus)
    out["kernel_instructions"] = sum(c.kernel_instructions for c in k.cpus)
    out["code_instructions"] = k.code_instructions
    out["generated_instructions"] = k.generated_instructions
    out["occupancy"] = {q: [c["occupancy"][q]["mean"] for c in st["logical_cpus"] if c["cycles"] > 0]
                        for q in ("rob", "iq", "lq", "uop_queue")}  # type: ignore[assignment]
    return out


def machine_summary(k: Kernel, since: dict[str, float] | None = None) -> dict[str, Any]:
    """Statistics of the machine behind ``k`` from the snapshot ``since`` (default: the start) to now: instructions,
    cycles with work, CPI and its stack summed over logical CPUs (cycles per instruction by cause, grouped),
    partition drains, L1D / L2 misses, branch mispredicts and branches predicted statically for want of a pattern
    entry of their logical CPU in a full set (core.branch.pht_thread_tagged) per kilo-instruction, the fraction of
    logical-CPU time that was busy, the mean ROB / IQ / load-queue occupancy per logical CPU over the whole run
    (means cannot be differenced), and the instructions that came from generated streams (``gen:`` sources: the
    estimates that stand for work without a recording) with their share of the instructions credited in the
    interval (Kernel.generated_instructions; a source's instructions are credited when it comes off its CPU or its
    task's are banked)."""
    now = counters(k)
    base = since or {}
    d = {key: now[key] - base.get(key, 0.0) for key in now if key != "occupancy"}
    instr = d["instructions"] or 1.0
    busy, idle = d["busy"], d["idle"]
    occ = now["occupancy"]  # type: ignore[index]
    return {
        "instructions": int(d["instructions"]),
        "work_cycles": int(d["work_cycles"]),
        "cpi": d["work_cycles"] / instr,
        "stack": {g: d[g] / instr for g in _STACK_GROUPS},
        "partition_drains": int(d["partition_drains"]),
        "l1d_mpki": 1000.0 * d["l1d_misses"] / instr,
        "l2_mpki": 1000.0 * d["l2_misses"] / instr,
        "branch_mpki": 1000.0 * d["mispredicts"] / instr,
        "pht_tag_mpki": 1000.0 * d["pht_tag_misses"] / instr,
        "busy_fraction": busy / (busy + idle) if busy + idle else 0.0,
        "kernel_instructions": int(d["kernel_instructions"]),
        "code_instructions": int(d["code_instructions"]),
        "generated_instructions": int(d["generated_instructions"]),
        "generated_share": d["generated_instructions"] / d["code_instructions"] if d["code_instructions"] else 0.0,
        "occupancy": {q: (sum(v) / len(v) if v else 0.0) for q, v in occ.items()},  # type: ignore[union-attr]
    }
