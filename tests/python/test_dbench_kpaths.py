"""dbench's file-server operations are dbench 1.x's (the real benchmark's work, kernel-mode work from
kpath: streams): each operation makes the system calls that dbench 1.x's fileio.c makes for it (a read or write seeks
first, an open is followed by fstat), each call one instance of its own recorded path on the guest's ext4 disk
(workloads/kpath/probe.c, "file server" phase; lseek as the recorded null call), a read or write one 4 KiB call per
page it spans; without recordings each call keeps an estimate. The table of operations, sizes and lines comes from
client.txt (dbench 1.x, sahlberg/dbench 68d2eda), checked here against dbench's own throughput constant."""

from __future__ import annotations

import pathlib
import re

import pytest

from smtlab.os import Task
from smtlab.workloads import fileserver, kpaths
from smtlab.workloads.base import make_kernel
from smtlab.workloads.user_streams import USER_STREAMS_ENV

ROOT = pathlib.Path(__file__).parents[2]

#: dbench 1.x's operations and the Linux calls each makes, in order (fileio.c at 68d2eda: nb_write and nb_read do
#: lseek then write / read; nb_open does open(O_RDWR | O_CREAT) then fstat; nb_close, nb_stat, nb_unlink and
#: nb_rename one call each), as the recordings that serve them; written out here rather than read from the code.
EXPECTED = {"write": ["getppid", "file_write"], "read": ["getppid", "file_read"], "open": ["file_open", "fstat"],
            "create": ["file_create", "fstat"], "close": ["file_close"], "stat": ["stat"], "unlink": ["unlink"],
            "rename": ["rename"]}


def _recorded_paths() -> set[str]:
    text = (ROOT / "workloads/kpath/kpath_paths.h").read_text()
    return set(re.findall(r"^KPATH\((\w+),", text, flags=re.M))


@pytest.fixture
def task():
    k = make_kernel(False, "linux24")
    yield k.spawn(Task("dbench_0", []))
    k.machine.close()


def test_every_operation_makes_dbench_1x_calls_each_a_recording():
    ops = {name: [kpaths.REAL_PATHS[c] for c in calls] for name, _, calls, _ in fileserver.DBENCH_OPS}
    assert ops == EXPECTED
    assert {p for paths in ops.values() for p in paths} <= _recorded_paths()
    # The calls that move file data are the ones named by the operation's data class.
    for name, _, calls, data in fileserver.DBENCH_OPS:
        assert (data is not None) == (name in ("read", "write")), name
        assert data is None or f"file_{data}" in calls, name


def test_the_load_moves_dbench_1x_figure_of_132_mb_per_client():
    # dbench 1.x reports 132 * clients / t MB/s (dbench.c): 132 MB is what one client's client.txt moves. The size
    # table's bytes must add up to it (1 % for the rounding of the constant), and its calls to the reads and writes.
    total = sum(b for sizes in fileserver.DBENCH_SIZES.values() for _, _, b in sizes)
    assert total / 1e6 == pytest.approx(132, rel=0.01)
    counts = {name: n for name, n, _, _ in fileserver.DBENCH_OPS}
    for data, sizes in fileserver.DBENCH_SIZES.items():
        assert sum(n for _, n, _ in sizes) == counts[data], data
        for pages, n, b in sizes:
            # Every call of a class spans exactly its pages: more than pages - 1 and at most pages of 4 KiB.
            assert (pages - 1) * 4096 * n < b <= pages * 4096 * n, (data, pages)
    # About 2.26 lines of client.txt per operation that makes calls (REQUEST and REPLY lines, and ignored ones).
    assert 2 < fileserver.DBENCH_LINES_PER_OP < 2.5


def _steps(call: str, task, page=None):
    return fileserver.dbench_call(call, task, page)


def test_with_real_paths_each_call_is_one_recorded_instance(monkeypatch, task):
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "1")
    for name, _, calls, _ in fileserver.DBENCH_OPS:
        for call, want in zip(calls, EXPECTED[name]):
            steps = _steps(call, task, 7 if call.startswith("file_") and name in ("read", "write") else None)
            assert len(steps) == 1, (name, call)  # a page's copy is inside the recorded call
            m = re.fullmatch(r"kpath:(\w+),seed=(\d+),stack=(\d+)(,page=7)?", steps[0].source)
            assert m and m.group(1) == want, (name, call, steps[0].source)
            assert int(m.group(3)) == task.pid  # the task's own kernel stack


def test_without_recordings_each_call_keeps_an_estimate(monkeypatch, task):
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "0")
    trap, p = kpaths.TRAP_INSTRUCTIONS, kpaths.PATHS
    for call in ("lseek", "fstat", "stat", "file_open", "file_close", "file_create", "unlink", "rename"):
        steps = _steps(call, task)
        assert all(s.source is None for s in steps), call
        # lseek as the null call, fstat as fstat, the others one metadata operation (vfs_op); the trap with each.
        path = {"lseek": "null", "fstat": "fstat"}.get(call, "vfs_op")
        assert [s.instructions for s in steps] == [trap + p[path].instructions], call
    for call in ("file_read", "file_write"):
        # A page read or written: vfs_op and the copy of its 4 KiB (4 x 600 kernel instructions).
        assert [s.instructions for s in _steps(call, task, 3)] == [trap + p["vfs_op"].instructions,
                                                                   4 * p["copy_kb"].instructions], call


# --- the clients' own page-cache pages (page=P) ---------------------------------------------------------------------
#: 21 MiB of files per client (dbench's client.txt working set as fileserver.py models it) in pages of 4 KiB.
PAGES_PER_CLIENT = 21 * 1024 // 4


def test_each_client_walks_pages_of_its_own():
    assert fileserver.CLIENT_PAGES == PAGES_PER_CLIENT == 5376
    # Logical page L (client x 5376 + the walk's page) is one page of the 64 KiB block L of the simulated page cache.
    for client, op, logical in ((0, 0, 0), (0, 2, 2), (1, 0, PAGES_PER_CLIENT), (2, 7, 2 * PAGES_PER_CLIENT + 7)):
        assert 16 * logical <= fileserver.client_page(client, op) < 16 * (logical + 1)
    # The walk wraps after 21 MiB and never reaches the next client's pages; every page is another.
    assert fileserver.client_page(0, PAGES_PER_CLIENT) == fileserver.client_page(0, 0)
    pages = {fileserver.client_page(c, k) for c in range(3) for k in range(PAGES_PER_CLIENT)}
    assert len(pages) == 3 * PAGES_PER_CLIENT
    assert max(pages) < 16 * 3 * PAGES_PER_CLIENT
    # 120 clients (the study's largest point) stay inside page=P's range (0..2^28 - 1, page_cache.hpp).
    assert fileserver.client_page(119, PAGES_PER_CLIENT - 1) < 2**28


def test_two_clients_pages_share_their_place_modulo_64k_by_chance_only():
    # NetBurst's L1D holds one line per address modulo 64 KiB (core.lsu.alias_64k). Two clients run one script in
    # step, so at every op they copy their own page k at once; the kernel's frames for those pages are the
    # allocator's choice, so they share a place modulo 64 KiB (16 pages of 4 KiB) for about one k in 16: 336 of
    # 5,376 pages, binomial standard deviation 17.7; the band is 4 of them either way. Pages 21 MiB apart (a multiple
    # of 64 KiB) would share it at every k.
    same = sum(fileserver.client_page(0, k) % 16 == fileserver.client_page(1, k) % 16
               for k in range(PAGES_PER_CLIENT))
    assert 336 - 71 <= same <= 336 + 71
    # Within one client's walk the places spread too: each of the 16 is taken by about 336 pages.
    places = [0] * 16
    for k in range(PAGES_PER_CLIENT):
        places[fileserver.client_page(0, k) % 16] += 1
    assert all(336 - 71 <= n <= 336 + 71 for n in places)


def _client_steps(clients: int, client: int, ops: int, seed: int = 0) -> list:
    """The first ``ops`` system-call steps (with a kpath: source) of client ``client`` of a dbench of ``clients``."""
    k = make_kernel(False, "linux24")
    try:
        tasks = fileserver.build_dbench(k, clients, {}, seed=seed)
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


def test_reads_and_writes_copy_the_walks_next_pages_and_nothing_else_names_one(monkeypatch):
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
    assert len(pages) >= 10  # 65 % of the operations read or write
    # Client 2's walk from its first page: logical pages 2 x 5376, 2 x 5376 + 1, ..., each in its own 64 KiB block.
    first = 2 * PAGES_PER_CLIENT
    assert [p // 16 for p in pages] == list(range(first, first + len(pages)))


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
    a, b = k.steps.resolve_source(task, plain), k.steps.resolve_source(task, plain)
    assert a is b
    c, d = k.steps.resolve_source(task, paged), k.steps.resolve_source(task, paged)
    assert c is not d
    assert opened == [plain, paged, paged]
    assert paged not in task._record.sources and plain in task._record.sources


def test_every_client_runs_the_same_script_with_its_own_instances(monkeypatch):
    # dbench 1.x: every client replays the one client.txt, so the clients' calls come in the same order; each has
    # its own kernel stack, instances and pages. Another seed draws another script.
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "1")
    monkeypatch.setenv(USER_STREAMS_ENV, "0")

    def calls(specs):
        return [re.match(r"kpath:(\w+),", s).group(1) for s in specs]

    a, b = _client_steps(3, 0, 80), _client_steps(3, 2, 80)
    assert calls(a) == calls(b)
    assert a != b  # stacks, instance draws and pages differ
    assert calls(_client_steps(3, 0, 80, seed=1)) != calls(a)
