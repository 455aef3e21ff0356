"""smtlab.os: an operating-system layer in Python that drives the simulated machine.

Tasks are programs of steps (compute, sleep, I/O, block/send on channels, spawn, yield, exit); a :class:`Kernel`
runs them on the machine's logical CPUs with timer ticks, time slices, context-switch costs, migrations and HLT of
idle CPUs; a scheduler (:class:`Linux24`, :class:`Linux25HT`, :class:`IdleCoreFirst`, or your own
:class:`Scheduler`) decides placement and order. Results come back as pandas DataFrames. See docs/python.md.

Example::

    from smtlab import load_config
    from smtlab.os import Kernel, Linux25HT, Task, Compute

    cfg = load_config(None, {"system.packages": 2, "core.threads": 2})
    k = Kernel(cfg, Linux25HT(), time_slice_ms=1.0)
    for i in range(2):
        k.spawn(Task(f"cpu{i}", [Compute(2_000_000)], source=f"gen:mix,count=0,seed={i}"))
    k.run()
    print(k.task_frame()[["instructions", "running", "finished", "cpus", "packages", "doubled_up"]])
"""

from .cpu import CpuState
from .kernel import Kernel
from .policies import SCHEDULERS, IdleCoreFirst, Linux24, Linux25HT, make_scheduler
from .record import TaskRecord
from .scheduler import Interval, RunqueueScheduler, Scheduler, SchedulerParams
from .tasks import IO, Block, Channel, Compute, Exit, Send, Sleep, Spawn, Task, TaskState, TaskStats, WakeAll, Yield

__all__ = [
    "Block",
    "Channel",
    "Compute",
    "CpuState",
    "Exit",
    "IO",
    "IdleCoreFirst",
    "Interval",
    "Kernel",
    "Linux24",
    "Linux25HT",
    "RunqueueScheduler",
    "SCHEDULERS",
    "Scheduler",
    "SchedulerParams",
    "Send",
    "Sleep",
    "Spawn",
    "Task",
    "TaskRecord",
    "TaskState",
    "TaskStats",
    "WakeAll",
    "Yield",
    "make_scheduler",
]
