"""Adaptive warm-ups and windows end when their criterion stops progressing.

chat's and tbench's warm-ups wait for the start-up convoy to pass (every receiver and server task has run once;
every client has read a reply), and their windows for every room or client to be served. Those criteria assume that
a scheduler serves equal tasks in turn. Under 2.4.19's head-first order a pair that wakes each other keeps the CPU
until the ticks use up its counters, so a criterion that needs every task moves a step per tick at best, and in the
study the bound (50 or 60 ms) decided every Linux24 point. ``workloads.base.run_until`` ends such a run when the
criterion's progress has not moved for ``STALL_MS`` (docs/study.md, "Stalled warm-ups").

run_until is checked here on a scripted kernel, where each expected stop is derived from the script; the workloads
are checked on small runs: with equals served in turn (``run_list_head=False``) the convoy progresses at every step,
so the stall rule changes nothing, and under the head-first order a chat warm-up stalls.
"""

from __future__ import annotations

import pytest

from bench_scripts import load as load_bench_script
from smtlab.workloads import base, chat

MS = 1000  # cycles per simulated ms of the scripted kernel


class ScriptedKernel:
    """Just what run_until uses: a clock in cycles that run() moves, and ms_to_cycles."""

    def __init__(self) -> None:
        self.now = 0
        self.runs = 0

    def ms_to_cycles(self, ms: float) -> int:
        return round(ms * MS)

    def run(self, until: int) -> None:
        assert until > self.now
        self.now = until
        self.runs += 1


def _progress_at(k: ScriptedKernel, changes: list[int]):
    """A progress value that grows by one at each cycle of ``changes`` (reached or passed)."""
    return lambda: sum(1 for c in changes if k.now >= c)


def test_a_criterion_that_keeps_progressing_runs_until_it_is_met():
    # Progress every 2 ms, met at 9 ms; stall 3 ms, bound 20 ms: gaps of 2 ms never reach 3, so "met" at 9 ms.
    k = ScriptedKernel()
    reason = base.run_until(k, lambda: k.now >= 9 * MS, _progress_at(k, [2 * MS, 4 * MS, 6 * MS, 8 * MS]),
                            cap=20 * MS, step=MS, stall_ms=3.0)
    assert (reason, k.now) == ("met", 9 * MS)


def test_a_criterion_that_stops_progressing_ends_a_stall_after_its_last_move():
    # Progress at 1 and 2 ms, never met: the last move is at 2 ms, so with a 3 ms stall the run ends at 5 ms, long
    # before the 50 ms bound; without a stall rule (None) the bound decides, at the last step that fits: 50 ms.
    k = ScriptedKernel()
    assert base.run_until(k, lambda: False, _progress_at(k, [MS, 2 * MS]), cap=50 * MS, step=MS,
                          stall_ms=3.0) == "stalled"
    assert k.now == 5 * MS
    k = ScriptedKernel()
    assert base.run_until(k, lambda: False, _progress_at(k, [MS, 2 * MS]), cap=50 * MS, step=MS,
                          stall_ms=None) == "bound"
    assert k.now == 50 * MS


def test_the_stall_clock_starts_at_the_call_and_the_bound_still_holds():
    # No progress at all, called at 10 ms: a 3 ms stall ends at 13 ms (the minimum warm-up before the call does not
    # count as stalled time). A bound at 12 ms comes first: "bound" at 12 ms. A criterion met at the call: no step.
    k = ScriptedKernel()
    k.now = 10 * MS
    assert base.run_until(k, lambda: False, lambda: 0, cap=50 * MS, step=MS, stall_ms=3.0) == "stalled"
    assert k.now == 13 * MS
    k = ScriptedKernel()
    k.now = 10 * MS
    assert base.run_until(k, lambda: False, lambda: 0, cap=12 * MS, step=MS, stall_ms=3.0) == "bound"
    assert k.now == 12 * MS
    k = ScriptedKernel()
    assert base.run_until(k, lambda: True, lambda: 0, cap=50 * MS, step=MS, stall_ms=3.0) == "met"
    assert k.runs == 0


def test_progress_gaps_finds_the_longest_still_stretch_of_a_script():
    # Progress at 1, 2, 6 and 7 ms, met at 8 ms, 0.5 ms steps: the gaps are 1, 1, 4, 1 and 1 ms, the longest from
    # 2 to 6 ms. Never met, the bound at 20 ms ends a 13 ms gap from the last move at 7 ms.
    k = ScriptedKernel()
    moves = [MS, 2 * MS, 6 * MS, 7 * MS]
    g = base.progress_gaps(k, lambda: k.now >= 8 * MS, _progress_at(k, moves), cap=20 * MS, step=MS // 2)
    assert g == {"longest_ms": 4.0, "longest_from_ms": 2.0, "longest_to_ms": 6.0, "met_ms": 8.0}
    k = ScriptedKernel()
    g = base.progress_gaps(k, lambda: False, _progress_at(k, moves), cap=20 * MS, step=MS // 2)
    assert g == {"longest_ms": 13.0, "longest_from_ms": 7.0, "longest_to_ms": 20.0, "met_ms": None}


def test_the_stall_lies_between_a_convoys_longest_gap_and_a_tick():
    """STALL_MS must exceed the longest gap in a convoy's progress under service in turn with a margin of 1.5 (chosen,
    module doc of base), and stay below 2.4.19's tick at HZ=100 (10 ms), the earliest a head-first pair can lose the
    CPU to the next, by the workloads' 1 ms step (a stall is seen at most one step late). The longest gap is measured
    here, on the point where it is longest (bench/progress_gaps.py measures them all): tbench's 120 clients with HT
    off under Linux25HT, from the start in 0.25 ms steps, with the warm-up's own criterion and progress; its 240 tasks'
    first dispatches come one after another, and the gap is the time from the last of them to the first reply read
    (about N server turns, fileserver.run). The model's paths and programs decide its length, so the check follows
    them, not a number measured once."""
    g = load_bench_script("progress_gaps").tbench_gaps(120, False, "linux25ht", 50.0)
    assert g["met_ms"] is not None and g["longest_ms"] > 1.0  # the convoy's gap is there to measure
    assert 1.5 * g["longest_ms"] <= base.STALL_MS, g
    assert base.STALL_MS + 1.0 < 10.0


@pytest.mark.parametrize("stall_ms", [None, base.STALL_MS])
def test_served_in_turn_a_chat_point_meets_its_criteria_whatever_the_stall_rule(stall_ms):
    # In turn, the 2 rooms' receivers and servers (spawned first) run one after another from the start, a switch
    # every few microseconds, so the warm-up's criterion moves at every 1 ms step and is met; the stall rule (on or
    # off) then gives the same point.
    r = chat.run(2, False, "linux24", 1.0, 1.0, max_ms=30.0, scheduler_params={"run_list_head": False},
                 stall_ms=stall_ms)
    assert r["warm_end"] == "met" and r["window_end"] == "met"
    ref = chat.run(2, False, "linux24", 1.0, 1.0, max_ms=30.0, scheduler_params={"run_list_head": False},
                   stall_ms=None)
    assert (r["throughput"], r["warm_ms"], r["window_ms"]) == (ref["throughput"], ref["warm_ms"], ref["window_ms"])


def test_under_the_head_first_order_a_chat_warm_up_stalls_instead_of_running_to_its_bound():
    """2.4.19's order (the default Linux24): the room's 20 client senders, spawned over the first 0.5 ms at the run
    list's head, and the tasks their messages wake, keep running ahead of the receivers and servers spawned before
    them, so the warm-up's criterion (every receiver and server has run once) stops moving when the senders arrive.
    The stall rule ends the warm-up STALL_MS after its 1 ms minimum, at the first 1 ms step past it: 1 + 8.5 -> 10 ms.
    Without the rule the bound would decide (14 ms in all here, the study's 60 ms), at every Linux24 point of the
    default study."""
    r = chat.run(1, False, "linux24", 1.0, 1.0, max_ms=14.0)
    assert r["warm_end"] == "stalled"
    assert 1.0 + base.STALL_MS <= r["warm_ms"] < 1.0 + base.STALL_MS + 1.0
    bounded = chat.run(1, False, "linux24", 1.0, 1.0, max_ms=14.0, stall_ms=None)
    assert bounded["warm_end"] == "bound" and bounded["warm_ms"] > 12.0


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "7.5"])
def test_a_stall_that_is_not_a_positive_number_is_refused_in_one_line(bad):
    # chat.run and fileserver.run pass their stall_ms here: a zero or negative stall would end every warm-up at its
    # minimum, NaN would never compare, so each is refused before anything runs.
    with pytest.raises(ValueError, match="stall_ms must be a positive number"):
        base.run_until(ScriptedKernel(), lambda: False, lambda: 0, cap=10 * MS, step=MS, stall_ms=bad)
