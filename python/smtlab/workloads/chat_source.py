"""The chat benchmark as its source is written, run whole and measured as its client measures (study
``--chat-whole-run``).

Source: chat 1.0.1 (Bill Hartner, IBM, 10 Dec 2000): chat_c.c, chat_s.c, chat.h. The copy read (found by code
search; the index does not name its repository) carries a 2005 processor-affinity patch to the client's ``main()``,
under ``#if defined(THREAD0) || defined(THREAD1)``, which the article's runs did not have. What each thread does:

- client sender, ``cli_snd``: waits on the start semaphore, then ``nmessages`` times one 100-byte ``send()``
  (``BUFFER_SIZE``); it waits for nothing between them (no flow control in the program; 100 messages of 100 bytes do
  not fill a TCP send buffer), then it is done.
- client receiver, ``cli_rcv``: waits on the start semaphore, then ``(CLIENTS_PER_ROOM - 1) * nmessages`` calls of
  ``recv(s, buf, BUFFER_SIZE, 0x100)``: exactly one 100-byte message each (0x100 is MSG_WAITALL).
- server receiver, ``srv_rcv``: ``nmessages`` times ``recv()`` of one message, then ``semop(+1)`` on its user's
  semaphore.
- server sender, ``srv_snd``: ``nmessages`` times ``semop(-1)`` on that semaphore, then one ``send()`` of the
  message to each of the room's 19 other users' sockets.
- the client's main thread (``main_client_thread``): connects each user in turn and clones its two threads, which
  at once wait on the start semaphore (``clientsemall``); when the server has accepted every connection it says
  CLIENT_START, and the main thread reads the clock and releases every client thread with one ``semop``
  ("to allow client threads to start together"). The clock stops when every client thread is done.
- the figure the client prints (``main``): messages sent plus messages received, divided by that time. The article
  calls it "messages sent by the client"; its values fit sent plus received: 164,071 per second at 20 rooms (2.4.19,
  HT off) is 800,000 messages (20 rooms x 20 users x 100 messages x 20) in 4.9 s, where sent alone would be 40,000
  messages in 0.24 s, with some 40 system calls per message sent (1.6 million in 0.24 s on one 1.6 GHz CPU).

The model: the same threads, each a task whose every system call is one ``kpath:tcp_send`` / ``kpath:tcp_recv``
(recorded kernel paths when they are on, else the estimates) or ``semop`` (estimate; no recording); the connections'
set-up before the release is not modelled, and the server's sends never wait (no socket buffer limit: chosen, each
client socket has its own reader). :func:`run` spawns every task, runs until each has blocked, releases the client
threads and runs until every message is received, counting as the client does.

Scaled down: ``messages`` per sender instead of 100 (the run's phases, the senders' flood and the server's fan-out,
scale together with it; the start, 80 x R dispatches, does not). Two messages at 20 rooms are 16,000 counted
messages, about 0.3-0.5 simulated seconds and two minutes of host time per point (docs/study.md), which is why the
default study runs :mod:`smtlab.workloads.chat`, a stand-in that a window of a few ms can sample.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..os import Block, Compute, Send, Task
from .base import counters, machine_summary, make_kernel
from .chat import CLIENT_ASID, SERVER_ASID, USERS, NoCompletion, dispatches_by_role
from .kpaths import WakeChannel, after_wake, mark_waker, syscall, task_spec

#: Messages per sender in the study's whole runs (chosen: the smallest count at which every sender sends more than
#: one, so a sender's flood and the server's fan-out overlap as in a real run; host time grows with it. At 20 rooms 5
#: messages read both kernels' gains about 5 points lower, as the start weighs less: docs/study.md).
STUDY_MESSAGES = 2
#: Upper bound of a run's simulated time from the release, in ms (chosen: about 4 x the longest run measured, 1,295 ms
#: at 50 rooms with two messages under 2.5.32 with HT off; a run that has not ended there reports no figure).
MAX_MS = 5000.0
_STEP_MS = 1.0
#: The run's steps after the release: its end is found within this, and the machine statistics run to it.
_RUN_STEP_MS = 0.1
#: User instructions around each system call: the loop, a counter and the C library's wrapper (chosen: chat_c.c and
#: chat_s.c do nothing else per message; the user program workloads/user/chat.c, which formats and parses messages,
#: stands for the default model's heavier stand-in and is not run here).
USER_PER_CALL = 30
_ROLES = ("client_send", "client_recv", "server_recv", "server_send")


@dataclass
class Room:
    """One room's sockets and semaphores (per user: client->server socket, the server's per-user semaphore,
    server->client socket), the client's start semaphore (one for every room), and its four tasks per user."""

    index: int
    to_server: list[WakeChannel]
    user_sem: list[WakeChannel]
    to_client: list[WakeChannel]
    start: WakeChannel
    tasks: list[Task] = field(default_factory=list)

    @property
    def sent(self) -> int:
        """Messages this room's client senders have sent."""
        return sum(ch.sent for ch in self.to_server)

    @property
    def received(self) -> int:
        """Messages this room's client receivers have taken."""
        return sum(ch.received for ch in self.to_client)


def _take_one(ch: WakeChannel, me: Task) -> Iterator[Any]:
    """Takes one message from ``ch``: at once if one is queued, else waits (then the wake-up's IPI cost)."""
    waited = ch.pending == 0
    yield Block(ch)
    if waited:
        yield from after_wake(ch, me)


def _send(ch: WakeChannel, me: Task) -> Iterator[Any]:
    """One send() of one 100-byte message on ``ch``, waking its reader."""
    yield from syscall("tcp_send", task=me)
    mark_waker(ch, me)
    yield Send(ch)


def _recv(ch: WakeChannel, me: Task) -> Iterator[Any]:
    """One recv() of one 100-byte message from ``ch`` (waiting for it if none is queued), and the loop around it."""
    yield from _take_one(ch, me)
    yield from syscall("tcp_recv", task=me)
    yield Compute(USER_PER_CALL)


def _client_send(room: Room, u: int, messages: int, me: list[Task]) -> Iterator[Any]:
    yield from _take_one(room.start, me[0])
    for _ in range(messages):
        yield Compute(USER_PER_CALL)
        yield from _send(room.to_server[u], me[0])


def _client_recv(room: Room, u: int, messages: int, me: list[Task]) -> Iterator[Any]:
    yield from _take_one(room.start, me[0])
    for _ in range((USERS - 1) * messages):
        yield from _recv(room.to_client[u], me[0])


def _server_recv(room: Room, u: int, messages: int, me: list[Task]) -> Iterator[Any]:
    sem = room.user_sem[u]
    for _ in range(messages):
        yield from _recv(room.to_server[u], me[0])
        yield from syscall("semop", task=me[0])
        mark_waker(sem, me[0])
        yield Send(sem)


def _server_send(room: Room, u: int, messages: int, me: list[Task]) -> Iterator[Any]:
    others = [room.to_client[v] for v in range(USERS) if v != u]
    for _ in range(messages):
        yield from _take_one(room.user_sem[u], me[0])
        yield from syscall("semop", task=me[0])
        yield Compute(USER_PER_CALL)
        for ch in others:
            yield from _send(ch, me[0])


_PROGRAMS = {"client_send": _client_send, "client_recv": _client_recv, "server_recv": _server_recv,
             "server_send": _server_send}


def build(rooms: int, messages: int) -> list[Room]:
    """The rooms in the benchmark's creation order (room by room; per user the client's send and receive threads,
    then the server's), task sources seeded 1001, 1002, ... as :func:`smtlab.workloads.chat.build` seeds them, and one
    start semaphore for all."""
    if rooms < 1 or messages < 1:
        raise ValueError(f"chat needs at least one room and one message per user, got {rooms} rooms and "
                         f"{messages} messages")
    start = WakeChannel("clientsemall")
    built = []
    for r in range(rooms):
        room = Room(r, [WakeChannel(f"r{r}u{u}.up") for u in range(USERS)],
                    [WakeChannel(f"r{r}u{u}.sem") for u in range(USERS)],
                    [WakeChannel(f"r{r}u{u}.down") for u in range(USERS)], start)
        seed = 1000 + r * USERS * len(_ROLES)
        for u in range(USERS):
            for role in _ROLES:
                seed += 1
                me: list[Task] = []
                t = Task(f"{role}_{r}_{u}", functools.partial(_PROGRAMS[role], room, u, messages, me),
                         source=task_spec(seed, 32), asid=CLIENT_ASID if role.startswith("client") else SERVER_ASID,
                         daemon=True)
                me.append(t)
                room.tasks.append(t)
        built.append(room)
    return built


def client_tasks(rooms: list[Room]) -> list[Task]:
    """Every room's client threads: the ones the start semaphore holds."""
    return [t for room in rooms for t in room.tasks if t.asid == CLIENT_ASID]


def all_waiting(k: Any, rooms: list[Room]) -> bool:
    """Every client thread waits on the start semaphore and every server thread has run (so waits on its socket or
    semaphore): the benchmark is ready to start."""
    servers = [t for room in rooms for t in room.tasks if t.asid == SERVER_ASID]
    return (len(rooms[0].start.waiters) == len(client_tasks(rooms))
            and all(k.record(t).stats.started is not None for t in servers))


def _client_main(start: WakeChannel, count: int, me: list[Task]) -> Iterator[Any]:
    yield from syscall("semop", task=me[0])
    mark_waker(start, me[0])
    yield Send(start, count)


def release(k: Any, rooms: list[Room]) -> Task:
    """Spawns the client's main thread now: its one semop wakes every client thread waiting on the start semaphore, in
    the order they queued (2.4's ``update_queue`` walks its queue in order). Call when :func:`all_waiting`."""
    me: list[Task] = []
    t = Task("client_main", functools.partial(_client_main, rooms[0].start, len(client_tasks(rooms)), me),
             source=task_spec(1000, 32), asid=CLIENT_ASID)
    me.append(t)
    k.spawn(t)
    return t


def run(rooms: int, ht: bool, scheduler: str, messages: int = STUDY_MESSAGES, seed: int = 0, max_ms: float = MAX_MS,
        scheduler_params: dict[str, Any] | None = None) -> dict[str, Any]:
    """One whole run: the benchmark's figure (``throughput``: messages sent plus received per second, from the release
    to the last message received; ``counted``: those messages), the run's length (``window_ms``; ``start_ms``: the start before the release,
    ``warm_ms`` 0), the messages each room sent (``sent_by_room``), the switch-ins of each role (``dispatches_by_role``)
    and the machine statistics of the run from the release; under ``linux24`` also ``run_list_walk``, what 2.4.19's
    schedule() would have walked from the release to the last run step (Linux24.walk_counts; not charged). Raises
    :class:`~smtlab.workloads.chat.NoCompletion` if the start or the run does not finish within ``max_ms`` of simulated
    time each."""
    k = make_kernel(ht, scheduler, seed=seed, scheduler_params=scheduler_params)
    built = build(rooms, messages)
    label = f"chat whole run, {rooms} rooms x {messages} messages, HT {'on' if ht else 'off'}, {scheduler}"
    try:
        for t in (t for room in built for t in room.tasks):
            k.spawn(t)
        step, bound = k.ms_to_cycles(_STEP_MS), k.ms_to_cycles(max_ms)
        while not all_waiting(k, built) and k.now + step <= bound:
            k.run(until=k.now + step)
        if not all_waiting(k, built):
            raise NoCompletion(f"{label}: the start did not finish (not every task ran and blocked) in {max_ms:g} ms")
        released = k.now
        snap = counters(k)
        walks = getattr(k.scheduler, "walk_counts", None)  # 2.4.19's run-list walks (Linux24; not charged)
        walk0 = walks() if walks is not None else None
        release(k, built)
        total = rooms * USERS * messages * USERS  # each user's messages sent once and received by 19
        clients = client_tasks(built)
        run_step = k.ms_to_cycles(_RUN_STEP_MS)
        while not all(k.record(t).stats.finished is not None for t in clients) and k.now + run_step <= released + bound:
            k.run(until=k.now + run_step)
        if not all(k.record(t).stats.finished is not None for t in clients):
            counted = sum(room.sent + room.received for room in built)
            raise NoCompletion(f"{label}: {counted} of {total} messages counted in {max_ms:g} ms")
        # The clock stops when the last client thread is done (chat_c.c: c_donesem reaches 0).
        end = max(k.record(t).stats.finished for t in clients)
        seconds = (end - released) / (k.freq_ghz * 1e9)
        walked = {"run_list_walk": {key: v - walk0[key] for key, v in walks().items()}} if walk0 is not None else {}
        return {"workload": "chat", "param": rooms, "ht": ht, "scheduler": scheduler, "messages": messages,
                "counted": total, "throughput": total / seconds, "sent_by_room": [room.sent for room in built],
                "dispatches_by_role": dispatches_by_role(k, built), "host_seconds": k.host_seconds,
                "start_ms": released / k.cycles_per_us / 1000.0, "warm_ms": 0.0,
                "window_ms": (end - released) / k.cycles_per_us / 1000.0, **machine_summary(k, snap), **walked}
    finally:
        k.machine.close()
