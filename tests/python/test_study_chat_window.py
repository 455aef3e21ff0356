"""chat's measurement window (issue 11 §2/§3, chatfix): a window that holds no client message must never be
reported as 0 messages/s, and the warm-up must cover the start-up convoy.

On paper: chat spawns 4 tasks per user, 20 users per room; 3 of them (client receiver, server receiver and sender)
block on their socket as soon as they run. The adaptive warm-up waits until each of those has been switched in once,
and each switch runs the kernel's switch path (estimated: kpaths.SWITCH_INSTRUCTIONS = 1,500 instructions, real
kernel paths off here). With R = 3 rooms that is 180 x 1,500 = 270,000 instructions; the netburst core retires at
most 3 per cycle (both logical CPUs together), so the start-up takes more than 90,000 cycles = 0.056 ms at 1.6 GHz,
HT off or on. A fixed 0.002 ms warm-up and
0.002 ms window (6,400 cycles in all) therefore ends before the first client sender has run: the old fixed window
reported 0 messages/s (the default study showed 0 from 30 rooms up with HT off, the same convoy at 60 x R switches
of the recorded ~4,800-instruction switch path)."""

from __future__ import annotations

import math

import pytest

from smtlab.workloads import chat, kpaths, user_streams

ROOMS = 3
BLOCKING_TASKS = ROOMS * chat.USERS * 3
# 1.6 GHz netburst core, retire width 3 (configs/netburst.toml), every task's first switch (module doc).
CONVOY_MS = BLOCKING_TASKS * kpaths.SWITCH_INSTRUCTIONS / 3 / 1.6e6


@pytest.fixture(autouse=True)
def _estimates(monkeypatch):
    # The estimates the bound above is derived from: no recorded kernel paths, no recorded user programs.
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "0")
    monkeypatch.setenv(user_streams.USER_STREAMS_ENV, "0")


@pytest.mark.parametrize("ht", [False, True])
def test_every_room_sends_in_a_window_shorter_than_the_start_up(ht):
    r = chat.run(ROOMS, ht, "linux24", warm_ms=0.002, window_ms=0.002)
    # The warm-up ran until every receiver and server task had been switched in once: longer than the convoy's lower bound.
    assert r["warm_ms"] > CONVOY_MS
    assert 0.002 <= r["window_ms"] and r["warm_ms"] + r["window_ms"] <= chat.MAX_MS
    # Every room sent in the window (the window extends until then), so at least one message per room over the
    # window's length; the old fixed window reported 0 here.
    assert min(r["sent_by_room"]) >= 1
    assert r["throughput"] >= ROOMS / (r["window_ms"] / 1000.0) * 0.999
    # Upper bound: a client message costs at least its user work, the trap and the send path (estimates), and the
    # core retires at most 3 instructions per cycle.
    per_message = chat.USER_WORK + kpaths.TRAP_INSTRUCTIONS + kpaths.PATHS["tcp_send"].instructions
    assert r["throughput"] <= 3 * 1.6e9 / per_message


def test_no_message_in_the_window_raises_instead_of_reporting_zero():
    # The bound (0.01 ms) is shorter than the start-up convoy (> 0.056 ms, module doc): no sender has run.
    with pytest.raises(chat.NoCompletion, match="no client message was sent in the window"):
        chat.run(ROOMS, False, "linux24", warm_ms=0.002, window_ms=0.002, max_ms=0.01)


def test_study_job_reports_chat_no_completion_as_missing(monkeypatch):
    from smtlab.study import ht_linux

    def boom(*args, **kwargs):
        raise chat.NoCompletion("chat 50 rooms: no client message was sent in the window")

    monkeypatch.setattr(chat, "run", boom)
    r = ht_linux._mt_job("chat", 50, False, "linux24", 1.0, 1.0)
    assert math.isnan(r["throughput"]) and "no client message" in r["no_completion"]
