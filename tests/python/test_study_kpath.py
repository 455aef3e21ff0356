"""The study's system calls on real kernel paths: a task's call runs one recorded kpath: instance (its
retired instructions are that instance's, mostly at kernel addresses), each task on its own kernel stack, and with
no recording to be had the study says so in one line and uses the estimates. Expected values come from the
recording's manifest (kpaths.json) and from the path table, not from a model run."""

from __future__ import annotations

import json
import os
import pathlib
import re

from smtlab import Source
from smtlab.os import Compute, Task, Yield
from smtlab.workloads import kpaths
from smtlab.workloads.base import make_kernel


def _manifest_instance(source_name: str) -> tuple[int, int]:
    """(records, kernel records) of the instance a kpath source serves, from the cache's manifest."""
    m = re.fullmatch(r"kpath:(\w+)#(\d+)(,stack=\d+)?", source_name)
    assert m, source_name
    if os.environ.get("SMTLAB_KPATH_CACHE"):
        path = pathlib.Path(os.environ["SMTLAB_KPATH_CACHE"]) / "kpaths.json"
    else:  # the compiled default: kpath/ in the build tree the module came from (the newest, if there are several)
        found = sorted(pathlib.Path(__file__).parents[2].glob("build*/kpath/kpaths.json"),
                       key=lambda p: p.stat().st_mtime)
        assert found, "no kpath cache in a build tree, though enable_real_paths() opened one"
        path = found[-1]
    manifest = json.loads(path.read_text())
    _, length, kernel = manifest["paths"][m.group(1)]["instances"][int(m.group(2))]
    return length, kernel


def test_a_tasks_system_call_runs_the_recorded_kernel_path(real_paths):
    k = make_kernel(False, "linux24")
    holder: list[Task] = []

    def program():
        yield from kpaths.syscall("tcp_send", task=holder[0])

    t = Task("sender", program, source=kpaths.task_spec(1))
    holder.append(t)
    k.spawn(t)
    k.run()
    (spec, src), = k.record(t).sources.items()  # the one source its call opened
    assert spec == f"kpath:tcp_send,seed={t.pid},stack={t.pid}"
    length, kernel = _manifest_instance(src.name)
    # It retired exactly the recorded instance: the send from user mode, the kernel path, the return.
    assert t.stats.instructions == length == src.retired
    # ... which is kernel code for the most part (a loopback send runs the receiver's side in the same call).
    assert kernel / length > 0.9
    k.machine.close()


def test_two_tasks_run_their_calls_on_their_own_kernel_stacks(real_paths):
    a, b = kpaths.real_spec("tcp_recv", Task("a", [])), kpaths.real_spec("tcp_recv", Task("b", []))
    assert a == b == "kpath:tcp_recv,seed=0,stack=0"  # not spawned: no pid, the recording as it is
    k = make_kernel(False, "linux24")
    ta, tb = k.spawn(Task("a", [Compute(1)], source=kpaths.task_spec(1))), k.spawn(Task("b", [Compute(1)],
                                                                                         source=kpaths.task_spec(2)))
    sa, sb = Source(kpaths.real_spec("tcp_recv", ta)), Source(kpaths.real_spec("tcp_recv", tb))
    assert sa.name.endswith(f",stack={ta.pid}") and sb.name.endswith(f",stack={tb.pid}") and ta.pid != tb.pid
    k.machine.close()


def test_every_context_switch_runs_one_whole_recorded_switch(real_paths):
    k = make_kernel(False, "linux24")
    length, kernel = _manifest_instance(Source(kpaths.REAL_SWITCH_SPEC).name)
    assert k.switch_instructions == length and kernel / length > 0.9
    # Two tasks handing the one logical CPU back and forth: every switch-in runs the recorded switch once.
    for i in range(2):
        k.spawn(Task(f"t{i}", [Compute(2000), Yield(), Compute(2000), Yield(), Compute(2000)],
                     source=kpaths.task_spec(10 + i)))
    k.run()
    switches = sum(t.stats.dispatches for t in k.tasks)
    assert switches >= 4
    assert k.cpus[0].kernel_instructions == switches * length
    k.machine.close()


def test_a_call_without_a_recording_keeps_its_estimate(real_paths):
    # vfs_op (dbench's file operations) has no recorded path: trap + the path table's count.
    (step,) = kpaths.syscall("vfs_op")
    assert step.source is None and step.instructions == kpaths.TRAP_INSTRUCTIONS + kpaths.PATHS["vfs_op"].instructions
    # A scaled call is not one recorded instance either.
    (step,) = kpaths.syscall("tcp_send", 2.0)
    assert step.instructions == kpaths.TRAP_INSTRUCTIONS + 2 * kpaths.PATHS["tcp_send"].instructions


def test_no_recording_falls_back_with_one_line(monkeypatch, tmp_path):
    # A cache that cannot be created (its parent is a file) stands for any missing piece (qemu, kernel, plugin).
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SMTLAB_KPATH_CACHE", str(blocker / "kpath"))
    monkeypatch.delenv(kpaths.REAL_PATHS_ENV, raising=False)
    why = kpaths.enable_real_paths()
    assert why is not None and why.startswith("real kernel paths unavailable (") and "\n" not in why
    assert str(blocker / "kpath") in why
    assert not kpaths.real_paths_on()
    (step,) = kpaths.syscall("tcp_send")
    assert step.source is None and step.instructions == kpaths.TRAP_INSTRUCTIONS + kpaths.PATHS["tcp_send"].instructions


def test_the_study_report_names_the_real_paths_or_the_fallback(monkeypatch, tmp_path):
    from smtlab.study.report import real_kernel_paths_note

    monkeypatch.delenv(kpaths.REAL_PATHS_ENV, raising=False)
    cache = os.environ.get("SMTLAB_KPATH_CACHE")
    assert real_kernel_paths_note(False).endswith("(--no-kpath)") and not kpaths.real_paths_on()
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SMTLAB_KPATH_CACHE", str(blocker / "kpath"))
    note = real_kernel_paths_note(True)
    assert note.startswith("kernel paths: real kernel paths unavailable") and not kpaths.real_paths_on()
    if cache:
        monkeypatch.setenv("SMTLAB_KPATH_CACHE", cache)
    else:
        monkeypatch.delenv("SMTLAB_KPATH_CACHE")
    note = real_kernel_paths_note(True)
    assert kpaths.real_paths_on() and "null (getppid)" in note and "tcp_send" in note
    monkeypatch.delenv(kpaths.REAL_PATHS_ENV, raising=False)
