"""With real kernel paths and user programs on (the study's default), the multithreaded workloads run recorded code
only: every step that a task of chat, dbench or tbench computes names a source of its own (a recorded
kpath: instance or a recorded user program's instance), never an estimate, i.e. a stretch of the task's own
generated stream (a Compute without a source). The kernel's own paths (switch, timer, wake-up IPI) are attached by
the kernel, not computed as steps, and are recorded too when real paths are on (tests/python/test_kpath_*.py).

A fallback to an estimate (a call missing from kpaths.REAL_PATHS, a user program that was not traced, a helper that
runs its estimate although recordings are on) would make part of the study's HT gains those of gen:mix again, and
nothing else would say so: the expected count, 0, follows from the study's design (docs/study.md, "Real kernel
paths" and "Real user programs"). The one documented exception is chat's batch of more than 20 messages (the
recordings stop at 20): the recorded batch of 20 plus ``tcp_msg`` per message beyond it; those steps are counted
apart and must come from such batches only, each exactly (n - 20) x ``tcp_msg``. The same hook with real kernel
paths off must see estimated steps, or it would pass by construction.

The single-task rows of LMbench and AIM9 are checked the same way (their loops are workloads/user/loops.c, the
fork rows' hello workloads/user/hello.c): no estimate at all."""

from __future__ import annotations

import collections
from typing import Any

import pytest

from smtlab.os import Compute, steps
from smtlab.workloads import aim9, chat, fileserver, kpaths, lmbench, user_streams


def _estimated_steps(monkeypatch, run, big_batches: list[int] | None = None,
                     results: list[dict[str, Any]] | None = None) -> collections.Counter:
    """Runs ``run()`` and returns, per task name without its number, the instructions of every Compute step without
    a source that a task started, except the extra messages of chat's batches beyond the recorded sizes, whose
    sizes go to ``big_batches``; ``run()``'s result goes to ``results``."""
    results = [] if results is None else results
    seen: collections.Counter = collections.Counter()
    extras: dict[int, Compute] = {}  # id -> step, kept alive so that an id is not reused
    check, batch_call = steps.check_step, chat._batch_call

    def batch(path: str, n: int, me: Any) -> list[Any]:
        out = batch_call(path, n, me)
        for s in out:
            if isinstance(s, Compute) and s.source is None:
                largest = max(kpaths.TCP_BATCHES)
                assert n > largest, (path, n)
                assert s.instructions == (n - largest) * kpaths.PATHS["tcp_msg"].instructions, (path, n, s)
                extras[id(s)] = s
                if big_batches is not None:
                    big_batches.append(n)
        return out

    def counting(task: Any, step: Any) -> None:
        if isinstance(step, Compute) and step.source is None and step.instructions and extras.get(id(step)) is not step:
            seen[task.name.rstrip("0123456789_")] += step.instructions
        check(task, step)

    monkeypatch.setattr(steps, "check_step", counting)
    monkeypatch.setattr(chat, "_batch_call", batch)
    results.append(run())
    return seen


def _chat() -> dict[str, Any]:
    # One room (20 users) for 1 + 3 ms with HT on: long enough that every role of the room runs (asserted), short
    # enough for a unit test (about 5 s). Equals are served in turn (run_list_head=False): under 2.4.19's own order,
    # the head, whether the client senders run in so short a window depends on the recording's instances (a fresh
    # clone's recording gave none; docs/study.md, "2.4.19's run-list order"), and this test is about the streams.
    r = chat.run(1, True, "linux24", 1.0, 3.0, scheduler_params={"run_list_head": False})
    assert chat.whole_pipeline_ran(r), r["dispatches_by_role"]
    return r


def _tbench() -> dict[str, Any]:
    r = fileserver.run("tbench", 3, True, "linux25ht", 1.0, 2.0)
    assert r["throughput"] > 0
    return r


def _dbench() -> dict[str, Any]:
    r = fileserver.run("dbench", 3, True, "linux24", 1.0, 2.0)
    assert r["throughput"] > 0
    return r


RUNS = {"chat": _chat, "tbench": _tbench, "dbench": _dbench}


@pytest.mark.parametrize("workload", sorted(RUNS))
def test_the_multithreaded_workloads_run_no_estimate(real_paths, streams_on, monkeypatch, workload):
    big: list[int] = []
    results: list[dict[str, Any]] = []
    seen = _estimated_steps(monkeypatch, RUNS[workload], big, results)
    assert not seen, f"{workload} ran estimated instructions with recordings on: {dict(seen)}"
    # The window's statistics say the same (base.machine_summary: the study's "Generated streams" line), except
    # for the batches' estimate, which only chat has.
    (r,) = results
    assert r["code_instructions"] > 0 and (r["generated_instructions"] > 0) == (workload == "chat" and bool(big))
    # One room's start-up holds batches of more than 20 (each server sender collects the 19 other users' messages,
    # up to 4 in flight each): the exception is exercised, not only allowed.
    assert (len(big) > 0) == (workload == "chat") and all(n > max(kpaths.TCP_BATCHES) for n in big), big


def test_the_hook_sees_the_estimates_without_real_kernel_paths(streams_on, monkeypatch):
    # tbench's calls with real paths off: each send and receive is the trap plus its estimated path (kpaths.syscall),
    # so every task has estimated steps.
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "0")
    results: list[dict[str, Any]] = []
    seen = _estimated_steps(monkeypatch, _tbench, results=results)
    assert seen["tbench"] > 0 and seen["tbench_srv"] > 0, dict(seen)  # clients tbench_N, servers tbench_srv_N
    assert 0 < results[0]["generated_instructions"] <= results[0]["code_instructions"]


# The single-task rows (the LMbench and AIM9 loops): each operation's calls are recorded kpath:
# instances and the benchmark's loop between two calls is the recorded loops.c (user_streams "lmbench_loop" and
# AIM9's "aim9_creat", "aim9_link", "aim9_sync", "aim9_sync_rw", as AIM's sources write them); the exec'd hello of
# the fork rows is the recorded hello.c from its write on. No estimate remains (docs/study.md "Real user programs").
# Quick mode: a few dozen operations per row.
SINGLE = {"lmbench": ("simple_syscall", "simple_open_close", "signal_handler_overhead", "pipe_latency",
                      "process_fork_exit", "process_fork_execve", "process_fork_sh_c"),
          "aim9": ("creat-clo", "link_test", "sync_disk_rw", "sync_disk_wrt", "sync_disk_cp")}


def _single_rows() -> list[tuple[str, str]]:
    return [(w, key) for w, keys in SINGLE.items() for key in keys]


@pytest.mark.parametrize("workload,key", _single_rows())
def test_the_single_task_rows_run_no_estimate(real_paths, streams_on, monkeypatch, workload, key):
    module = lmbench if workload == "lmbench" else aim9
    results: list[dict[str, Any]] = []
    seen = _estimated_steps(monkeypatch, lambda: module.run(key, True, "linux24", quick=True), results=results)
    assert not seen, f"{workload} {key} ran estimated instructions with recordings on: {dict(seen)}"
    assert results[0]["generated_instructions"] == 0


@pytest.mark.parametrize("module,key", [(lmbench, "simple_syscall"), (aim9, "sync_disk_rw")])
def test_the_hook_sees_the_loop_estimates_without_user_programs(real_paths, monkeypatch, module, key):
    # User programs off: each operation's loop is the estimate _USER_LOOP (two-sided: the hook sees it).
    monkeypatch.setenv(user_streams.USER_STREAMS_ENV, "0")
    seen = _estimated_steps(monkeypatch, lambda: module.run(key, True, "linux24", quick=True))
    assert seen[key] > 0 and seen[key] % module._USER_LOOP == 0, dict(seen)
