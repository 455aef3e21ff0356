"""The study's file-system kernel work on recorded paths: AIM9 sync_disk_cp's read of 1 KiB from its
source file runs Linux 6.1's read() of a cached ext4 file (kpath:disk_read, workloads/kpath/probe_fs.c) instead of
the 1-byte read of /dev/zero plus a copy estimate; dbench's write-back daemon (bdflush) runs Linux 6.1's
write-back code for 16 KiB of dirty pages (kpath:writeback: do_writepages -> ext4_writepages, the bio submitted),
four instances per 64 KiB request, instead of the "writeback" estimate. With real paths off every step keeps exactly
its estimated instruction count (the estimates are written out below)."""

from __future__ import annotations

import pathlib
import re

import pytest

from smtlab.os import IO, Block, Compute
from smtlab.workloads import aim9, fileserver, kpaths
from smtlab.workloads.base import make_kernel

ROOT = pathlib.Path(__file__).parents[2]

# The estimates (kpaths._TABLE at commit 882d20c), in instructions: the trap (int 0x80 + iret)
# 450; read (1 byte of /dev/zero) 700; copy_kb 600 per KiB; fs_write 3,500; fsync 4,000.
TRAP, READ, COPY_KB, FS_WRITE, FSYNC = 450, 700, 600, 3500, 4000


def _kpath_names() -> list[str]:
    text = (ROOT / "workloads/kpath/kpath_paths.h").read_text()
    return re.findall(r"^KPATH\((\w+),", text, flags=re.M)


@pytest.fixture
def kernel_stub():
    k = make_kernel(False, "linux24")
    yield k
    k.machine.close()


def _kpath_of(step) -> str:
    assert isinstance(step, Compute) and step.source is not None, step
    m = re.fullmatch(r"kpath:(\w+),seed=\d+,stack=\d+", step.source)
    assert m, step.source
    return m.group(1)


def _one_sync_op(k, key: str) -> list:
    """The steps of AIM9's first sync-disk operation (no warm-up), up to its two disk waits (data block, inode)."""
    task = aim9._sync_test(aim9.BY_KEY[key], k, 1, 0, {})[0]
    steps: list = []
    for step in task.program():
        steps.append(step)
        if sum(isinstance(s, IO) for s in steps) == 2:
            break
    return steps


def test_the_read_mapping_names_a_recorded_path():
    assert kpaths.REAL_PATHS["disk_read"] == "disk_read"
    assert "disk_read" in _kpath_names()
    # A recording of its own: not the 1-byte read of /dev/zero that sync_disk_cp ran before.
    assert kpaths.REAL_PATHS["read"] == "read" != kpaths.REAL_PATHS["disk_read"]


def test_sync_disk_cp_reads_with_the_recorded_1k_read(real_paths, kernel_stub):
    steps = _one_sync_op(kernel_stub, "sync_disk_cp")
    # AIM's loop, the read of 1 KiB (its copy in the recording), the 1 KiB write, fsync, then the two disk waits.
    assert steps[0].source is None and steps[0].instructions == 40
    assert [_kpath_of(s) for s in steps[1:4]] == ["disk_read", "disk_write", "fsync"]
    assert [type(s) for s in steps[4:]] == [IO, IO]
    # No estimated kernel stretch left in the operation: the only Compute without a source is AIM's loop.
    assert sum(1 for s in steps if isinstance(s, Compute) and s.source is None) == 1


def test_sync_disk_wrt_does_not_read(real_paths, kernel_stub):
    steps = _one_sync_op(kernel_stub, "sync_disk_wrt")
    assert [_kpath_of(s) for s in steps[1:3]] == ["disk_write", "fsync"]
    assert [type(s) for s in steps[3:]] == [IO, IO]


def test_sync_disk_cp_keeps_its_estimates(estimates, kernel_stub):
    steps = _one_sync_op(kernel_stub, "sync_disk_cp")
    assert all(not isinstance(s, Compute) or s.source is None for s in steps)
    # The estimate: loop, read() + copy of 1 KiB, write + copy of 1 KiB, fsync, the two disk waits.
    assert [s.instructions for s in steps if isinstance(s, Compute)] == [40, TRAP + READ, COPY_KB, TRAP + FS_WRITE,
                                                                         COPY_KB, TRAP + FSYNC]
    assert [type(s) for s in steps[-2:]] == [IO, IO]


# --- dbench's write-back daemon -------------------------------------------------------------------------------------
# Before the recording (kpaths._TABLE at commit 882d20c): "writeback" 2,500 instructions per dirtied 4 KiB block, 16
# blocks per request (a client wakes bdflush every 16 writes of 4 KiB), one step for all of a wake-up's requests.
WRITEBACK_PER_BLOCK, BLOCKS_PER_REQUEST = 2500, 16
#: 64 KiB of dirty pages per request, 16 KiB per recorded instance (workloads/kpath/probe_fs.c).
INSTANCES_PER_REQUEST = 64 // 16


def _bdflush_wakeup(k, pending: int, after_io: bool = False) -> list:
    """The steps bdflush runs for one wake-up that finds ``pending`` requests besides the one that woke it, up to its
    disk wait (``after_io``: up to its next wait for work, the Block)."""
    tasks = fileserver.build_dbench(k, 1, {}, seed=0)
    flush = next(t for t in tasks if t.name == "bdflush")
    program = iter(flush.program())
    block = next(program)
    assert isinstance(block, Block)
    block.channel.pending = pending
    steps: list = []
    for step in program:
        if isinstance(step, Block):
            break
        steps.append(step)
        if isinstance(step, IO) and not after_io:
            break
    return steps


def test_the_writeback_mapping_names_a_recorded_path():
    assert kpaths.REAL_PATHS["writeback"] == "writeback"
    assert "writeback" in _kpath_names()


def test_bdflush_runs_four_recorded_writebacks_per_request(real_paths, kernel_stub):
    steps = _bdflush_wakeup(kernel_stub, 2)  # 3 requests: the waking one and 2 pending
    compute, io = steps[:-1], steps[-1]
    assert isinstance(io, IO)
    assert [_kpath_of(s) for s in compute] == ["writeback"] * (3 * INSTANCES_PER_REQUEST)
    # Each instance its own draw (different recorded instances, as real write-backs differ).
    assert len({s.source for s in compute}) == len(compute)


def test_each_writeback_is_followed_by_its_recorded_completion_after_the_disk(real_paths, kernel_stub):
    # The disk's completion interrupt (kpath:writeback_irq, cut out of the recording of the submission): one per
    # recorded writeback, after the disk's time, each its own draw; then bdflush waits for work again.
    steps = _bdflush_wakeup(kernel_stub, 1, after_io=True)  # 2 requests
    io = [i for i, s in enumerate(steps) if isinstance(s, IO)]
    assert len(io) == 1
    before, after = steps[: io[0]], steps[io[0] + 1 :]
    assert [_kpath_of(s) for s in before] == ["writeback"] * (2 * INSTANCES_PER_REQUEST)
    assert [_kpath_of(s) for s in after] == ["writeback_irq"] * (2 * INSTANCES_PER_REQUEST)
    assert len({s.source for s in after}) == len(after)
    assert kpaths.REAL_PATHS["writeback_irq"] == "writeback_irq"
    names = _kpath_names()
    assert names.index("writeback_irq") == names.index("writeback") + 1  # a DEVICE_IRQ path follows its SUBMIT path


def test_bdflush_has_no_completion_without_recordings(estimates, kernel_stub):
    steps = _bdflush_wakeup(kernel_stub, 1, after_io=True)
    assert [type(s) for s in steps] == [Compute, IO]


def test_bdflush_keeps_its_estimate(estimates, kernel_stub):
    steps = _bdflush_wakeup(kernel_stub, 2)
    assert [type(s) for s in steps] == [Compute, IO]
    assert steps[0].source is None
    assert steps[0].instructions == 3 * BLOCKS_PER_REQUEST * WRITEBACK_PER_BLOCK
