"""chat under Linux24 with HT on: every room sends in the window.

The starvation this guards against: with a runqueue per logical CPU, a client sender whose server receiver runs on the
sibling gets its credit back before its 4-message window fills, so it never blocks and holds CPU 0 for its whole slice;
CPU 1 re-runs its one queued task (the woken server receiver) while every other room's tasks wait on CPU 0's queue, and
only a busy-balance pull every 200 ms can move them. Linux 2.4.19 has one runqueue (kernel/sched.c ``runqueue_head``)
that schedule() on any CPU scans, and so has the model's Linux24: CPU 1 takes the other rooms' waiting tasks whenever
its own task blocks. Expected on paper: rooms are identical closed loops sharing the CPUs, so with one runqueue every
room runs within a window of a few context-switch rounds; each of 4 rooms' 20 senders starts with a 4-message window, so
every room that runs at all sends messages. Served in turn: woken tasks join the tail of the run list
(``run_list_head=False``); 2.4.19's own order, the head, runs the task woken last first, and then one room's pipeline
can hold both CPUs for a short window whatever the runqueues (test_os_wakeup.py, docs/study.md)."""

from __future__ import annotations

from smtlab.os import make_scheduler
from smtlab.workloads import chat
from smtlab.workloads.base import make_kernel

ROOMS = 4
WARM_MS = 2.0  # the study's quick warm-up and window (docs/study.md)
WINDOW_MS = 2.0


def _sent_by_room(**scheduler_params: object) -> list[int]:
    k = make_kernel(True, "linux24", scheduler_params={"run_list_head": False, **scheduler_params})
    rooms = chat.build(ROOMS)
    chat.spawn(k, rooms, stagger_ms=WARM_MS / 2)
    k.run(until=k.ms_to_cycles(WARM_MS))
    before = [r.sent for r in rooms]
    k.run(until=k.ms_to_cycles(WARM_MS + WINDOW_MS))
    return [r.sent - b for r, b in zip(rooms, before)]


def test_every_room_sends_in_the_window_under_linux24_with_ht():
    sent = _sent_by_room()
    assert all(n > 0 for n in sent), f"messages per room in the window: {sent}"
    # Identical rooms sharing two CPUs through one runqueue: no room gets more than half of all messages (per-CPU
    # queues give one room everything, e.g. [0, 251, 0, 0]).
    assert max(sent) <= sum(sent) / 2, sent


def test_linux24_has_one_runqueue_by_default():
    assert make_scheduler("linux24").global_runqueue is True
    k = make_kernel(True, "linux24")
    assert len(k.scheduler.queues) == 1
    k2 = make_kernel(True, "linux24", scheduler_params={"global_runqueue": False})
    assert len(k2.scheduler.queues) == 2
