"""chat's batched calls on recorded kernel paths: a chat task that wakes moves every queued message with
one send or recv. With real paths on, a batch of n = 2..20 messages runs the recording of that batch
(kpath:tcp_send_bN / tcp_recv_bN, workloads/kpath/probe_net.c), one instance drawn per call, and no per-message
estimate; a batch of 1 the 16-byte tcp_send / tcp_recv. With real paths off every call keeps exactly its estimated
instruction count (the estimates are written out below)."""

from __future__ import annotations

import pathlib
import re

import pytest

from smtlab.os import Block, Compute, Send
from smtlab.workloads import chat, kpaths
from smtlab.workloads.user_streams import USER_STREAMS_ENV

ROOT = pathlib.Path(__file__).parents[2]

# The estimates (kpaths._TABLE at commit cd36859), in instructions: the trap (int 0x80 + iret)
# 450; tcp_send 3,500; tcp_recv 2,000; tcp_msg 250 per message after the first.
TRAP, TCP_SEND, TCP_RECV, TCP_MSG = 450, 3500, 2000, 250
#: The batch sizes the probe records (written out, not read from the code under test).
RECORDED = range(2, 21)


def _kpath_names() -> list[str]:
    text = (ROOT / "workloads/kpath/kpath_paths.h").read_text()
    return re.findall(r"^KPATH\((\w+),", text, flags=re.M)


def _kpath_of(step) -> tuple[str, str]:
    """(path, seed) of a recorded step."""
    assert isinstance(step, Compute) and step.source is not None, step
    m = re.fullmatch(r"kpath:(\w+),seed=(\d+),stack=\d+", step.source)
    assert m, step.source
    return m.group(1), m.group(2)


def _server_send_steps(n: int) -> list:
    """The steps of the server sender of room 0, user 0, from its wake-up with ``n`` echoes queued to its Send."""
    room = chat._room(0, 1000)
    task = next(t for t in room.tasks if t.name == "server_send_0_0")
    program = iter(task.program())
    assert isinstance(next(program), Block)
    room.echo_out[0].pending = n - 1  # Block returned one message; n - 1 more are queued
    steps = []
    for step in program:
        steps.append(step)
        if isinstance(step, Send):
            return steps
    raise AssertionError("the server sender never sent")


@pytest.fixture
def no_user_streams(monkeypatch):
    # The user-mode work as estimates, so the steps below are the kernel's and the user work's estimate.
    monkeypatch.setenv(USER_STREAMS_ENV, "0")


def test_every_batch_size_has_both_recordings():
    names = _kpath_names()
    for n in RECORDED:
        for d in ("send", "recv"):
            assert f"tcp_{d}_b{n}" in names, (d, n)
            assert kpaths.REAL_PATHS[f"tcp_{d}_b{n}"] == f"tcp_{d}_b{n}"
    # Appended after every older path, so the older ids (positions) are unchanged.
    assert names.index("tcp_send_b2") > names.index("writeback")


def test_batches_run_their_recording(real_paths):
    me = chat.Task("server_recv_0_0", [])
    for path in ("tcp_send", "tcp_recv"):
        assert [_kpath_of(s)[0] for s in chat._batch_call(path, 1, me)] == [path]
        for n in RECORDED:
            steps = chat._batch_call(path, n, me)
            # One recorded call, nothing estimated beside it.
            assert [_kpath_of(s)[0] for s in steps] == [f"{path}_b{n}"], (path, n)
    # Each call draws its own instance: a task's successive calls of one batch size use other seeds.
    seeds = {_kpath_of(chat._batch_call("tcp_recv", 3, me)[0])[1] for _ in range(4)}
    assert len(seeds) == 4


def test_batches_beyond_the_recordings_take_the_largest_and_the_per_message_estimate(real_paths):
    # docs/study.md: the recording of the largest batch (20) and tcp_msg for each message beyond it.
    me = chat.Task("client_recv_0_0", [])
    for path in ("tcp_send", "tcp_recv"):
        for n in (21, 37):
            steps = chat._batch_call(path, n, me)
            assert _kpath_of(steps[0])[0] == f"{path}_b20", (path, n)
            assert len(steps) == 2 and steps[1].source is None and steps[1].instructions == (n - 20) * TCP_MSG


def test_server_echo_of_n_messages_is_one_recorded_send(real_paths, no_user_streams):
    for n in (1, 2, 5, 20):
        steps = _server_send_steps(n)
        kernel = [_kpath_of(s)[0] for s in steps if isinstance(s, Compute) and s.source is not None]
        assert kernel == ["tcp_send" if n == 1 else f"tcp_send_b{n}"], n
        assert steps[-1].count == n  # the n echoes go to the client in one Send


def test_batches_keep_their_estimates(estimates):
    me = chat.Task("client_recv_0_0", [])
    for n in (1, 2, 3, 8, 20, 21):
        assert [s.instructions for s in chat._batch_call("tcp_recv", n, me)] == [TRAP + TCP_RECV + (n - 1) * TCP_MSG]
        assert [s.instructions for s in chat._batch_call("tcp_send", n, me)] == [TRAP + TCP_SEND + (n - 1) * TCP_MSG]
        assert all(s.source is None for s in chat._batch_call("tcp_send", n, me))


def test_the_report_names_the_batch_recordings_once(real_paths):
    from smtlab.study.report import real_kernel_paths_note

    note = real_kernel_paths_note(True)
    assert "chat's batches of 2..20 messages (tcp_send_bN, tcp_recv_bN)" in note
    assert "tcp_send_b2," not in note and "tcp_recv_b20," not in note
    assert "tcp_send, tcp_recv," in note  # the 16-byte calls keep their own names
