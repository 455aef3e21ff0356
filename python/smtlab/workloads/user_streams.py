"""User-mode work of the study's workloads from real programs.

The C programs under workloads/user (chat.c, dbench.c, tbench.c, loops.c) run one benchmark loop's user-mode work
per iteration: a chat message formatted, parsed and fanned out, a dbench load-file line parsed into its file
operation, a tbench request built or decoded, the control of LMbench's and AIM9's timing loops between two calls.
Each is traced once like the reference kernels (``kernel:user_*``, compiled -O2 static for generic x86-64 and
recorded under the QEMU tracer into the kernel: cache, src/tracer/kernels.cpp), and every iteration's user work lies
between two ``pause`` markers (workloads/user/user_mark.h) with the program's system calls outside them.
:func:`instances` cuts those instances out of the recorded trace.

A task draws its instances by seed (:class:`UserStream`): the k-th piece of user work of a task runs instance
``Random(seed)``'s k-th draw, as one step on a source of its own in the task's address space (the task's asid, so
processes keep their own lines and pages), like the recorded kernel paths (kpaths.syscall). Sources are pooled per
instance: a source is taken for one step and given back when the step has retired all of it, so at most as many
copies of an instance exist as tasks are inside it at the same time.

When the study switches them on (:func:`enable_user_streams`) and the tracer or the cache can give them; otherwise
every workload keeps its estimated instruction counts (a stretch of the task's own generated stream) and the report
says so in one line.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterator

from ..os import Compute

#: Environment switch ("1": on), set by :func:`enable_user_streams` for this process and the study's workers.
USER_STREAMS_ENV = "SMTLAB_STUDY_USER"


@dataclass(frozen=True)
class UserProgram:
    """One role of a benchmark loop: its kernel: trace, the workload that uses it, and the system calls that separate
    two of its instances in the recorded trace as the C source makes them (``syscalls_between``)."""

    name: str
    kernel: str
    workload: str
    syscalls_between: int
    what: str
    #: One instance from its one marker to the program's exit_group call, the trace's last record (hello.c: glibc's
    #: exit() lets no marker follow it).
    to_exit: bool = False


#: Every user program of the study. syscalls_between, from the C sources: chat client_send write(); server_recv and
#: client_recv the peer's write() and the read(); server_send write(); dbench one call per operation except FIND
#: (opendir, readdir, closedir: checked apart); tbench client write(), the peer's write(), read(); server the peer's
#: write(), read(), writev(); loops.c's loops the getppid() they run around (the row's calls are kpath: streams),
#: sync_rw its lseek() and write().
PROGRAMS: dict[str, UserProgram] = {p.name: p for p in (
    UserProgram("chat_client_send", "user_chat_client_send", "chat", 1, "format and frame one message"),
    UserProgram("chat_server_recv", "user_chat_server_recv", "chat", 2,
                "parse one message, hand it to the room's 19 other members"),
    UserProgram("chat_server_send", "user_chat_server_send", "chat", 1, "frame one queued message"),
    UserProgram("chat_client_recv", "user_chat_client_recv", "chat", 2, "parse one echo, update statistics"),
    UserProgram("dbench_client", "user_dbench_client", "dbench", 1, "parse one load-file line into its operation"),
    UserProgram("tbench_client", "user_tbench_client", "tbench", 3, "check the reply, build the next request"),
    UserProgram("tbench_server", "user_tbench_server", "tbench", 3, "decode one request, build the reply"),
    UserProgram("lmbench_loop", "user_lmbench_loop", "lmbench", 1, "LMbench's timing loop between two calls"),
    UserProgram("aim9_creat", "user_aim9_creat", "aim9", 1, "AIM9's creat-clo loop between two operations"),
    UserProgram("aim9_link", "user_aim9_link", "aim9", 1, "AIM9's link_test loops between two operations"),
    UserProgram("aim9_sync", "user_aim9_sync", "aim9", 1, "AIM9's sync write and copy loop between two operations"),
    UserProgram("aim9_sync_rw", "user_aim9_sync_rw", "aim9", 2,
                "AIM9's sync random-write loop: the next block from AIM's generator"),
    UserProgram("lmbench_hello", "user_lmbench_hello", "lmbench", 0, "lmbench's hello from its write() to its exit",
                to_exit=True),
)}

#: Instances kept per program (the first ones of the recording; each program records 400): enough distinct draws
#: for every task, few enough that a worker holds them all in memory (at most ~1.6 k records each).
MAX_INSTANCES = 100


class UserStreamError(Exception):
    """A user program's trace does not hold the instances its source promises (names the program and why)."""


def user_streams_on() -> bool:
    """True when the workloads run their user-mode work from the recorded programs."""
    return os.environ.get(USER_STREAMS_ENV) == "1"


def _bare_int(r: Any) -> bool:
    """An int op with no registers and no memory operands: how the user-mode tracer writes ``syscall``
    (docs/tracing.md: the simulator sees no kernel code)."""
    return r.op == "int" and not r.src and not r.dst and not r.loads and not r.stores


def is_syscall(records: list[Any], i: int) -> bool:
    """Record ``i`` is a ``syscall`` instruction (:func:`_bare_int`) whose next record is the 2-byte instruction's
    fall-through."""
    return _bare_int(records[i]) and i + 1 < len(records) and records[i + 1].pc == records[i].pc + 2


def cut(records: list[Any], name: str = "trace", truncated: bool = False) -> list[tuple[int, int]]:
    """(first, end) record ranges of every instance: the records strictly between the 2i-th and (2i+1)-th pause.
    ``truncated``: the records are a prefix of the trace, so a last begin marker may have lost its end. Raises
    UserStreamError when the markers do not pair up."""
    marks = [i for i, r in enumerate(records) if r.op == "pause"]
    if truncated and len(marks) % 2:
        marks.pop()
    if not marks or len(marks) % 2:
        raise UserStreamError(f"{name}: {len(marks)} pause markers; instances need begin/end pairs "
                              "(workloads/user/user_mark.h)")
    return [(a + 1, b) for a, b in zip(marks[0::2], marks[1::2])]


def cut_to_exit(records: list[Any], name: str = "trace") -> list[tuple[int, int]]:
    """The one instance of a program that runs to its end: the records after its only pause up to the exit_group
    call, its last record (a ``syscall``, :func:`_bare_int`, with nothing after it). Raises UserStreamError
    otherwise."""
    marks = [i for i, r in enumerate(records) if r.op == "pause"]
    if len(marks) != 1 or not records or not _bare_int(records[-1]):
        raise UserStreamError(f"{name}: {len(marks)} pause markers and a last record that is "
                              f"{'no system call' if records else 'missing'}; a program run to its exit needs one "
                              "marker and ends with exit_group (workloads/user/hello.c)")
    return [(marks[0] + 1, len(records) - 1)]


def recorded(program: str, max_records: int = 0) -> tuple[list[Any], list[tuple[int, int]]]:
    """The program's recorded trace (its first ``max_records`` records if non-zero) and its instance ranges
    (:func:`cut`). Traces it first if needed (kernel: cache). Raises UserStreamError when only the generator
    look-alike is there (no tracer, no cached trace)."""
    from .._core import Source, read_records

    p = PROGRAMS[program]
    if p.to_exit:
        max_records = 0  # its one instance ends at the trace's end
    spec = f"kernel:{p.kernel}"
    if Source(spec).name.startswith("gen:"):
        raise UserStreamError(f"{spec}: not recorded (tracer unavailable and no cached trace)")
    records = read_records(spec, max_records)
    if p.to_exit:
        return records, cut_to_exit(records, spec)
    return records, cut(records, spec, truncated=bool(max_records) and len(records) == max_records)


#: Records read first to find MAX_INSTANCES instances (start-up plus about 3 k records per iteration); the whole
#: trace (up to ~1.2 M records) only if that is not enough.
_PREFIX_RECORDS = 500_000


@lru_cache(maxsize=None)
def instances(program: str) -> tuple[tuple[Any, ...], ...]:
    """The first MAX_INSTANCES instances of the program, each a tuple of records (Instr)."""
    records, ranges = recorded(program, _PREFIX_RECORDS)
    if len(ranges) < MAX_INSTANCES:
        records, ranges = recorded(program)
    return tuple(tuple(records[a:b]) for a, b in ranges[:MAX_INSTANCES])


class _Pool:
    """Sources per (program, instance), handed out for one step and given back when it retired."""

    def __init__(self) -> None:
        self.free: dict[tuple[str, int], list[Any]] = {}

    def take(self, program: str, index: int) -> Any:
        from .._core import Source

        free = self.free.setdefault((program, index), [])
        while free:
            src = free.pop()
            if not src.attached:  # still on the CPU of the task that ran it last: leave it, make another
                return src
        return Source.from_records(instances(program)[index], f"user:{program}#{index}")

    def give(self, program: str, index: int, src: Any) -> None:
        self.free.setdefault((program, index), []).append(src)


_POOL = _Pool()


class UserStream:
    """The user-mode work of one task: instance draws by ``seed`` (``estimate``: instructions per piece of work when
    user streams are off, run as a stretch of the task's own stream)."""

    def __init__(self, program: str, seed: int, estimate: int) -> None:
        if program not in PROGRAMS:
            raise KeyError(f"unknown user program '{program}' (programs: {', '.join(PROGRAMS)})")
        self.program, self.estimate = program, estimate
        self._rng = random.Random(seed)

    def next_index(self) -> int:
        """The instance of the next piece of work."""
        return self._rng.randrange(len(instances(self.program)))

    def work(self, count: int = 1) -> Iterator[Any]:
        """Steps for ``count`` pieces of user work (``count`` messages of a batch): one recorded instance each, or
        ``count * estimate`` instructions of the task's own stream when user streams are off."""
        if not user_streams_on():
            if count * self.estimate > 0:
                yield Compute(count * self.estimate)
            return
        for _ in range(count):
            index = self.next_index()
            src = _POOL.take(self.program, index)
            yield Compute(source=src)  # until the source's end: the whole instance
            _POOL.give(self.program, index, src)


def enable_user_streams() -> str | None:
    """Switches user streams on for this process and its workers if every program's instances can be had (traced on
    first use: a few seconds each). Returns None when on, else the one-line reason for the fallback."""
    try:
        for name in PROGRAMS:
            if not instances(name):
                raise UserStreamError(f"{name}: no instances")
    except Exception as e:  # noqa: BLE001 - TraceError (no tracer, compile failure) or UserStreamError, one line
        os.environ[USER_STREAMS_ENV] = "0"
        return f"user programs unavailable ({e}); user-mode work uses estimated instruction counts"
    os.environ[USER_STREAMS_ENV] = "1"
    return None


def note() -> str:
    """The report's line saying which workloads' user-mode work is real (call after :func:`enable_user_streams`)."""
    if not user_streams_on():
        return ("user programs: off; the user-mode work of chat, dbench and tbench and the loops of LMbench and AIM9's "
                "file-system and sync-disk rows are estimated instruction counts of each task's generated stream")
    by_workload: dict[str, list[str]] = {}
    for p in PROGRAMS.values():
        mean = sum(map(len, instances(p.name))) / len(instances(p.name))
        by_workload.setdefault(p.workload, []).append(f"{p.name} ({mean:.0f} instructions)")
    parts = "; ".join(f"{w}: {', '.join(v)}" for w, v in by_workload.items())
    return ("user programs: real user-mode work (workloads/user, traced with the QEMU tracer, mean instance length) "
            f"for {parts}; make_j2's compile jobs: see the two_package note")
