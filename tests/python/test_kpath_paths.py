"""Every recorded kernel path used where the study's workloads make that call: with real paths on, the
workloads' open+close, creat+close, signal, select, page faults, execve, exit+wait, pipe write and read, file write
and fsync run kpath: instances (the IPI of a wake-up onto a halted CPU is the kernel's, kpath:wake_ipi; onto a busy CPU
after_wake runs kpath:resched_ipi); with them off, each keeps exactly its estimated instruction count.
The new paths (fsync on ext4, the cross-CPU pipe wake-up, the reschedule IPI) are checked against the recording's
manifest and the guest's kernel symbols (kpaths.json "symbols", from /proc/kallsyms), not against model output."""

from __future__ import annotations

import json
import os
import pathlib
import re
from types import SimpleNamespace

from smtlab.os import Task
from smtlab.workloads import aim9, kpaths, lmbench
from smtlab.workloads.base import make_kernel

ROOT = pathlib.Path(__file__).parents[2]


def _kpath_names() -> list[str]:
    text = (ROOT / "workloads/kpath/kpath_paths.h").read_text()
    return re.findall(r"^KPATH\((\w+),", text, flags=re.M)


def _manifest() -> dict:
    if os.environ.get("SMTLAB_KPATH_CACHE"):
        path = pathlib.Path(os.environ["SMTLAB_KPATH_CACHE"]) / "kpaths.json"
    else:
        found = sorted(ROOT.glob("build*/kpath/kpaths.json"), key=lambda p: p.stat().st_mtime)
        assert found, "no kpath cache in a build tree, though enable_real_paths() opened one"
        path = found[-1]
    return json.loads(path.read_text())


def _kpath_of(step) -> str:
    assert step.source is not None, step
    m = re.fullmatch(r"kpath:(\w+),seed=\d+,stack=\d+", step.source)
    assert m, step.source
    return m.group(1)


def test_every_real_path_names_a_recorded_path():
    names = set(_kpath_names())
    for model, kpath in kpaths.REAL_PATHS.items():
        assert kpath in names, (model, kpath)
    # The list: every one of these model calls has its recording (kpaths.REAL_PATHS is what the report names).
    for model in ("open+close", "creat+close", "kill+signal", "select10", "page_fault", "execve", "exit+wait",
                  "pipe_write", "pipe_read", "fs_write", "fsync"):
        assert model in kpaths.REAL_PATHS, model


def test_workload_calls_run_recorded_paths(real_paths):
    # LMbench: open/close, select, signal overhead each one recorded instance after the user loop (its estimate here:
    # user programs off).
    loop = lmbench._loop(1)
    assert [_kpath_of(s) for s in list(lmbench._open_close(loop))[1:]] == ["open_close"]
    assert [_kpath_of(s) for s in list(lmbench.BY_KEY["select_10_fds"].body(loop))[1:]] == ["select"]
    assert [_kpath_of(s) for s in list(lmbench._signal_overhead(loop))[1:]] == ["signal"]
    # n page faults are n recorded faults, each its own draw (instance) for the task.
    k = make_kernel(False, "linux24")
    t = k.spawn(Task("t", []))
    faults = lmbench._faults(3, t)
    assert [_kpath_of(s) for s in faults] == ["page_fault"] * 3 and len({s.source for s in faults}) == 3
    # The sleeping call's entry is in its recorded instance: nothing before the Block.
    assert kpaths.sleep_entry() == []
    # A wake-up from another logical CPU: the recorded reschedule IPI of a busy CPU, each task its own instances on
    # its own kernel stack, its k-th such wake-up drawn as its k-th call of a path (real_spec: pid + 1,000,003 x k
    # modulo DRAW_CYCLE), so that a task's IPIs sample the instances (which CPU case gets which:
    # tests/python/test_busy_wake_ipi.py); none from the same CPU.
    u = k.spawn(Task("u", []))
    specs = [kpaths.busy_wake_spec(t) for _ in range(kpaths.DRAW_CYCLE + 1)]
    assert specs[:2] == [f"kpath:resched_ipi,seed={t.pid},stack={t.pid}",
                         f"kpath:resched_ipi,seed={t.pid + 1_000_003},stack={t.pid}"]
    assert len(set(specs)) == kpaths.DRAW_CYCLE and specs[-1] == specs[0]
    assert kpaths.busy_wake_spec(u) == f"kpath:resched_ipi,seed={u.pid},stack={u.pid}"
    ch, woken = kpaths.WakeChannel("c"), SimpleNamespace(pid=t.pid, cpu=0)
    ch.waker_cpu = 0
    assert kpaths.after_wake(ch, woken) == []
    # Single calls through syscall(): execve, the waking pipe write, fsync.
    assert _kpath_of(kpaths.syscall("execve")[0]) == "execve"
    assert _kpath_of(kpaths.syscall("pipe_write")[0]) == "pipe_write_wake"
    assert _kpath_of(kpaths.syscall("fsync")[0]) == "fsync"
    k.machine.close()


def test_aim9_file_rows_run_recorded_paths(real_paths):
    k = make_kernel(False, "linux24")
    for key, expected in (("creat-clo", ["creat"]), ("link_test", ["link", "unlink"]),
                          ("sync_disk_wrt", ["disk_write", "fsync"])):
        test = aim9.BY_KEY[key]
        rec: dict = {}
        build = aim9._fs_test if test.kind == "fs" else aim9._sync_test
        (task,) = build(test, k, 1, 0, rec)
        steps = list(task.program())
        assert [_kpath_of(s) for s in steps if getattr(s, "source", None)] == expected, key
    k.machine.close()


def test_estimates_are_unchanged_without_recordings(estimates):
    trap, p = kpaths.TRAP_INSTRUCTIONS, kpaths.PATHS
    steps = list(lmbench._open_close(lmbench._loop(1)))[1:]
    assert all(s.source is None for s in steps)
    assert sum(s.instructions for s in steps) == 2 * trap + p["open"].instructions + p["close"].instructions
    (fault,) = lmbench._faults(3)
    assert fault.instructions == 3 * p["page_fault"].instructions
    assert kpaths.sleep_entry()[0].instructions == trap
    ch = kpaths.WakeChannel("c")
    ch.waker_cpu = 1
    (ipi,) = kpaths.after_wake(ch, SimpleNamespace(pid=3, cpu=0))
    assert ipi.instructions == trap + p["ipi"].instructions


def test_new_paths_are_in_the_manifest_kernel_mode_and_not_empty(real_paths):
    # Record-level checks (fsync reaches blk_mq_submit_bio and virtio_queue_rq, the IPI starts at its vector) are in
    # tests/integration/kpath_system_test.cpp; here what the manifest says: every disk_write / fsync region arrived
    # (one CPU, a begin and an end each), and the IPI instances are kernel runs only, one per spin at most and at
    # least half of the spins (a tick between the wake-up and the IPI may do the preemption instead).
    m = _manifest()
    n = m["count"]
    for name in ("disk_write", "fsync"):
        inst = m["paths"][name]["instances"]
        assert len(inst) == n, name
        assert all(length > kernel > 0 for _, length, kernel in inst), name  # the user-mode call around the kernel
    ipi = m["paths"]["resched_ipi"]["instances"]
    # Up to 2 more than the spins: kernel work the probe does not start (a kworker woken on CPU 1 by a timer on CPU 0)
    # can send CPU 1 a reschedule IPI of its own during a spin, a real one into the spinner (s19 CI2: 31 from 30).
    assert n // 2 <= len(ipi) <= n + 2
    assert all(length == kernel > 0 for _, length, kernel in ipi)
    for s in ("asm_sysvec_reschedule_ipi", "__schedule", "blk_mq_submit_bio", "virtio_queue_rq", "virtio_queue_rqs"):
        assert m["symbols"][s] >= 1 << 63, s  # a kernel address reported by the guest


def test_the_recording_is_made_without_kaslr(real_paths):
    # Booted with nokaslr (kpath.cpp, kBootOptions): the kernel's text lies at its link address, 0xffffffff81000000
    # (CONFIG_PHYSICAL_START 16 MiB in the top 2 GiB), within Debian 6.1's ~30 MiB of text and read-only data. With
    # KASLR it moves by a random multiple of 2 MiB up to 1 GiB (one recording had __schedule at 0xffffffffad2523d0),
    # and two recordings put the same code in other cache sets. Modules (ext4, virtio) lie at 0xffffffffc0000000+
    # either way and are left out.
    m = _manifest()
    assert "nokaslr" in m["boot_options"].split()
    core = {name: addr for name, addr in m["symbols"].items() if addr < 0xFFFFFFFFC0000000}
    assert {"__schedule", "tcp_sendmsg", "do_select"} <= core.keys()
    for name, addr in core.items():
        assert 0xFFFFFFFF81000000 <= addr < 0xFFFFFFFF83000000, (name, hex(addr))
