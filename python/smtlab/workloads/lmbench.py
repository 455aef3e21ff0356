"""LMbench latency subset (the reference study's Table 1) as task models.

Each test is one process (two for the pipe test, a parent and a child per iteration for the process tests) looping
over a body of user code and system calls (kpaths: trap + kernel path). The user code is LMbench's loop control
around the calls: with user programs on, the recorded ``lmbench_loop`` (workloads/user/loops.c, user_streams.py:
``while (iterations-- > 0)``, 2-4 instructions from a call's return to the next call; each recorded call holds its
own argument set-up and result check), else the estimate ``_USER_LOOP``. The time per operation is measured between
two points of the loop, after a warm-up of both iterations and simulated time, and reported in microseconds at the
preset's clock (``system.freq_ghz``). What is modelled: the instruction stream of each process (user loop, traps and
kernel paths as documented instruction counts), context switches as kernel code (Kernel ``kernel_path``), blocking
and wake-up through the OS layer, the placement decisions of the scheduler, and everything the core does with them
(HT partitions, halt and recombination drains). What is not: the real kernel's code where no recording
exists (counts in kpaths are documented estimates; recorded kpath: instances where kpaths.REAL_PATHS has one and
real paths are on), inter-processor interrupt delivery and the exit from HLT (the model charges only the IPI handler's
path), TLB flushes on address-space switches, interrupts.

Scaled down: LMbench repeats each operation until the timing is stable (~100 ms per test); here 40-400 iterations
(quick: fewer), after a warm-up of at least ``warm_ms`` of simulated time (caches warm, both processes placed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..os import Block, Channel, Compute, Send, Spawn, Task
from .base import counters, machine_summary, make_kernel
from .kpaths import (WakeChannel, after_wake, estimated, kernel, mark_waker, real_paths_on, recorded, sleep_entry,
                     syscall, task_spec)
from .user_streams import UserStream

#: Instructions of LMbench's own loop and call overhead per operation: the estimate used when the user programs are
#: off (with them on, the recorded loop control of workloads/user/loops.c runs instead).
_USER_LOOP = 50


def _loop(seed: int) -> UserStream:
    """The loop control of one LMbench process (its k-th operation runs the k-th instance its seed draws)."""
    return UserStream("lmbench_loop", seed, _USER_LOOP)


#: A test's body: the steps of one operation, its loop's control first (``work``: the process's UserStream).
Body = Callable[[UserStream], Iterator[Any]]


def _simple(*names: str) -> Body:
    def body(work: UserStream) -> Iterator[Any]:
        yield from work.work()
        for n in names:
            yield from syscall(n)
    return body


def _open_close(work: UserStream) -> Iterator[Any]:
    yield from work.work()
    yield from recorded("open+close", [*estimated("open"), *estimated("close")])


def _signal_overhead(work: UserStream) -> Iterator[Any]:
    # kill(getpid(), SIGUSR1): the trap and kill path, delivery on the way out (frame set-up), the handler in user
    # mode, and sigreturn (the recorded instance holds all four, the handler being the probe's own; without it the
    # estimate has 30 instructions for the handler).
    yield from work.work()
    yield from recorded("kill+signal", [*syscall("kill"), kernel("sigdeliver"), Compute(30), *syscall("sigreturn")])


@dataclass(frozen=True)
class LmbenchTest:
    """One row of Table 1: ``key`` as in the published CSV, ``kind`` 'loop' | 'pipe' | 'proc'."""

    key: str
    label: str
    kind: str
    iters: int  # measured iterations (default mode)
    quick_iters: int
    body: Body | None = None
    child: str = ""  # proc tests: 'exit' | 'execve' | 'sh'


TESTS: list[LmbenchTest] = [
    LmbenchTest("simple_syscall", "Simple syscall", "loop", 400, 30, _simple("null")),
    LmbenchTest("simple_read", "Simple read", "loop", 400, 30, _simple("read")),
    LmbenchTest("simple_write", "Simple write", "loop", 400, 30, _simple("write")),
    LmbenchTest("simple_stat", "Simple stat", "loop", 200, 20, _simple("stat")),
    LmbenchTest("simple_fstat", "Simple fstat", "loop", 400, 30, _simple("fstat")),
    LmbenchTest("simple_open_close", "Simple open/close", "loop", 200, 20, _open_close),
    LmbenchTest("select_10_fds", "Select on 10 fd's", "loop", 200, 20, _simple("select10")),
    LmbenchTest("select_10_tcp_fds", "Select on 10 tcp fd's", "loop", 200, 20, _simple("select10_tcp")),
    LmbenchTest("signal_handler_installation", "Signal handler installation", "loop", 400, 30,
                _simple("sigaction")),
    LmbenchTest("signal_handler_overhead", "Signal handler overhead", "loop", 200, 20, _signal_overhead),
    LmbenchTest("pipe_latency", "Pipe latency", "pipe", 300, 40),
    LmbenchTest("process_fork_exit", "Process fork+exit", "proc", 16, 3, child="exit"),
    LmbenchTest("process_fork_execve", "Process fork+execve", "proc", 8, 2, child="execve"),
    LmbenchTest("process_fork_sh_c", "Process fork+/bin/sh -c", "proc", 4, 1, child="sh"),
]
BY_KEY = {t.key: t for t in TESTS}


def _faults(n: int, task: Any = None) -> list[Compute]:
    # n faults' worth of the fault path in one step (same instructions), or n recorded faults
    return recorded("page_fault", [kernel("page_fault", n)], task, times=n)


#: User-mode instructions of lmbench's hello after its main() is entered: main and its write() call (19) and glibc
#: 2.36's exit() up to exit_group (396), measured with callgrind on hello.c (``write(1, "Hello world\n", 12)``)
#: linked static on Debian 12. The recorded sh -c instance ends where main begins. The estimate, for when the user
#: programs are off; with them on, the recorded hello (workloads/user/hello.c) runs from the write's return.
HELLO_AFTER_MAIN = 415


def _hello_after_main(me: Any) -> Iterator[Any]:
    """lmbench's hello from main() to its exit: the write to the stdout that lat_proc closed before exec (EBADF at
    the descriptor lookup: the recorded null call's entry and exit stand for it) and the user code after it."""
    yield from syscall("null", task=me)
    yield from UserStream("lmbench_hello", me.pid, HELLO_AFTER_MAIN).work()


def _child_task(kind: str, done: WakeChannel, start: WakeChannel) -> Task:
    """The forked child: copy-on-write faults, [exec the shell and / or lmbench's hello], exit, wake the parent."""
    holder: dict[str, Task] = {}

    def program() -> Iterator[Any]:
        me = holder["task"]
        yield from after_wake(start, me)  # placed on another CPU than its parent's: woken there by an IPI
        yield from _faults(2, me)  # copy-on-write of the stack and the libc data page on return from fork
        if kind in ("execve", "sh") and real_paths_on():
            # The recorded /bin/sh -c (kpath:sh_c): the shell's execve, busybox ash's start-up with its page faults,
            # and ash's own execve of the program (it execs the last command of -c without forking), up to main.
            # The recorded execve (kpath:execve) likewise runs up to the program's main, its start-up and page
            # faults included, so neither is followed by the estimate's 30 faults and 20k of start-up.
            if kind == "sh":
                yield from recorded("sh -c", [], me)
            else:
                yield from syscall("execve", task=me)
            yield from _hello_after_main(me)
        elif kind in ("execve", "sh"):
            if kind == "sh":
                # /bin/sh -c prog: exec the shell (a larger image), its start-up, then it execs prog itself.
                yield from syscall("execve", 1.3)
                yield from _faults(80, me)
                yield Compute(300_000)
            yield from syscall("execve")
            yield from _faults(30, me)
            yield Compute(20_000)  # lmbench's hello: start-up and one write
        # exit, or the recorded _exit with its parent's waitpid return (the parent then runs no wait path itself)
        yield from recorded("exit+wait", estimated("exit"), me)
        mark_waker(done, me)
        yield Send(done)  # the parent's wait4 wakes (SIGCHLD)

    holder["task"] = Task(f"child_{kind}", program, source=task_spec(11, 256))
    return holder["task"]


def _measured(k: Any, rec: dict[str, Any], iters: int, warm_iters: int, warm_ms: float,
              body: Callable[[], Iterator[Any]]) -> Iterator[Any]:
    """Runs ``body`` until warm (both ``warm_iters`` and ``warm_ms``), then ``iters`` measured times."""
    warm_cycles = k.ms_to_cycles(warm_ms)
    i = 0
    while i < warm_iters or k.now < warm_cycles:
        yield from body()
        i += 1
    rec["t0"] = k.now
    rec["snap"] = counters(k)
    for _ in range(iters):
        yield from body()
    rec["t1"] = k.now
    rec["iters"] = iters
    rec["summary"] = machine_summary(k, rec["snap"])


def build(test: LmbenchTest, k: Any, iters: int, warm_iters: int, warm_ms: float, rec: dict[str, Any]) -> list[Task]:
    """The tasks of one test on kernel ``k``; ``rec`` receives t0 / t1 (cycles) and iters."""
    if test.kind == "loop":
        work = _loop(1)

        def loop_body() -> Iterator[Any]:
            yield from test.body(work)  # type: ignore[misc]
        return [Task(test.key, lambda: _measured(k, rec, iters, warm_iters, warm_ms, loop_body), source=task_spec(1))]
    if test.kind == "pipe":
        to_child, to_parent = WakeChannel("pipe1"), WakeChannel("pipe2")
        me: dict[str, Task] = {}
        state = {"stop": False}
        parent_loop, child_loop = _loop(1), _loop(2)  # each process's own loop

        def ping() -> Iterator[Any]:
            yield from parent_loop.work()
            yield from syscall("pipe_write")
            mark_waker(to_child, me["parent"])
            yield Send(to_child)
            yield from sleep_entry()
            yield Block(to_parent)
            yield from after_wake(to_parent, me["parent"])
            yield from recorded("pipe_read", [kernel("pipe_read")], me["parent"])

        def parent() -> Iterator[Any]:
            yield Spawn(me["child"])
            yield from _measured(k, rec, iters, warm_iters, warm_ms, ping)
            state["stop"] = True
            yield Send(to_child)

        def child() -> Iterator[Any]:
            while True:
                yield from sleep_entry()
                yield Block(to_child)
                if state["stop"]:
                    return
                yield from after_wake(to_child, me["child"])
                yield from recorded("pipe_read", [kernel("pipe_read")], me["child"])
                yield from child_loop.work()
                yield from syscall("pipe_write")
                mark_waker(to_parent, me["child"])
                yield Send(to_parent)

        me["parent"] = Task("pipe_parent", parent, source=task_spec(1))
        me["child"] = Task("pipe_child", child, source=task_spec(2))
        return [me["parent"]]
    # proc: fork, the child runs (and execs), exits; the parent waits for it.
    holder: dict[str, Task] = {}
    work = _loop(1)

    def fork_once() -> Iterator[Any]:
        me = holder["parent"]
        done = WakeChannel("wait")
        start = WakeChannel("fork")  # the child's first wake-up comes from its parent's CPU
        yield from work.work()
        yield from syscall("fork")
        mark_waker(start, me)
        yield Spawn(_child_task(test.child, done, start))
        yield from _faults(2, me)  # the parent's own copy-on-write faults on return
        yield from sleep_entry()
        yield Block(done)
        yield from after_wake(done, me)
        if not real_paths_on():  # else the child's recorded exit+wait holds the wait path
            yield kernel("wait")

    holder["parent"] = Task(test.key, lambda: _measured(k, rec, iters, warm_iters, warm_ms, fork_once),
                            source=task_spec(1, 256))
    return [holder["parent"]]


def run(key: str, ht: bool, scheduler: str = "linux24", quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Runs one LMbench test; returns microseconds per operation and the machine statistics of the measured part."""
    test = BY_KEY[key]
    k = make_kernel(ht, scheduler, seed=seed)
    iters = test.quick_iters if quick else test.iters
    warm_iters = 1 if test.kind == "proc" else 10
    warm_ms = (1.2 if quick else 2.0) if test.kind == "pipe" else 0.0
    rec: dict[str, Any] = {}
    for t in build(test, k, iters, warm_iters, warm_ms, rec):
        k.spawn(t)
    k.run()
    us = (rec["t1"] - rec["t0"]) / rec["iters"] / (k.freq_ghz * 1000.0)
    tf = k.task_frame()
    out = {"key": key, "ht": ht, "scheduler": scheduler, "us": us, "iters": iters,
           "migrations": int(tf["migrations"].sum()), "host_seconds": k.host_seconds, **rec["summary"]}
    k.machine.close()
    return out
