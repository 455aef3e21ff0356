"""The chat benchmark (the reference study's Table 4 and Figure 1) as a task model.

R rooms of 20 users. Each user is a connection with four tasks: on the client side a *sender* (writes its messages
to the server) and a *receiver* (reads the room's echoes); on the server side a *receiver* (reads the user's
messages and hands each to the room's other 19 users) and a *sender* (writes the echoes to the user's socket).
Sockets are channels; a task that wakes takes every message queued for it and moves them with one system call
(trap + path + a per-message part, kpaths ``tcp_msg``), as a read() on a TCP socket returns everything that arrived.
TCP flow control: a client sender keeps at most 4 messages in flight before it waits for the server to read them.
Cross-CPU wake-ups pay a reschedule IPI (kpaths.after_wake). Every task is its own stream (task_spec), all in one
address space (kernel code and data are shared; see fileserver.py).

Throughput is client messages sent per simulated second, measured over a window after a warm-up. Scaled down: the
real run sends 100 messages per user and ends; here every sender has an endless supply and only a window of a few
simulated milliseconds is measured (the steady state the published throughput averages over).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..os import Block, Send, Task
from .base import counters, machine_summary, make_kernel
from .kpaths import PATHS, TRAP_INSTRUCTIONS, WakeChannel, after_wake, mark_waker, syscall, task_spec, user
from ..os import Compute

USERS = 20
WINDOW = 4  # messages in flight per client sender
USER_WORK = 300  # instructions of user code per message (format, bookkeeping)


def _batch_call(path: str, n: int) -> Compute:
    """One send / recv system call moving ``n`` queued messages."""
    return Compute(TRAP_INSTRUCTIONS + PATHS[path].instructions + (n - 1) * PATHS["tcp_msg"].instructions)


def _take_all(ch: WakeChannel) -> int:
    """After Block(ch) returned one message: take every other queued one too (a read returns all that arrived)."""
    n = 1 + ch.pending
    ch.received += ch.pending
    ch.pending = 0
    return n


def build(k: Any, rooms: int, stats: dict[str, Any]) -> list[Task]:
    tasks: list[Task] = []
    seed = [1000]

    def new_task(name: str, program: Any, asid: int) -> Task:
        seed[0] += 1
        t = Task(name, program, source=task_spec(seed[0], 32), asid=asid, daemon=True)
        tasks.append(t)
        return t

    stats["sent"] = 0
    for r in range(rooms):
        to_server = [WakeChannel(f"r{r}u{u}.up") for u in range(USERS)]
        credit = [WakeChannel(f"r{r}u{u}.credit") for u in range(USERS)]
        echo_out = [WakeChannel(f"r{r}u{u}.echo") for u in range(USERS)]
        to_client = [WakeChannel(f"r{r}u{u}.down") for u in range(USERS)]
        for u in range(USERS):
            def client_send(u: int = u) -> Iterator[Any]:
                me = holder[("cs", r, u)]
                inflight = 0
                while True:
                    if inflight >= WINDOW:
                        yield Block(credit[u])
                        yield from after_wake(credit[u], me)
                        inflight -= _take_all(credit[u])
                    yield user(USER_WORK)
                    yield from syscall("tcp_send")
                    mark_waker(to_server[u], me)
                    yield Send(to_server[u])
                    inflight += 1
                    stats["sent"] += 1

            def server_recv(u: int = u) -> Iterator[Any]:
                me = holder[("sr", r, u)]
                while True:
                    yield Block(to_server[u])
                    yield from after_wake(to_server[u], me)
                    n = _take_all(to_server[u])
                    yield _batch_call("tcp_recv", n)
                    yield user(USER_WORK * n)
                    for v in range(USERS):
                        if v != u:
                            mark_waker(echo_out[v], me)
                            yield Send(echo_out[v], n)
                    mark_waker(credit[u], me)
                    yield Send(credit[u], n)

            def server_send(u: int = u) -> Iterator[Any]:
                me = holder[("ss", r, u)]
                while True:
                    yield Block(echo_out[u])
                    yield from after_wake(echo_out[u], me)
                    n = _take_all(echo_out[u])
                    yield _batch_call("tcp_send", n)
                    mark_waker(to_client[u], me)
                    yield Send(to_client[u], n)

            def client_recv(u: int = u) -> Iterator[Any]:
                me = holder[("cr", r, u)]
                while True:
                    yield Block(to_client[u])
                    yield from after_wake(to_client[u], me)
                    n = _take_all(to_client[u])
                    yield _batch_call("tcp_recv", n)
                    yield user(50 * n)

            # One address space for all (client and server threads, and the kernel paths they mostly run): see
            # fileserver.py's module doc.
            holder[("cs", r, u)] = new_task(f"client_send_{r}_{u}", client_send, 1)
            holder[("cr", r, u)] = new_task(f"client_recv_{r}_{u}", client_recv, 1)
            holder[("sr", r, u)] = new_task(f"server_recv_{r}_{u}", server_recv, 1)
            holder[("ss", r, u)] = new_task(f"server_send_{r}_{u}", server_send, 1)
    return tasks


holder: dict[Any, Task] = {}


def run(rooms: int, ht: bool, scheduler: str, warm_ms: float, window_ms: float, seed: int = 0) -> dict[str, Any]:
    """Messages sent by the clients per second over the window, and the machine statistics of the window."""
    holder.clear()
    k = make_kernel(ht, scheduler, seed=seed)
    stats: dict[str, Any] = {}
    for t in build(k, rooms, stats):
        k.spawn(t)
    t_warm = k.ms_to_cycles(warm_ms)
    k.run(until=t_warm)
    snap, sent0, t0 = counters(k), stats["sent"], k.now
    k.run(until=t_warm + k.ms_to_cycles(window_ms))
    seconds = (k.now - t0) / (k.freq_ghz * 1e9)
    out = {"workload": "chat", "param": rooms, "ht": ht, "scheduler": scheduler,
           "throughput": (stats["sent"] - sent0) / seconds, "host_seconds": k.host_seconds,
           **machine_summary(k, snap)}
    k.machine.close()
    return out
