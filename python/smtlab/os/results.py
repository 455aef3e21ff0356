"""Results of a Kernel run, as functions over the kernel: per task, per logical CPU, the run timeline and the decision
log, as plain records or pandas DataFrames (pandas is imported only when a frame is asked for). They read the
kernel's public state (``tasks``, ``records``, ``cpus``, ``segments``, ``decisions``) and change nothing; the
Kernel binds them as its methods of the same names (``k.task_frame()`` is ``results.task_frame(k)``)."""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas

    from .kernel import Kernel


def _segments(k: "Kernel") -> list[tuple[int, int, int, int, str]]:
    """Every run segment (cpu, pid, start, end, why), the ones still running cut at ``k.now``."""
    segs = list(k.segments)
    for c in k.cpus:
        if c.current is not None:
            segs.append((c.id, c.current.pid, c.segment_start, k.now, "running"))
    return segs


def _merged(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(intervals):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _overlap(start: int, end: int, merged: list[tuple[int, int]], starts: list[int]) -> int:
    """Cycles of [start, end) covered by the sorted, disjoint ``merged`` intervals (``starts``: their starts)."""
    total = 0
    i = max(0, bisect.bisect_right(starts, start) - 1)
    while i < len(merged) and merged[i][0] < end:
        a, b = merged[i]
        lo, hi = max(a, start), min(b, end)
        if hi > lo:
            total += hi - lo
        i += 1
    return total


def placement(k: "Kernel") -> dict[int, dict[str, Any]]:
    """Where each task ran, by pid: the logical CPUs and packages it ran on (the machine's topology: Machine.cpus),
    and ``doubled_up``: the cycles
    it ran while some task ran on a sibling logical CPU of the same core (the two shared one core's pipeline)."""
    segs = _segments(k)
    busy: dict[int, list[tuple[int, int]]] = {c.id: [] for c in k.cpus}
    for cpu, _pid, start, end, _why in segs:
        busy[cpu].append((start, end))
    sibling_busy: dict[int, tuple[list[tuple[int, int]], list[int]]] = {}
    for c in k.cpus:
        merged = _merged([iv for s in c.siblings for iv in busy[s]])
        sibling_busy[c.id] = (merged, [a for a, _ in merged])
    out: dict[int, dict[str, Any]] = {r.pid: {"cpus": set(), "packages": set(), "doubled_up": 0} for r in k.records}
    for cpu, pid, start, end, _why in segs:
        p = out[pid]
        p["cpus"].add(cpu)
        p["packages"].add(k.cpus[cpu].package)
        merged, starts = sibling_busy[cpu]
        p["doubled_up"] += _overlap(start, end, merged, starts)
    return out


# The columns of the frames, in order: a kernel that ran no task (or no segment, no decision) gives an empty frame
# with these columns, so that selecting them works as after any run. A frame of records is built from the records'
# own keys (a key added to the records is never dropped); tests/python/test_os_bad_input.py checks that the two agree.
TASK_COLUMNS = ("pid", "name", "priority", "asid", "state", "instructions", "running", "runnable", "switching",
                "sleeping", "io_wait", "blocked", "created", "started", "finished", "turnaround", "dispatches",
                "preemptions", "migrations", "core_migrations", "ipc", "cpus", "packages", "doubled_up")
CPU_COLUMNS = ("cpu", "core", "thread", "busy", "switch", "idle", "dispatches", "instructions", "kernel_instructions",
               "ipc", "package", "tlb_flushes", "wakes", "timer_interrupts")
TIMELINE_COLUMNS = ("cpu", "core", "pid", "task", "start", "end", "why")
DECISION_COLUMNS = ("cycle", "cpu", "what", "task", "detail")


def task_records(k: "Kernel") -> list[dict[str, Any]]:
    """One dict per task: instructions, cycles running / runnable / switching / sleeping / io_wait / blocked,
    created, started, finished, turnaround, dispatches, preemptions, migrations, ipc while running; and where it
    ran: ``cpus`` and ``packages`` (sorted tuples of the logical CPUs and packages it ran on) and ``doubled_up`` (cycles
    it ran while a sibling logical CPU ran a task too)."""
    where = placement(k)
    out = []
    for r in k.records:
        s = r.stats
        w = where[r.pid]
        out.append({
            "pid": r.pid, "name": r.task.name, "priority": r.task.priority, "asid": r.asid, "state": r.state.value,
            "instructions": s.instructions, "running": s.running, "runnable": s.runnable,
            "switching": s.switching, "sleeping": s.sleeping, "io_wait": s.io_wait, "blocked": s.blocked,
            "created": s.created, "started": s.started, "finished": s.finished,
            "turnaround": (s.finished - s.created) if s.finished is not None and s.created is not None else None,
            "dispatches": s.dispatches, "preemptions": s.preemptions, "migrations": s.migrations,
            "core_migrations": s.core_migrations,
            "ipc": s.instructions / s.running if s.running else 0.0,
            "cpus": tuple(sorted(w["cpus"])), "packages": tuple(sorted(w["packages"])),
            "doubled_up": w["doubled_up"],
        })
    return out


def cpu_records(k: "Kernel") -> list[dict[str, Any]]:
    """One dict per logical CPU: busy / switch / idle (halted) cycles, dispatches, instructions retired (task
    and kernel path) and the machine's ipc for it; its package; and the OS costs charged on it (charge_os_costs):
    ``tlb_flushes``, ``wakes``, ``timer_interrupts`` (their cycles are in ``switch``)."""
    out = []
    snapshot = k.cpu_snapshot if k.machine.closed else [k.machine.cpu_stats(c.id) for c in k.cpus]
    for c, stats in zip(k.cpus, snapshot):
        out.append({
            "cpu": c.id, "core": c.core, "thread": c.thread, "busy": c.busy_cycles, "switch": c.switch_cycles,
            "idle": c.idle_cycles, "dispatches": c.dispatches, "instructions": stats["instructions"],
            "kernel_instructions": c.kernel_instructions, "ipc": stats["ipc"],
            "package": c.package, "tlb_flushes": c.tlb_flushes, "wakes": c.wakes, "timer_interrupts": c.timer_interrupts,
        })
    return out


def timeline_records(k: "Kernel") -> list[dict[str, Any]]:
    """One dict per run segment (a task on a CPU from switch-in to switch-out): cpu, core, pid, task, start,
    end, and why it ended (preempted, migrated, sleep, io, block, yield, exit, running)."""
    names = {r.pid: r.task.name for r in k.records}
    return [{"cpu": cpu, "core": k.cpus[cpu].core, "pid": pid, "task": names.get(pid, ""), "start": start,
             "end": end, "why": why} for cpu, pid, start, end, why in _segments(k)]


def decision_records(k: "Kernel") -> list[dict[str, Any]]:
    """The decision log (log=True): cycle, cpu, what (fork, switch_in, preempt, idle, pull, active_migrate,
    block, wake, exit), task, detail."""
    return [{"cycle": cyc, "cpu": cpu, "what": what, "task": task, "detail": detail}
            for cyc, cpu, what, task, detail in k.decisions]


def _frame(records: list[dict[str, Any]], columns: tuple[str, ...]) -> "pandas.DataFrame":
    """The records as a DataFrame with their own keys as columns; with no record, an empty one with ``columns``."""
    import pandas as pd

    return pd.DataFrame(records) if records else pd.DataFrame(columns=list(columns))


def task_frame(k: "Kernel") -> "pandas.DataFrame":
    """task_records() as a DataFrame indexed by pid."""
    return _frame(task_records(k), TASK_COLUMNS).set_index("pid")


def cpu_frame(k: "Kernel") -> "pandas.DataFrame":
    """cpu_records() as a DataFrame indexed by cpu."""
    return _frame(cpu_records(k), CPU_COLUMNS).set_index("cpu")


def timeline_frame(k: "Kernel") -> "pandas.DataFrame":
    """timeline_records() as a DataFrame."""
    return _frame(timeline_records(k), TIMELINE_COLUMNS)


def decision_frame(k: "Kernel") -> "pandas.DataFrame":
    """decision_records() as a DataFrame."""
    return _frame(decision_records(k), DECISION_COLUMNS)


def overhead(k: "Kernel") -> dict[str, float]:
    """Host time spent driving the machine from Python: total, inside Machine.run, and their ratio - 1."""
    inside = k.host_run_seconds
    total = k.host_seconds
    return {"host_seconds": total, "machine_seconds": inside, "python_seconds": total - inside,
            "overhead": (total - inside) / inside if inside > 0 else 0.0, "machine_runs": k.machine_runs}
