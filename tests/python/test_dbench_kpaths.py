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
