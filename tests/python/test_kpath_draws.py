"""A task's successive calls of one recorded kernel path draw instances in turn (kpaths.DRAW_CYCLE), not one instance
per task for the whole run: a window in which one or two clients run must measure the path, not those clients'
draws. Derived from the rule itself: call k of a path by the task with pid p is seed p + 1,000,003 x
(k mod DRAW_CYCLE), whatever else the task or other tasks call in between; every run numbers the calls the same way,
so HT on and off see the same instances for the same calls."""

from __future__ import annotations

import re

from smtlab.workloads import kpaths

_SEED = re.compile(r"kpath:(\w+),seed=(\d+),stack=(\d+)")


class _Task:  # what kpaths reads of a task: its pid (and its identity, for the call count)
    def __init__(self, pid: int) -> None:
        self.pid = pid


def _seed(step) -> int:
    m = _SEED.fullmatch(step.source)
    assert m, step.source
    return int(m.group(2))


def test_successive_calls_cycle_through_the_draws(real_paths):
    a, b = _Task(7), _Task(8)
    seeds = [_seed(kpaths.syscall("read", task=a)[0]) for _ in range(2 * kpaths.DRAW_CYCLE)]
    assert seeds[: kpaths.DRAW_CYCLE] == [7 + 1_000_003 * k for k in range(kpaths.DRAW_CYCLE)]
    assert seeds[kpaths.DRAW_CYCLE:] == seeds[: kpaths.DRAW_CYCLE]  # bounded: a task opens at most DRAW_CYCLE
    # Counted per path and per task: another path's calls and another task's calls do not move a's count of "read".
    assert _seed(kpaths.syscall("write", task=a)[0]) == 7
    assert _seed(kpaths.syscall("read", task=b)[0]) == 8
    assert _seed(kpaths.syscall("read", task=a)[0]) == 7  # the 65th call: 64 mod 32 = 0


def test_recorded_numbers_calls_like_syscall(real_paths):
    a = _Task(3)
    first = kpaths.recorded("page_fault", [], a, times=3)
    assert [_seed(s) for s in first] == [3, 3 + 1_000_003, 3 + 2 * 1_000_003]
    assert _seed(kpaths.recorded("page_fault", [], a)[0]) == 3 + 3 * 1_000_003


def test_a_fresh_task_starts_again_at_draw_zero(real_paths):
    # Two runs of one workload (HT on, HT off) make new Task objects: call k is the same draw in both.
    for _ in range(2):
        t = _Task(11)
        assert [_seed(kpaths.syscall("stat", task=t)[0]) for _ in range(3)] == [11, 11 + 1_000_003, 11 + 2_000_006]


def test_estimates_count_no_calls(estimates):
    t = _Task(5)
    assert kpaths.syscall("read", task=t) == kpaths.estimated("read")
    assert kpaths.recorded("page_fault", ["estimate"], t) == ["estimate"]
