"""The chat workload's rooms: every per-room value is bound when the room is built.

A nested task program that read its room's channels late would run every room on the last room's channels, and
the ``rooms`` parameter would do nothing. Expected values from the workload's structure, on paper: rooms
are identical closed loops (20 users, each message echoed to the room's 19 others) sharing only the CPUs, so a task
of room r only ever waits on room r's sockets, and with the CPU saturated each of R rooms carries about 1/R of the
messages.

The scheduler is Linux24 with woken tasks joining the tail of its run list (``run_list_head=False``), so equal tasks
are served in turn: under 2.4.19's own order (the head: the task woken last runs first, test_os_wakeup.py) one room's
pipeline can hold both logical CPUs for a whole short window while the other room's tasks wait behind it, which says
nothing about the rooms' channels."""

from __future__ import annotations

import re

import pytest

from smtlab.workloads import chat
from smtlab.workloads.base import make_kernel

_ROOM_OF_TASK = re.compile(r"_(\d+)_\d+$")
_ROOM_OF_CHANNEL = re.compile(r"^r(\d+)u\d+\.")
FIRST_COME = {"run_list_head": False}  # module doc


def test_rooms_have_disjoint_channels_and_tasks():
    rooms = chat.build(3)
    channel_ids = [{id(ch) for ch in room.channels} for room in rooms]
    assert all(len(c) == 4 * chat.USERS for c in channel_ids)
    assert not (channel_ids[0] & channel_ids[1]) and not (channel_ids[1] & channel_ids[2])
    assert all(len(room.tasks) == 4 * chat.USERS and len(room.senders) == chat.USERS for room in rooms)
    for room in rooms:
        assert all(_ROOM_OF_TASK.search(t.name).group(1) == str(room.index) for t in room.tasks)


def test_every_task_blocks_only_on_its_own_rooms_channels():
    """The behaviour the closure bug broke: run two rooms and read the kernel's decision log. Every 'block' names
    the channel the task waits on; a room-0 task waiting on a room-1 socket is the bug."""
    k = make_kernel(False, "linux24", log=True, scheduler_params=FIRST_COME)
    rooms = chat.build(2)
    chat.spawn(k, rooms, stagger_ms=0.2)
    k.run(until=k.ms_to_cycles(1.0))
    blocks = k.decision_frame()
    blocks = blocks[blocks.what == "block"]
    assert len(blocks) > 100  # both rooms' receivers block at once, and senders on credit later
    task_room = blocks.task.str.extract(_ROOM_OF_TASK)[0]
    channel_room = blocks.detail.str.extract(_ROOM_OF_CHANNEL)[0]
    assert channel_room.notna().all()
    mismatched = blocks[task_room != channel_room]
    assert mismatched.empty, mismatched.head()
    assert set(task_room) == {"0", "1"}


def test_two_rooms_share_the_messages():
    """HT off, 2 rooms: both rooms send in the window and each carries about half (paper: 1/2 by symmetry; the band
    0.25..0.75 leaves room for which sender the scheduler happens to run first)."""
    r = chat.run(2, False, "linux24", warm_ms=2.0, window_ms=2.0, scheduler_params=FIRST_COME)
    by_room = r["sent_by_room"]
    assert len(by_room) == 2 and sum(by_room) > 0
    for n in by_room:
        assert 0.25 <= n / sum(by_room) <= 0.75, by_room
    assert r["throughput"] == pytest.approx(sum(by_room) / 2e-3, rel=1e-6)
