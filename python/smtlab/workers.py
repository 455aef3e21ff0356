"""Worker processes of a study or a sweep: how many this host may start (by default one per CPU the process may use,
never more than WORKERS_PER_CPU per CPU; each worker is a process running one simulation), and how they end with
the program when a signal stops it (:func:`stop_on_signals`, :func:`end_pool`)."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import signal
import threading
from typing import Any, Iterator

__all__ = ["STOP_SIGNALS", "WORKERS_PER_CPU", "Stopped", "default_signals", "end_pool", "host_cpus",
           "stop_on_signals", "workers_problem"]

#: The most local worker processes per host CPU. Runs are CPU-bound, so processes beyond the CPUs only cost memory
#: and start-up time; a few per CPU still lets a pool oversubscribe (another job holding some cores), while a count
#: far beyond that (a typo, 100000) is refused before thousands of processes are started.
WORKERS_PER_CPU = 4


def host_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one): the default number of workers."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def workers_problem(workers: object, what: str) -> str | None:
    """What is wrong with ``workers`` as a number of worker processes (``what`` names it in the message), or None when
    it is an integer from 1 to WORKERS_PER_CPU x the host's CPUs. Each caller raises its own error type with it."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        return f"{what} must be an integer of at least 1, got {workers!r}"
    cpus = host_cpus()
    if workers > WORKERS_PER_CPU * cpus:
        return (f"{what} {workers} is too many for this host: at most {WORKERS_PER_CPU} per CPU ({cpus} CPUs, so "
                f"{WORKERS_PER_CPU * cpus}); each worker is a process running one simulation")
    return None


# --- stopping: a signal ends the program's workers with it ------------------------------------------------------------

#: The signals that end a run of the program early besides Ctrl-C: ``kill`` (SIGTERM) and a closed terminal or SSH
#: session (SIGHUP). Python's default for both ends the process at once, without the clean-up that ends its worker
#: processes, which then run on under init.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Stopped(BaseException):
    """Raised in the main thread when a :data:`STOP_SIGNALS` signal arrives inside :func:`stop_on_signals`. A
    BaseException, like KeyboardInterrupt, so that ``except Exception`` around a run does not swallow it."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.name = signal.Signals(signum).name
        super().__init__(f"stopped by {self.name}")

    @property
    def exit_status(self) -> int:
        """The shell's status for a process ended by the signal: 128 + its number."""
        return 128 + self.signum


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise :class:`Stopped` in the main thread, so that the block's
    ``finally`` clauses end its worker pools (:func:`end_pool`) as they do for Ctrl-C. The handlers in place before
    are restored afterwards. Only the main thread can set handlers; elsewhere the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()

    def handler(signum: int, frame: Any) -> None:
        if os.getpid() != owner:  # a forked child that has not reset its handlers yet: end as by default
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Stopped(signum)

    before = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in before.items():
            signal.signal(s, h)


def default_signals() -> None:
    """A pool worker's initializer: SIGTERM and SIGHUP end it at once, as by default, even inside a simulation (a
    handler inherited from the driver would only run once the simulation returned to Python)."""
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_DFL)


def end_pool(pool: cf.Executor) -> None:
    """Ends a pool now: a process pool's worker processes are terminated (their simulations are lost; a sweep's driver
    has stored every finished run) and the pool is shut down without waiting for queued work. Used when the driver
    stops early (a signal, Ctrl-C, an error), where ``shutdown(wait=True)`` would wait for every running
    simulation to finish."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
    else:
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            if proc.is_alive():
                proc.terminate()
    pool.shutdown(wait=True, cancel_futures=True)
