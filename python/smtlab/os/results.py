"""Results of a Kernel run: per task, per logical CPU, the run timeline and the decision log, as plain records or
pandas DataFrames (pandas is imported only when a frame is asked for)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas

    from .kernel import CpuState
    from .tasks import Task


class KernelResults:
    """The result methods of :class:`~smtlab.os.kernel.Kernel` (a mixin over its state)."""

    tasks: list["Task"]
    cpus: list["CpuState"]
    segments: list[tuple[int, int, int, int, str]]
    decisions: list[tuple[int, int, str, str, str]]
    machine: Any
    now: int
    host_run_seconds: float
    host_seconds: float
    machine_runs: int
    cpu_snapshot: list[dict[str, Any]]

    # --- results -----------------------------------------------------------------------------------------------------
    def task_records(self) -> list[dict[str, Any]]:
        """One dict per task: instructions, cycles running / runnable / switching / sleeping / io_wait / blocked,
        created, started, finished, turnaround, dispatches, preemptions, migrations, ipc while running."""
        out = []
        for t in self.tasks:
            s = t.stats
            out.append({
                "pid": t.pid, "name": t.name, "priority": t.priority, "asid": t.asid, "state": t.state.value,
                "instructions": s.instructions, "running": s.running, "runnable": s.runnable,
                "switching": s.switching, "sleeping": s.sleeping, "io_wait": s.io_wait, "blocked": s.blocked,
                "created": s.created, "started": s.started, "finished": s.finished,
                "turnaround": (s.finished - s.created) if s.finished is not None and s.created is not None else None,
                "dispatches": s.dispatches, "preemptions": s.preemptions, "migrations": s.migrations,
                "core_migrations": s.core_migrations,
                "ipc": s.instructions / s.running if s.running else 0.0,
            })
        return out

    def cpu_records(self) -> list[dict[str, Any]]:
        """One dict per logical CPU: busy / switch / idle (halted) cycles, dispatches, instructions retired (task
        and kernel path) and the machine's ipc for it."""
        out = []
        snapshot = self.cpu_snapshot if self.machine.closed else [self.machine.cpu_stats(c.id) for c in self.cpus]
        for c, stats in zip(self.cpus, snapshot):
            out.append({
                "cpu": c.id, "core": c.core, "thread": c.thread, "busy": c.busy_cycles, "switch": c.switch_cycles,
                "idle": c.idle_cycles, "dispatches": c.dispatches, "instructions": stats["instructions"],
                "kernel_instructions": c.kernel_instructions, "ipc": stats["ipc"],
            })
        return out

    def timeline_records(self) -> list[dict[str, Any]]:
        """One dict per run segment (a task on a CPU from switch-in to switch-out): cpu, core, pid, task, start,
        end, and why it ended (preempted, migrated, sleep, io, block, yield, exit, running)."""
        names = {t.pid: t.name for t in self.tasks}
        segs = list(self.segments)
        for c in self.cpus:
            if c.current is not None:
                segs.append((c.id, c.current.pid, c.segment_start, self.now, "running"))
        return [{"cpu": cpu, "core": self.cpus[cpu].core, "pid": pid, "task": names.get(pid, ""), "start": start,
                 "end": end, "why": why} for cpu, pid, start, end, why in segs]

    def decision_records(self) -> list[dict[str, Any]]:
        """The decision log (log=True): cycle, cpu, what (fork, switch_in, preempt, idle, pull, active_migrate,
        block, wake, exit), task, detail."""
        return [{"cycle": cyc, "cpu": cpu, "what": what, "task": task, "detail": detail}
                for cyc, cpu, what, task, detail in self.decisions]

    def task_frame(self) -> "pandas.DataFrame":
        """task_records() as a DataFrame indexed by pid."""
        import pandas as pd

        return pd.DataFrame(self.task_records()).set_index("pid")

    def cpu_frame(self) -> "pandas.DataFrame":
        """cpu_records() as a DataFrame indexed by cpu."""
        import pandas as pd

        return pd.DataFrame(self.cpu_records()).set_index("cpu")

    def timeline_frame(self) -> "pandas.DataFrame":
        """timeline_records() as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.timeline_records(), columns=["cpu", "core", "pid", "task", "start", "end", "why"])

    def decision_frame(self) -> "pandas.DataFrame":
        """decision_records() as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.decision_records(), columns=["cycle", "cpu", "what", "task", "detail"])

    def overhead(self) -> dict[str, float]:
        """Host time spent driving the machine from Python: total, inside Machine.run, and their ratio - 1."""
        inside = self.host_run_seconds
        total = self.host_seconds
        return {"host_seconds": total, "machine_seconds": inside, "python_seconds": total - inside,
                "overhead": (total - inside) / inside if inside > 0 else 0.0, "machine_runs": self.machine_runs}

