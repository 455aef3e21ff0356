"""chat's window and the benchmark's whole pipeline (the study's check chat.whole_pipeline_ran_in_window).

A client message is sent by a client sender, read by a server receiver, echoed by the server senders and read by the
client receivers; the published messages per second average whole runs of all four. ``chat.run`` reports how many
switch-ins each role had in its window (``dispatches_by_role``), and ``chat.whole_pipeline_ran`` is true only if
every role ran.

On paper (chat.py): a client sender keeps at most ``chat.WINDOW`` messages in flight and only its server receiver
returns credit. At the window's start a user therefore has at most WINDOW messages unacknowledged, so a user that
sends more than WINDOW messages in the window got credit in it: a server receiver ran in the window.
"""

from __future__ import annotations

import pytest

from smtlab.workloads import chat, kpaths, user_streams

ROLES = ("client_send", "client_recv", "server_recv", "server_send")


@pytest.fixture(autouse=True)
def _estimates(monkeypatch):
    # Estimated kernel paths and user work: fast, and the argument above does not depend on the streams.
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "0")
    monkeypatch.setenv(user_streams.USER_STREAMS_ENV, "0")


def test_the_check_needs_every_role():
    every = {"dispatches_by_role": {r: 1 for r in ROLES}}
    assert chat.whole_pipeline_ran(every)
    for r in ROLES:
        assert not chat.whole_pipeline_ran({"dispatches_by_role": {**every["dispatches_by_role"], r: 0}})
    assert not chat.whole_pipeline_ran({**every, "no_completion": "no message"})


def test_a_window_with_more_than_a_tcp_window_per_user_ran_the_server_receivers():
    r = chat.run(1, False, "linux24", warm_ms=1.0, window_ms=4.0)
    roles = r["dispatches_by_role"]
    assert set(roles) == set(ROLES) and all(n >= 0 for n in roles.values())
    (sent,) = r["sent_by_room"]
    assert roles["client_send"] > 0
    if sent > chat.USERS * chat.WINDOW:
        assert roles["server_recv"] > 0
    else:
        pytest.fail(f"the window is too short for the argument: {sent} messages for {chat.USERS} users")
