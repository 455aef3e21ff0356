"""The chat benchmark as its source is written (workloads/chat_source.py, study ``--chat-whole-run``).

Expected values on paper from chat 1.0.1's source (chat_source.py's doc): R rooms of 20 users, M messages per user.
- Each client sender makes M sends, each server receiver M recvs and M semops, each server sender M semops and
  19 x M sends, each client receiver 19 x M recvs; the client's main thread one semop. So per room 20 M + 380 M =
  400 M sends, as many recvs, and 40 M semops, plus the main thread's one.
- The client's figure counts sent plus received: 20 M + 380 M = 400 M messages per room, over the time from the
  release to the last client thread's end.
- Nothing is sent before the release: every client thread waits on the start semaphore first.
These runs use the estimated kernel paths (no recording needed); a room of one or two messages takes a second."""

from __future__ import annotations

import pytest

from smtlab.workloads import chat, chat_source
from smtlab.workloads.base import make_kernel


def _counting(monkeypatch):
    calls: dict[str, int] = {}
    real = chat_source.syscall

    def counted(name, *args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        return real(name, *args, **kwargs)

    monkeypatch.setattr(chat_source, "syscall", counted)
    return calls


@pytest.mark.parametrize("rooms,messages", [(1, 1), (1, 2), (2, 1)])
def test_one_system_call_per_message_and_hop(monkeypatch, rooms, messages):
    calls = _counting(monkeypatch)
    r = chat_source.run(rooms, False, "linux24", messages=messages)
    per_room = 400 * messages
    assert calls == {"tcp_send": rooms * per_room, "tcp_recv": rooms * per_room,
                     "semop": rooms * 40 * messages + 1}
    assert r["sent_by_room"] == [20 * messages] * rooms
    # The client's figure: sent plus received over the run from the release.
    assert r["throughput"] * r["window_ms"] / 1000.0 == pytest.approx(rooms * per_room, rel=1e-9)
    assert r["messages"] == messages and r["warm_ms"] == 0.0 and r["start_ms"] > 0
    assert r["counted"] == rooms * per_room


def test_every_thread_does_its_share():
    """Per task, from the channels: each up socket carried M messages, each user's semaphore M, each client socket
    19 M, all of them taken."""
    m = 2
    k = make_kernel(True, "linux25ht")
    rooms = chat_source.build(1, m)
    for t in rooms[0].tasks:
        k.spawn(t)
    while not chat_source.all_waiting(k, rooms):
        k.run(until=k.now + k.ms_to_cycles(0.5))
    chat_source.release(k, rooms)
    k.run(until=k.now + k.ms_to_cycles(50.0))
    room = rooms[0]
    assert [ch.sent for ch in room.to_server] == [m] * chat.USERS
    assert [ch.received for ch in room.user_sem] == [m] * chat.USERS
    assert [ch.received for ch in room.to_client] == [19 * m] * chat.USERS
    assert all(k.record(t).stats.finished is not None for t in room.tasks)


def test_nothing_moves_before_the_release():
    k = make_kernel(False, "linux24")
    rooms = chat_source.build(2, 1)
    for room in rooms:
        for t in room.tasks:
            k.spawn(t)
    while not chat_source.all_waiting(k, rooms):
        k.run(until=k.now + k.ms_to_cycles(0.5))
    # However long it waits, no client thread goes; and a start that outlasts the kernel's stall_ms (20 ms) is no
    # deadlock, as the client's main thread will come (the tasks are daemons, as in chat.py).
    k.run(until=k.now + k.ms_to_cycles(25.0))
    assert len(rooms[0].start.waiters) == 2 * 2 * chat.USERS
    assert sum(room.sent + room.received for room in rooms) == 0
    chat_source.release(k, rooms)
    k.run(until=k.now + k.ms_to_cycles(1.0))
    assert not rooms[0].start.waiters and sum(room.sent for room in rooms) > 0


def test_a_run_that_does_not_end_reports_no_figure():
    # The start alone takes about a ms (80 switch-ins); the run of 400 messages several more.
    with pytest.raises(chat.NoCompletion, match="the start did not finish"):
        chat_source.run(1, False, "linux24", messages=1, max_ms=0.1)
    with pytest.raises(chat.NoCompletion, match=r"of 400 messages counted"):
        chat_source.run(1, False, "linux24", messages=1, max_ms=2.0)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="at least one room and one message"):
        chat_source.build(0, 1)
    with pytest.raises(ValueError, match="at least one room and one message"):
        chat_source.build(1, 0)


def test_the_study_job_runs_the_whole_benchmark(monkeypatch):
    from smtlab.study import ht_linux

    seen = {}

    def fake_run(rooms, ht, scheduler, **kw):
        seen.update(rooms=rooms, ht=ht, scheduler=scheduler, **kw)
        return {"throughput": 1.0}

    monkeypatch.setattr(chat_source, "run", fake_run)
    monkeypatch.setattr(chat, "run", lambda *a, **kw: pytest.fail("the window model ran"))
    ht_linux._mt_job("chat", 30, True, "linux25ht", 4.0, 6.0, whole_run=True)
    assert seen == {"rooms": 30, "ht": True, "scheduler": "linux25ht"}


def test_whole_runs_are_a_chat_option_and_exclude_steady_windows(tmp_path):
    from smtlab.study import ht_linux, report

    with pytest.raises(ValueError, match="whole runs are a chat option"):
        ht_linux.run_multithreaded("dbench", tmp_path, True, 1, False, whole_run=True)
    with pytest.raises(ValueError, match="exclude each other"):
        ht_linux.run_multithreaded("chat", tmp_path, True, 1, False, steady=True, whole_run=True)
    with pytest.raises(ValueError, match="exclude each other"):
        report.run_study(tmp_path, quick=True, workers=1, only=["chat"], progress=False, echo=False,
                         steady_chat=True, chat_whole_run=True)


def test_under_linux24_a_run_reports_what_schedule_would_have_walked():
    """run_list_walk (Linux24.walk_counts from the release on): every switch-in after the release comes from a pick,
    so there are at least as many walks as the client threads that ran (each of the 40 runs once at least), and no
    walk holds more entries than the room has tasks (80 and the client's main thread). 2.5.32's O(1) pick has none."""
    r = chat_source.run(1, False, "linux24", messages=1)
    w = r["run_list_walk"]
    assert w["walks"] >= 2 * chat.USERS
    assert 0 < w["walked"] <= w["walks"] * (4 * chat.USERS + 1)
    assert "run_list_walk" not in chat_source.run(1, False, "linux25ht", messages=1)


def test_the_report_gives_the_walks_per_pick_and_per_counted_message():
    """The study's sentence, on made-up rows: 1 room x 2 messages counts 800 messages; alone 16 walks of 960 entries
    in all (60 per pick, 16 / 800 = 0.02 per counted message), with HT on 8 walks of 800 (100, 0.01)."""
    from smtlab.study import ht_linux

    def row(walks, walked):
        return {"counted": 800, "run_list_walk": {"walks": walks, "walked": walked}}

    text = ht_linux._walk_sentence([row(16, 960)], [row(8, 800)])
    assert "walked 60 run-list entries per pick alone and 100 with HT on, 0.02 and 0.01 picks" in text
    assert ht_linux._walk_sentence([{"counted": 800}], [row(8, 800)]) == ""
