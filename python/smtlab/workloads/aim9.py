"""AIM Suite IX subset (the reference study's Table 2) as task models.

CPU tests run the user code of workloads/kernels/aim9.c (``kernel:aim9_*`` traces of the real compiled loops; the
tracer's generator look-alikes stand in when no trace can be made). A test is one task computing a window of its
trace after a warm-up; operations per second = the instructions retired in the window x (operations the whole
trace performs / its instructions) / simulated seconds. File-system tests are loops of system calls (kpaths) whose
control between two operations is the recorded loop of workloads/user/loops.c (user programs on), one task like
every other row: AIM9 runs each test as one process, and no source shows a write-back daemon running for
exactly the creat-clo and link rows (a daemon on only the two rows the article shows gaining would fit the model
to the result instead of explaining it). Sync disk tests write 1 KiB (sync_disk_rw
after seeking to a random block), fsync, and wait for the disk model (disk.py) to complete the data and inode writes;
their loops are recorded too (loops.c).

Scaled down: AIM9 runs each test for a fixed 2 s (ops counted); here a window of 0.2-1 M instructions for the CPU
tests (the loops are regular, so a window gives the steady rate) and a few dozen operations for the file-system
tests. Units follow the published rows (thousands of additions per second etc.), but the model's loops are
aim9.c's, not AIM's, so absolute rates differ; the HT speed-up is what is compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from .. import Source
from ..os import IO, Compute, Task
from .base import counters, machine_summary, make_kernel
from .disk import Disk
from .kpaths import REAL_PATHS, estimated, kernel, recorded, syscall, task_spec
from .user_streams import UserStream

#: Instructions of AIM9's loop per file-system or sync-disk operation: the estimate, used when the user programs are
#: off. With them on each row runs its loop as AIM's source writes it, recorded (workloads/user/loops.c, LOOPS).
_USER_LOOP = 40
#: The recorded loop of each row (user_streams.PROGRAMS): creat-clo and link_test as in AIM's creat-clo.c, the sync
#: rows as in its disk1.c (sync_disk_rw draws the next block from AIM's generator and seeks to it).
LOOPS = {"creat-clo": "aim9_creat", "link_test": "aim9_link", "sync_disk_rw": "aim9_sync_rw",
         "sync_disk_wrt": "aim9_sync", "sync_disk_cp": "aim9_sync"}


@dataclass(frozen=True)
class Aim9Test:
    """One row of Table 2. CPU tests: ``trace`` and the operations (in the row's unit) its whole run performs."""

    key: str
    kind: str  # 'cpu' | 'fs' | 'sync'
    trace: str = ""
    ops: float = 0.0  # in the row's unit, for the whole trace
    calls: tuple[str, ...] = ()  # fs / sync: the system calls of one operation


_ITER = 200_000  # aim9.c's default iteration count (the traces run it)
TESTS: list[Aim9Test] = [
    *(Aim9Test(f"add_{t}", "cpu", f"kernel:aim9_add_{t}", _ITER * 4 / 1000) for t in
      ("double", "float", "long", "int", "short")),
    Aim9Test("creat-clo", "fs", calls=("creat", "close")),
    Aim9Test("link_test", "fs", calls=("link", "unlink")),
    Aim9Test("sync_disk_rw", "sync"),
    Aim9Test("sync_disk_wrt", "sync"),
    Aim9Test("sync_disk_cp", "sync"),
    *(Aim9Test(f"div_{t}", "cpu", f"kernel:aim9_div_{t}", _ITER * 2 / 1000) for t in
      ("double", "float", "long", "int", "short")),
    Aim9Test("fun_cal", "cpu", "kernel:aim9_call0", _ITER),
    Aim9Test("fun_cal1", "cpu", "kernel:aim9_call1", _ITER),
    Aim9Test("fun_cal2", "cpu", "kernel:aim9_call2", _ITER),
    Aim9Test("fun_cal15", "cpu", "kernel:aim9_call15", _ITER),
    Aim9Test("sieve", "cpu", "kernel:aim9_sieve", _ITER // 20000 + 1),
    *(Aim9Test(f"mul_{t}", "cpu", f"kernel:aim9_mul_{t}", _ITER * 4 / 1000) for t in
      ("double", "float", "long", "int", "short")),
    Aim9Test("string_rtns", "cpu", "kernel:aim9_string", _ITER // 20 + 1),
    Aim9Test("mem_rtns_2", "cpu", "kernel:aim9_memcpy", 2 * (_ITER // 2000 + 1)),
    Aim9Test("sort_rtns_1", "cpu", "kernel:aim9_sort", _ITER // 60000 + 1),
]
BY_KEY = {t.key: t for t in TESTS}

def _cpu_test(test: Aim9Test, k: Any, window: int, warm: int, rec: dict[str, Any]) -> list[Task]:
    def program() -> Iterator[Any]:
        yield Compute(warm, source=test.trace, loop=True)
        rec["t0"], rec["snap"] = k.now, counters(k)
        yield Compute(window, source=test.trace, loop=True)
        rec["t1"] = k.now
        rec["summary"] = machine_summary(k, rec["snap"])
        rec["ops"] = window * test.ops / rec["length"]
    src = Source(test.trace)
    rec["length"] = src.length or window
    rec["trace_name"] = src.name
    return [Task(test.key, program)]


def _fs_test(test: Aim9Test, k: Any, n_ops: int, warm_ops: int, rec: dict[str, Any]) -> list[Task]:
    work = UserStream(LOOPS[test.key], 1, _USER_LOOP)

    def bench() -> Iterator[Any]:
        for i in range(warm_ops + n_ops):
            if i == warm_ops:
                rec["t0"], rec["snap"] = k.now, counters(k)
            yield from work.work()
            both = "+".join(test.calls)
            if both in REAL_PATHS:  # a recording of the whole sequence (creat + close)
                yield from recorded(both, [step for c in test.calls for step in estimated(c)])
            else:
                for c in test.calls:
                    yield from syscall(c)
        rec["t1"] = k.now
        rec["summary"] = machine_summary(k, rec["snap"])
        rec["ops"] = n_ops

    return [Task(test.key, bench, source=task_spec(1, 128))]


def _sync_test(test: Aim9Test, k: Any, n_ops: int, warm_ops: int, rec: dict[str, Any]) -> list[Task]:
    disk = Disk(k.freq_ghz)
    sequential = test.key != "sync_disk_rw"
    copy = test.key == "sync_disk_cp"
    work = UserStream(LOOPS[test.key], 1, _USER_LOOP)

    def bench() -> Iterator[Any]:
        for i in range(warm_ops + n_ops):
            if i == warm_ops:
                rec["t0"], rec["snap"] = k.now, counters(k)
            yield from work.work()
            if not sequential:
                # AIM's sync_disk_rw seeks to a random block before each write (disk1.c): no recording of lseek,
                # the null call stands for it as in dbench (kpaths.REAL_PATHS; its estimate too).
                yield from recorded("lseek", estimated("null"))
            if copy:
                # AIM Suite IX disk1.c sync_disk_cp: per operation read(fd, nbuf, sizeof nbuf) of the source file,
                # NBUFSIZE 1024 (a page-cache hit: earlier tests wrote it), then the write to an O_SYNC copy. Real
                # paths: Linux 6.1's 1 KiB read() of a cached ext4 file, its copy included (kpath:disk_read); else
                # the estimates: a read() (syscall "read") plus the copy of 1 KiB.
                yield from recorded("disk_read", [*estimated("read"), kernel("copy_kb")])
            yield from recorded("fs_write", [*estimated("fs_write"), kernel("copy_kb")])  # the copy is in it
            yield from syscall("fsync")
            yield IO(cycles=disk.request(k.now, 1.0, sequential))  # the data block
            yield IO(cycles=disk.request(k.now, 1.0, False))  # the inode
        rec["t1"] = k.now
        rec["summary"] = machine_summary(k, rec["snap"])
        rec["ops"] = n_ops

    return [Task(test.key, bench, source=task_spec(1, 128))]


def run(key: str, ht: bool, scheduler: str = "linux24", quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Runs one AIM9 test; returns operations per second (in the row's unit) and the machine statistics."""
    test = BY_KEY[key]
    k = make_kernel(ht, scheduler, seed=seed)
    rec: dict[str, Any] = {}
    if test.kind == "cpu":
        tasks = _cpu_test(test, k, 100_000 if quick else 800_000, 30_000 if quick else 200_000, rec)
    elif test.kind == "fs":
        tasks = _fs_test(test, k, 32 if quick else 200, 16, rec)
    else:
        tasks = _sync_test(test, k, 4 if quick else 12, 1, rec)
    for t in tasks:
        k.spawn(t)
    k.run()
    seconds = (rec["t1"] - rec["t0"]) / (k.freq_ghz * 1e9)
    out = {"key": key, "ht": ht, "scheduler": scheduler, "ops_per_s": rec["ops"] / seconds,
           "trace": rec.get("trace_name", ""), "host_seconds": k.host_seconds, **rec["summary"]}
    k.machine.close()
    return out
