"""The chat benchmark (the reference study's Table 4 and Figure 1) as a task model for short windows: the default
study's stand-in. :mod:`smtlab.workloads.chat_source` is the benchmark as its source is written, run whole (study
``--chat-whole-run``); this model departs from that source where a window of a few simulated ms needs it, and each
departure is marked "chosen" below.

R rooms of 20 users. Each user is a connection with four tasks: on the client side a *sender* (writes its messages
to the server) and a *receiver* (reads the room's echoes); on the server side a *receiver* (reads the user's
messages and hands each to the room's other 19 users) and a *sender* (writes the echoes to the user's socket).
In the source (chat_s.c) the server receiver instead raises its user's semaphore and that user's server sender makes
the 19 sends; here the fan-out is spread over the 19 receiving users' server senders (chosen: each then writes one
batch to one socket, below).
Sockets are channels; a task that wakes takes every message queued for it and moves them with one system call (chosen:
the source's receivers read exactly one 100-byte message per recv(), MSG_WAITALL, so a real run makes one call per
message and hop; batching lets a short window carry many messages): with real kernel paths the recording of that call
for batches of 2..20 (kpath:tcp_send_bN, one write of the N echoes; kpath:tcp_recv_bN, the read of N messages sent one
by one), else trap + path + a per-message part (kpaths ``tcp_msg``); see :func:`_batch_call`.
Flow control: a client sender keeps at most 4 messages in flight before it waits for the server to read them (chosen:
the source has none, and its senders stop after 100 messages; the window keeps an endless sender from flooding).
Cross-CPU wake-ups pay a reschedule IPI (kpaths.after_wake). Every task is its own stream (task_spec).

Address spaces as the real benchmark has them: the article ("Hyper-Threading speeds Linux", the chat section) starts
"the chat server in a command-line session and the client in another"; the client makes one connection per user and
"a 'send' thread and a 'receive' thread" per connection, and so does the server ("400 client threads and 400 server
threads" for 10 rooms). So chat is two multithreaded processes: every client thread of every room runs in the client
process's address space (``CLIENT_ASID``), every server thread in the server's (``SERVER_ASID``). Rooms are not
processes: two rooms' client threads share the client's address space, as threads of one process do.

Every per-room value (the room's channels, each task's own Task) is bound when the room is built (``_room``), so
rooms are independent copies that share only the CPUs. Client senders start staggered: sender ``i`` of ``N`` starts
at ``i / N`` of ``stagger_ms`` (chosen: the source's client releases every client thread at once with one semop, see
chat_source; starting 800-2000 senders in the same cycle makes the first pass through the runqueue outlast a short
window, so only the first rooms would run in it).

Throughput is client messages sent per simulated second, measured over a window after a warm-up; ``sent_by_room``
says how the window's messages divide between rooms (each room is the same closed loop, so about equally). The
source's client prints messages sent plus received per second; in a steady state that is 20 x the messages sent, so
speed-ups are the same. Scaled down: the real run sends 100 messages per user and ends; here every sender has an
endless supply and only a window of a few simulated milliseconds is measured.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..os import Block, Compute, Linux25HT, Send, Task
from .base import STALL_MS, counters, machine_summary, make_kernel, run_until, started
from .kpaths import (PATHS, TCP_BATCHES, TRAP_INSTRUCTIONS, WakeChannel, after_wake, mark_waker, real_paths_on,
                     recorded, syscall, task_spec)
from .user_streams import UserStream

USERS = 20
#: The two processes' address-space ids (see the module doc): one for every client thread, one for every server thread.
CLIENT_ASID = 1
SERVER_ASID = 2
WINDOW = 4  # messages in flight per client sender
USER_WORK = 300  # instructions of user code per message (format, bookkeeping)
#: Estimated user instructions per message by role, used when user streams are off (user_streams.py; with them on,
#: each message runs a recorded instance of workloads/user/chat.c instead).
_ESTIMATES = {"client_send": USER_WORK, "server_recv": USER_WORK, "server_send": 0, "client_recv": 50}


def _batch_call(path: str, n: int, me: Task) -> list[Compute]:
    """One send / recv system call moving ``n`` queued messages. With real kernel paths on: a batch of 1 is the
    recorded 16-byte call (kpaths.syscall); a batch of 2..20 the recording of that batch (kpaths.TCP_BATCHES: the
    echo written as one send of n x 100 bytes, or the recv of the n x 100 bytes that n sends queued; an instance drawn
    per call as for every recorded path); a larger batch (docs/study.md) the recording of the largest batch,
    ``TCP_BATCHES[-1]`` messages, plus the per-message estimate ``tcp_msg`` for each message beyond it. Without
    recordings: the call's estimate and ``n - 1`` times ``tcp_msg``."""
    if real_paths_on():
        if n in TCP_BATCHES:
            return recorded(f"{path}_b{n}", [], task=me)
        if n > TCP_BATCHES[-1]:
            largest = TCP_BATCHES[-1]
            extra = (n - largest) * PATHS["tcp_msg"].instructions
            return recorded(f"{path}_b{largest}", [], task=me) + [Compute(extra)]
        return syscall(path, task=me)
    return [Compute(TRAP_INSTRUCTIONS + PATHS[path].instructions + (n - 1) * PATHS["tcp_msg"].instructions)]


def _take_all(ch: WakeChannel) -> int:
    """After Block(ch) returned one message: take every other queued one too (a read returns all that arrived)."""
    n = 1 + ch.pending
    ch.received += ch.pending
    ch.pending = 0
    return n


@dataclass
class Room:
    """One chat room's sockets (per user: client->server, credit back, server echo queue, server->client) and its
    four tasks per user, created together so that nothing of one room is reached through another."""

    index: int
    to_server: list[WakeChannel]
    credit: list[WakeChannel]
    echo_out: list[WakeChannel]
    to_client: list[WakeChannel]
    tasks: list[Task] = field(default_factory=list)
    senders: list[Task] = field(default_factory=list)

    @property
    def channels(self) -> list[WakeChannel]:
        return self.to_server + self.credit + self.echo_out + self.to_client

    @property
    def sent(self) -> int:
        """Messages this room's clients have sent."""
        return sum(ch.sent for ch in self.to_server)


# The four task programs. Each takes everything it uses as arguments (bound with functools.partial when its room is
# built) and ``me``, a one-element list holding its own Task (for the IPI cost of a cross-CPU wake-up).
def _client_send(room: Room, u: int, me: list[Task], work: UserStream) -> Iterator[Any]:
    credit, up = room.credit[u], room.to_server[u]
    inflight = 0
    while True:
        if inflight >= WINDOW:
            yield Block(credit)
            yield from after_wake(credit, me[0])
            inflight -= _take_all(credit)
        yield from work.work()  # user_streams: the recorded program's instance, else USER_WORK
        yield from syscall("tcp_send", task=me[0])
        mark_waker(up, me[0])
        yield Send(up)
        inflight += 1


def _server_recv(room: Room, u: int, me: list[Task], work: UserStream) -> Iterator[Any]:
    up, credit = room.to_server[u], room.credit[u]
    others = [room.echo_out[v] for v in range(USERS) if v != u]
    while True:
        yield Block(up)
        yield from after_wake(up, me[0])
        n = _take_all(up)
        yield from _batch_call("tcp_recv", n, me[0])
        yield from work.work(n)
        for ch in others:
            mark_waker(ch, me[0])
            yield Send(ch, n)
        mark_waker(credit, me[0])
        yield Send(credit, n)


def _server_send(room: Room, u: int, me: list[Task], work: UserStream) -> Iterator[Any]:
    echo, down = room.echo_out[u], room.to_client[u]
    while True:
        yield Block(echo)
        yield from after_wake(echo, me[0])
        n = _take_all(echo)
        yield from work.work(n)  # none without user streams (_ESTIMATES)
        yield from _batch_call("tcp_send", n, me[0])
        mark_waker(down, me[0])
        yield Send(down, n)


def _client_recv(room: Room, u: int, me: list[Task], work: UserStream) -> Iterator[Any]:
    down = room.to_client[u]
    while True:
        yield Block(down)
        yield from after_wake(down, me[0])
        n = _take_all(down)
        yield from _batch_call("tcp_recv", n, me[0])
        yield from work.work(n)


_PROGRAMS = (("client_send", _client_send), ("client_recv", _client_recv), ("server_recv", _server_recv),
             ("server_send", _server_send))


def _room(r: int, first_seed: int) -> Room:
    room = Room(r, [WakeChannel(f"r{r}u{u}.up") for u in range(USERS)],
                [WakeChannel(f"r{r}u{u}.credit") for u in range(USERS)],
                [WakeChannel(f"r{r}u{u}.echo") for u in range(USERS)],
                [WakeChannel(f"r{r}u{u}.down") for u in range(USERS)])
    seed = first_seed
    for u in range(USERS):
        for role, program in _PROGRAMS:
            me: list[Task] = []
            seed += 1
            # A thread of the client or of the server process (module doc).
            asid = CLIENT_ASID if role.startswith("client") else SERVER_ASID
            work = UserStream(f"chat_{role}", seed, _ESTIMATES[role])  # its user-mode work, drawn by its seed
            t = Task(f"{role}_{r}_{u}", functools.partial(program, room, u, me, work), source=task_spec(seed, 32),
                     asid=asid, daemon=True)
            me.append(t)
            room.tasks.append(t)
            if role == "client_send":
                room.senders.append(t)
    return room


def build(rooms: int) -> list[Room]:
    """The rooms, each with its own channels and tasks (task sources seeded 1001, 1002, ... in creation order)."""
    return [_room(r, 1000 + r * USERS * len(_PROGRAMS)) for r in range(rooms)]


def spawn(k: Any, rooms: list[Room], stagger_ms: float) -> None:
    """Spawns every task: receivers and server tasks at once (they block), client sender ``i`` of ``N`` at ``i / N``
    of ``stagger_ms``, interleaving rooms (room 0 user 0, room 1 user 0, ...) so that no room starts last as a
    whole."""
    senders = [room.senders[u] for u in range(USERS) for room in rooms]
    for room in rooms:
        for t in room.tasks:
            if t not in room.senders:
                k.spawn(t)
    step = k.ms_to_cycles(stagger_ms) / max(1, len(senders))
    for i, t in enumerate(senders):
        k.spawn(t, at=k.now + round(i * step))


#: Upper bound of a chat point's simulated time (warm-up and window together), in ms: the adaptive warm-up and window
#: below stop here (chosen: about 3 x the longest start-up seen, 50 rooms with HT off take ~20 ms until every task has
#: run once; keeps a point's host time bounded, as fileserver.MAX_MS does for tbench).
MAX_MS = 60.0
_STEP_MS = 1.0

#: The steady-state window (study `--steady-chat`), per room, in simulated ms. The model's run goes in cycles as long
#: as the runqueue (docs/study.md, "The window's phase"): the client senders' pass, the client receivers', the server
#: receivers', the server senders' echoes, each phase holding one task per user of every room, so that a cycle grows
#: with the rooms: bench/chat_cycles.py measures 1.8 ms per room at 20 and 40 rooms (36 and 72 ms; HT off,
#: Linux25HT, real paths and programs). Chosen: 12.5 ms per room, about seven such cycles: at least two whole cycles
#: wherever the window starts, with the partial cycles at its ends a small part of it. Every steady point counts the
#: whole cycles its window held (``whole_cycles``) and the study's check ``chat.steady_window_holds_two_cycles`` fails
#: when one held fewer than two.
STEADY_MS_PER_ROOM = 12.5
#: Room left in a steady point's bound for the adaptive warm-up and the window's own extension, in ms (chosen: the
#: MAX_MS of a default point, which holds the longest start-up seen).
STEADY_MARGIN_MS = MAX_MS


def pass_starts(steps: list[dict[str, int]]) -> list[int]:
    """Where the client senders' pass through the runqueue begins in a series of steps, each the switch-ins of each
    role in one step (differences of :func:`dispatches_by_role`): the indices of the steps in which ``client_send``
    has more than half of the switch-ins and the step before does not (a series that starts inside a pass has not seen
    that pass begin). A run with no phases, such as one room's, where every role runs in every step, has none."""
    starts, before = [], True
    for i, st in enumerate(steps):
        total = sum(st.values())
        senders = total > 0 and 2 * st.get("client_send", 0) > total
        if senders and not before:
            starts.append(i)
        before = senders
    return starts


def whole_cycles(steps: list[dict[str, int]]) -> int:
    """The whole cycles of chat's run in a series of steps (:func:`pass_starts`): between the first and the last
    beginning of the senders' pass lie one fewer whole cycles than passes began; 0 when fewer than two began."""
    return max(0, len(pass_starts(steps)) - 1)


def steady_window_ms(rooms: int) -> float:
    """The window of a steady-state chat point with ``rooms`` rooms (about three cycles of the model's run)."""
    if rooms < 1:
        raise ValueError(f"chat needs at least one room, got {rooms}")
    return STEADY_MS_PER_ROOM * rooms


class NoCompletion(RuntimeError):
    """No client message was sent inside a measurement window: there is no throughput to report (never report 0)."""


def _sockets_reached(k: Any, built: list[Room]) -> bool:
    """Every receiver and server task of every room has been on a CPU once, so each now waits on its socket: the
    start-up convoy has passed. (Not the client senders: each sender's first turn sends a whole TCP window, ~0.1 ms
    with the recorded paths, so waiting for all of them would be a round of the benchmark, not its start-up.)"""
    return all(k.record(t).stats.started is not None for room in built for t in room.tasks if t not in room.senders)


def _sockets_count(k: Any, built: list[Room]) -> int:
    """How many receiver and server tasks have been on a CPU (the progress of :func:`_sockets_reached`)."""
    return started(k, (t for room in built for t in room.tasks if t not in room.senders))


def _rooms_sent(built: list[Room], sent0: list[int]) -> int:
    """How many rooms have sent a message since ``sent0``."""
    return sum(1 for room, s in zip(built, sent0) if room.sent > s)


def dispatches_by_role(k: Any, built: list[Any]) -> dict[str, int]:
    """Switch-ins so far of every room's tasks, summed by role (client_send, client_recv, server_recv, server_send);
    rooms of this model or of chat_source, whose tasks are named the same way."""
    out = {role: 0 for role, _ in _PROGRAMS}
    for room in built:
        for t in room.tasks:
            out[t.name.rsplit("_", 2)[0]] += k.record(t).stats.dispatches
    return out


def whole_pipeline_ran(result: dict[str, Any]) -> bool:
    """True if every role of the benchmark ran in the measured window of ``result`` (a :func:`run` result): a message
    is sent by a client sender, read by a server receiver, echoed by the server senders and read by the client
    receivers, and the published throughput averages over all of it. A window in which some role never ran measures
    a phase of the run (e.g. only the senders' pass through the runqueue), not the benchmark's steady state."""
    return "no_completion" not in result and min(result["dispatches_by_role"].values()) > 0


def run(rooms: int, ht: bool, scheduler: str, warm_ms: float, window_ms: float, seed: int = 0,
        stagger_ms: float | None = None, max_ms: float = MAX_MS, settle: bool = False,
        scheduler_params: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None,
        stall_ms: float | None = STALL_MS, count_cycles: bool = False) -> dict[str, Any]:
    """Messages sent by the clients per second over the window, the messages each room sent in it
    (``sent_by_room``), the switch-ins of each role in it (``dispatches_by_role``, see :func:`whole_pipeline_ran`),
    and the machine statistics of the window. ``stagger_ms``: the client senders' start-up spread (default: half the
    warm-up).

    The start is a convoy: the 60 receiver and server tasks of every room are spawned at once and each is dispatched
    once (a context switch, then it blocks on its socket) before the first client sender runs, since the senders are
    spawned later and a runqueue serves equals first come, first served. Each such dispatch runs the switch path
    (~4,800 instructions recorded, ~10,800 cycles at the start's IPC), so 60 x R dispatches take ~8 ms at 20 rooms
    and ~20 ms at 50 with HT off: a fixed 4 + 6 ms held no message from 30 rooms up and reported 0 messages/s. So
    the warm-up lasts at least ``warm_ms`` and until every receiver and server task has run once (is waiting on
    its socket); the window lasts at least
    ``window_ms`` and until every room has sent a message in it, both in steps of 1 ms and bounded by ``max_ms`` in
    all, and each ending early when its criterion has made no progress (a receiver or server task's first dispatch;
    a room's first message in the window) for ``stall_ms`` (base.run_until; None: never): under 2.4.19's head-first
    order the senders spawned later run ahead of every receiver and server, none of which runs in 60 ms at 50 rooms
    (docs/study.md, "Stalled warm-ups"). ``warm_ms`` / ``window_ms`` in the result are the lengths used,
    ``warm_end`` / ``window_end`` why each ended ("met", "stalled", "bound"). Raises :class:`NoCompletion` if no
    message was sent in the window.

    ``settle`` (the study's steady windows): under Linux25HT, every task's sleep_avg is set after the warm-up to where
    the estimator drifts in a long run (:meth:`Linux25HT.settle_sleep_avg`; the result's ``settled_at_cap`` says how
    many went to the cap). A window of 0.25-0.63 s is shorter than MAX_SLEEP_AVG (2 s), so without it the window
    measures the tasks' bonuses moving from their start (docs/study.md). ``scheduler_params``: keywords of the
    scheduler (smtlab.os.SchedulerParams), as make_kernel takes them; ``overrides``: config keys over the preset's
    (``{"core.wrong_path": False}``), as make_kernel takes them (the study uses none). ``count_cycles`` (the study's
    steady windows): the window runs in 1 ms steps, the result's ``whole_cycles`` counts the whole cycles of the run
    it held (:func:`whole_cycles`) and ``pass_starts_ms`` gives where the senders' passes began, from the window's
    start (at the end of the step in which each began)."""
    k = make_kernel(ht, scheduler, seed=seed, scheduler_params=scheduler_params, overrides=overrides)
    built = build(rooms)
    spawn(k, built, warm_ms / 2 if stagger_ms is None else stagger_ms)
    step, cap = k.ms_to_cycles(_STEP_MS), k.ms_to_cycles(max_ms)
    k.run(until=k.ms_to_cycles(warm_ms))
    warm_end = run_until(k, lambda: _sockets_reached(k, built), lambda: _sockets_count(k, built), cap, step, stall_ms)
    settled = None
    if settle and isinstance(k.scheduler, Linux25HT) and k.scheduler.wakeup_preempt:
        settled = k.scheduler.settle_sleep_avg()
    snap, sent0, t0 = counters(k), [room.sent for room in built], k.now
    roles0 = dispatches_by_role(k, built)
    steps: list[dict[str, int]] = []
    if count_cycles:  # the window in 1 ms steps, each step's switch-ins by role kept for whole_cycles
        prev = roles0
        while k.now + step <= t0 + k.ms_to_cycles(window_ms):
            k.run(until=k.now + step)
            now = dispatches_by_role(k, built)
            steps.append({r: n - prev[r] for r, n in now.items()})
            prev = now
    if k.now < t0 + k.ms_to_cycles(window_ms):
        k.run(until=t0 + k.ms_to_cycles(window_ms))
    window_end = run_until(k, lambda: _rooms_sent(built, sent0) == len(built), lambda: _rooms_sent(built, sent0), cap,
                           step, stall_ms)
    seconds = (k.now - t0) / (k.freq_ghz * 1e9)
    by_room = [room.sent - s for room, s in zip(built, sent0)]
    out = {"workload": "chat", "param": rooms, "ht": ht, "scheduler": scheduler,
           "throughput": sum(by_room) / seconds, "sent_by_room": by_room, "host_seconds": k.host_seconds,
           "dispatches_by_role": {r: n - roles0[r] for r, n in dispatches_by_role(k, built).items()},
           "warm_ms": t0 / k.cycles_per_us / 1000.0, "window_ms": (k.now - t0) / k.cycles_per_us / 1000.0,
           "settled_at_cap": settled, "warm_end": warm_end, "window_end": window_end, **machine_summary(k, snap)}
    if count_cycles:
        out["whole_cycles"] = whole_cycles(steps)
        out["pass_starts_ms"] = [i * _STEP_MS for i in pass_starts(steps)]  # from the window's start
    k.machine.close()
    if not sum(by_room):
        raise NoCompletion(f"chat {rooms} rooms, HT {'on' if ht else 'off'}, {scheduler}: no client message was "
                           f"sent in the window ({out['warm_ms']:.1f} ms warm-up, {out['window_ms']:.1f} ms window, "
                           f"bound {max_ms:g} ms in all)")
    return out
