"""The study's network rows on recorded kernel paths: LMbench's "Select on 10 tcp fd's" runs Linux 6.1's
select() on 10 TCP sockets (kpath:select_tcp, workloads/kpath/probe_net.c), and tbench's reply runs the recorded send
and recv of 4 KiB (kpath:tcp_send_4k / tcp_recv_4k) with their copies, so no ``copy_kb`` estimate remains in tbench
with real paths on; the request keeps the 16-byte tcp_send / tcp_recv. With real paths off every step keeps exactly
its estimated instruction count (the estimates are written out below)."""

from __future__ import annotations

import pathlib
import re

import pytest

from smtlab.os import Block, Compute, Send
from smtlab.workloads import fileserver, kpaths, lmbench
from smtlab.workloads.base import make_kernel
from smtlab.workloads.user_streams import USER_STREAMS_ENV

ROOT = pathlib.Path(__file__).parents[2]

#: The model's calls and the probe's regions they must run (written out, not read from the code under test).
EXPECTED = {"select10_tcp": "select_tcp", "tcp_send_4k": "tcp_send_4k", "tcp_recv_4k": "tcp_recv_4k"}

# The estimates (kpaths._TABLE at commit 90ba973), in instructions: the trap (int 0x80 + iret)
# 450; select10_tcp 4,800; tcp_send 3,500; tcp_recv 2,000; copy_kb 600 per KiB, 4 KiB a reply.
TRAP, SELECT10_TCP, TCP_SEND, TCP_RECV, COPY_4K = 450, 4800, 3500, 2000, 4 * 600


def _kpath_names() -> list[str]:
    text = (ROOT / "workloads/kpath/kpath_paths.h").read_text()
    return re.findall(r"^KPATH\((\w+),", text, flags=re.M)


@pytest.fixture
def kernel_stub(monkeypatch):
    # The workloads' user-mode work as estimates (a stretch of the task's own stream), so the steps below are the
    # kernel's and one Compute of user work each.
    monkeypatch.setenv(USER_STREAMS_ENV, "0")
    k = make_kernel(False, "linux24")
    yield k
    k.machine.close()


def _kpath_of(step) -> str:
    assert isinstance(step, Compute) and step.source is not None, step
    m = re.fullmatch(r"kpath:(\w+),seed=\d+,stack=\d+", step.source)
    assert m, step.source
    return m.group(1)


def _tbench_round(k, side: str) -> tuple[list, dict]:
    """The steps of one request-reply round of tbench's client (side "c") or server ("s") for one client."""
    stats: dict = {}
    tasks = fileserver.build_tbench(k, 1, stats, seed=0)
    task = next(t for t in tasks if (t.name == "tbench_0") == (side == "c"))
    steps: list = []
    program = iter(task.program())
    for step in program:
        if side == "c" and stats["done"][0] == 1:
            break  # the client has read its reply: ``step`` is the next request's work
        steps.append(step)
        if side == "s" and isinstance(step, Send):
            break  # the reply is sent
    return steps, stats


def test_every_new_mapping_names_a_recorded_path():
    names = set(_kpath_names())
    for model, kpath in EXPECTED.items():
        assert kpaths.REAL_PATHS[model] == kpath, model
        assert kpath in names, kpath
    # Three new recordings, none standing in for an older one (the 16-byte calls keep theirs).
    assert len(set(EXPECTED.values()) | {"select", "tcp_send", "tcp_recv"}) == 6


def test_select_on_10_tcp_fds_runs_its_recording(real_paths):
    loop = lmbench._loop(1)  # LMbench's loop: its estimate (user programs off)
    steps = list(lmbench.BY_KEY["select_10_tcp_fds"].body(loop))
    assert steps[0].source is None and steps[0].instructions == 50
    assert [_kpath_of(s) for s in steps[1:]] == ["select_tcp"]
    # The file row keeps its own recording.
    assert [_kpath_of(s) for s in list(lmbench.BY_KEY["select_10_fds"].body(loop))[1:]] == ["select"]


def test_select_on_10_tcp_fds_keeps_its_estimate(estimates):
    steps = list(lmbench.BY_KEY["select_10_tcp_fds"].body(lmbench._loop(1)))
    assert all(s.source is None for s in steps)
    assert [s.instructions for s in steps] == [50, TRAP + SELECT10_TCP]


def test_tbench_reply_runs_the_4k_recordings_and_no_copy_estimate(real_paths, kernel_stub):
    client, stats = _tbench_round(kernel_stub, "c")
    server, _ = _tbench_round(kernel_stub, "s")
    kernel_of = lambda steps: [_kpath_of(s) for s in steps if isinstance(s, Compute) and s.source]  # noqa: E731
    # Client: user work, the request's 16-byte send, wake the server, sleep, then the 4 KiB reply's recv.
    assert kernel_of(client) == ["tcp_send", "tcp_recv_4k"]
    # Server: sleep, the request's recv, user work, the 4 KiB reply's send, wake the client.
    assert kernel_of(server) == ["tcp_recv", "tcp_send_4k"]
    # No estimated kernel stretch is left: the only Compute steps without a source are the user work, one per side.
    for steps in (client, server):
        assert sum(1 for s in steps if isinstance(s, Compute) and s.source is None) == 1
    assert [type(s) for s in client if not isinstance(s, Compute)] == [Send, Block]
    # The byte accounting counts the reply's 4 KiB once, when the client has read it.
    assert stats["bytes"] == 4096


def test_tbench_reply_keeps_its_estimates(estimates, kernel_stub):
    client, stats = _tbench_round(kernel_stub, "c")
    server, _ = _tbench_round(kernel_stub, "s")
    assert all(not isinstance(s, Compute) or s.source is None for s in client + server)
    work_c, work_s = fileserver.CLIENT_WORK, kpaths.PATHS["smb_op"].instructions
    # The estimates: the 16-byte calls', the reply's copy of 4 KiB a step of its own.
    assert [s.instructions for s in client if isinstance(s, Compute)] == [work_c, TRAP + TCP_SEND, TRAP + TCP_RECV,
                                                                          COPY_4K]
    assert [s.instructions for s in server if isinstance(s, Compute)] == [TRAP + TCP_RECV, work_s, TRAP + TCP_SEND,
                                                                          COPY_4K]
    assert stats["bytes"] == 4096
