"""dbench's file-server operations run the recorded call of the same name (issue 11 §2: kernel-mode work from kpath:
streams): open, read and write of 4 KiB, lock, close, create, stat, unlink, rename and find each run one instance of
its own recorded path on the guest's ext4 disk (workloads/kpath/probe.c, "file server" phase); without recordings
each keeps exactly the estimate it had before the recordings (vfs_op, plus 4 x copy_kb for a read or a write)."""

from __future__ import annotations

import pathlib
import re

import pytest

from smtlab.os import Task
from smtlab.workloads import fileserver, kpaths
from smtlab.workloads.base import make_kernel
from smtlab.workloads.user_streams import USER_STREAMS_ENV

ROOT = pathlib.Path(__file__).parents[2]

#: dbench's operations and the Linux call that serves each (the probe's region), written out here rather than read
#: from the code under test.
EXPECTED = {"read": "file_read", "write": "file_write", "open": "file_open", "close": "file_close", "stat": "stat",
            "lock": "file_lock", "find": "getdents", "unlink": "unlink", "rename": "rename",
            "create": "file_create"}


def _recorded_paths() -> set[str]:
    text = (ROOT / "workloads/kpath/kpath_paths.h").read_text()
    return set(re.findall(r"^KPATH\((\w+),", text, flags=re.M))


@pytest.fixture
def task():
    k = make_kernel(False, "linux24")
    yield k.spawn(Task("dbench_0", []))
    k.machine.close()


def test_every_operation_has_a_recorded_path_of_its_own():
    ops = {name: call for name, _, _, _, call in fileserver.DBENCH_MIX}
    assert set(ops) == set(EXPECTED)
    recorded = _recorded_paths()
    for name, call in ops.items():
        assert kpaths.REAL_PATHS[call] == EXPECTED[name], name
        assert EXPECTED[name] in recorded, name
    # Ten operations, ten different recordings: none stands in for another.
    assert len({kpaths.REAL_PATHS[c] for c in ops.values()}) == len(ops)


def test_with_real_paths_each_operation_is_one_recorded_instance(monkeypatch, task):
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "1")
    for name, _, kib, _, call in fileserver.DBENCH_MIX:
        steps = fileserver.dbench_call(call, kib, task)
        assert len(steps) == 1, name  # the copy of a read or write is inside the recorded call
        m = re.fullmatch(r"kpath:(\w+),seed=(\d+),stack=(\d+)", steps[0].source)
        assert m and m.group(1) == EXPECTED[name], (name, steps[0].source)
        assert int(m.group(3)) == task.pid  # the task's own kernel stack


def test_without_recordings_each_operation_keeps_its_estimate(monkeypatch, task):
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "0")
    trap, p = kpaths.TRAP_INSTRUCTIONS, kpaths.PATHS
    for name, _, kib, _, call in fileserver.DBENCH_MIX:
        steps = fileserver.dbench_call(call, kib, task)
        assert all(s.source is None for s in steps), name
        # vfs_op's trap and path, then the 4 KiB copy of a read or a write: 3,000 + 4 x 600 kernel instructions.
        want = [trap + p["vfs_op"].instructions] + ([kib * p["copy_kb"].instructions] if kib else [])
        assert [s.instructions for s in steps] == want, name


# --- the clients' own page-cache pages (page=P) ---------------------------------------------------------------------
#: 21 MiB of files per client (dbench's client.txt working set as fileserver.py models it) in pages of 4 KiB.
PAGES_PER_CLIENT = 21 * 1024 // 4


def test_each_client_walks_pages_of_its_own():
    assert fileserver.CLIENT_PAGES == PAGES_PER_CLIENT == 5376
    assert [fileserver.client_page(0, k) for k in (0, 1, 2)] == [0, 1, 2]
    assert fileserver.client_page(1, 0) == PAGES_PER_CLIENT
    assert fileserver.client_page(2, 7) == 2 * PAGES_PER_CLIENT + 7
    # The walk wraps after 21 MiB and never reaches the next client's pages.
    assert fileserver.client_page(0, PAGES_PER_CLIENT) == 0
    assert fileserver.client_page(0, PAGES_PER_CLIENT - 1) == PAGES_PER_CLIENT - 1 < fileserver.client_page(1, 0)


def _client_steps(clients: int, client: int, ops: int) -> list:
    """The first ``ops`` system-call steps (with a kpath: source) of client ``client`` of a dbench of ``clients``."""
    k = make_kernel(False, "linux24")
    try:
        tasks = fileserver.build_dbench(k, clients, {}, seed=0)
        me = next(t for t in tasks if t.name == f"dbench_{client}")
        for t in tasks:
            k.spawn(t)
        out = []
        for step in me.program():
            src = getattr(step, "source", None)
            if isinstance(src, str) and src.startswith("kpath:"):
                out.append(src)
                if len(out) == ops:
                    break
        return out
    finally:
        k.machine.close()


def test_reads_and_writes_copy_consecutive_pages_and_nothing_else_names_one(monkeypatch):
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "1")
    monkeypatch.setenv(USER_STREAMS_ENV, "0")  # the clients' user work as estimates: only kernel calls name sources
    specs = _client_steps(3, 2, 60)
    pages = []
    for spec in specs:
        m = re.fullmatch(r"kpath:(\w+),seed=\d+,stack=\d+(?:,page=(\d+))?", spec)
        assert m, spec
        copies = m.group(1) in ("file_read", "file_write")
        assert (m.group(2) is not None) == copies, spec  # a page exactly on the calls that copy 4 KiB
        if copies:
            pages.append(int(m.group(2)))
    assert len(pages) >= 10  # 52 % of the operations read or write
    first = 2 * PAGES_PER_CLIENT
    assert pages == list(range(first, first + len(pages)))


def test_a_source_on_a_page_of_its_own_is_not_kept_by_the_task(monkeypatch, task):
    # Nearly every read or write names another page: the kernel opens its source for the step and keeps none, while
    # a spec without a page is opened once per task and reused (the task's sources stay bounded).
    from smtlab.os import steps

    opened = []

    class FakeSource:
        def __init__(self, spec):
            opened.append(spec)

    monkeypatch.setattr(steps, "Source", FakeSource)
    k = task.kernel
    plain, paged = "kpath:file_open,seed=1,stack=1", "kpath:file_read,seed=1,stack=1,page=7"
    a, b = steps.resolve_source(k, task, plain), steps.resolve_source(k, task, plain)
    assert a is b
    c, d = steps.resolve_source(k, task, paged), steps.resolve_source(k, task, paged)
    assert c is not d
    assert opened == [plain, paged, paged]
    assert paged not in task._record.sources and plain in task._record.sources
