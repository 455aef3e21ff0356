"""Wakeup preemption in the Linux 2.4 (goodness / reschedule_idle) and 2.5.32 (sleep_avg / effective_prio) models.

The scene: one logical CPU (both tasks pinned to CPU 0 of a 1x2 machine, so no idle CPU is allowed to the woken task)
runs a CPU hog (a daemon that never ends) and a sleeper that sleeps S cycles then computes a little, many times.
The wake-to-run latency of a wakeup is (start of the sleeper's next run segment) - (end of its last one + S).

On paper: when the sleeper preempts at wakeup, the kernel reschedules CPU 0 in the same event, so the latency is
exactly the context-switch cost (``switch_cycles``, nothing waits on the runqueue). Without preemption the sleeper
waits until the hog's slice ends: the hog gets a new slice when it is switched back in after the sleeper's short run,
so a sleeper waking S after that waits about SLICE - S (here 10 - 3 = 7 ticks; up to a tick more, as the slice
is checked at ticks).
Ticks and slices are scaled down (10 000-cycle ticks) to keep the runs short."""

from __future__ import annotations

import statistics

import pytest

import smtlab
from smtlab.os import Block, Channel, Compute, Kernel, Linux24, Linux25HT, Send, Sleep, Spawn, Task, Yield

TICK = 10_000
SLICE = 10 * TICK  # Linux24's full counter is therefore 10 ticks
SWITCH = 500
S = 3 * TICK  # the sleeper's sleep
WAKES = 40
FAST = dict(idle_interval_ms=TICK / 3e6, busy_interval_ms=10 * TICK / 3e6)


def _latencies(cfg, sched, *, sleeper_priority: int = 0) -> list[int]:
    k = Kernel(smtlab.Machine(cfg), sched, tick_cycles=TICK, time_slice_cycles=SLICE, switch_cycles=SWITCH)
    hog = k.spawn(Task("hog", [Compute(10**12)], source="gen:alu,count=0", affinity=[0], daemon=True))
    steps = []
    for _ in range(WAKES):
        steps += [Sleep(cycles=S), Compute(1000)]
    sleeper = k.spawn(Task("sleeper", steps, source="gen:alu,count=0,seed=3", affinity=[0],
                           priority=sleeper_priority))
    k.run()
    assert sleeper.done and hog.stats.instructions > 0
    pid = k.record(sleeper).pid
    segs = sorted((start, end, why) for cpu, p, start, end, why in k.segments if p == pid)
    out = [nxt[0] - (end + S) for (_, end, why), nxt in zip(segs, segs[1:]) if why == "sleep"]
    assert len(out) >= WAKES - 1
    return out


def test_linux24_sleeper_preempts_a_hog_at_once(cfg_1x2):
    """The hog uses up its counter, the sleeper keeps most of its own: preemption_goodness > 0, so CPU 0
    reschedules at the wakeup and the latency is the switch cost (median exactly; the mean allows the rare wakeups
    right after a counter recalculation, when the two counters are close)."""
    lat = _latencies(cfg_1x2, Linux24(**FAST))
    assert statistics.median(lat) == SWITCH
    assert statistics.mean(lat) < SLICE / 10


def test_linux24_without_wakeup_preemption_the_sleeper_waits_for_the_slice(cfg_1x2):
    """The same scene without the mechanism: the sleeper waits for the hog's slice to end (~7 ticks, see the
    module doc); at least half a slice, at most a slice plus a tick."""
    lat = _latencies(cfg_1x2, Linux24(wakeup_preempt=False, **FAST))
    assert SLICE / 2 <= statistics.median(lat) <= SLICE + TICK


def test_linux24_lower_goodness_does_not_preempt(cfg_1x2):
    """A nice-19 sleeper: goodness = cs + 1 + 15 against the hog's ch + 20 + 15 + 1. Counters start at the full 10
    and are recalculated as c/2 + 10, so cs <= 19 and 2.4 would need cs > ch + 20: the sleeper never preempts while
    the hog's counter is > 0. It runs when the hog's counter runs out (goodness 0): after the hog's fresh counter of
    10 ticks less the 3 ticks of sleep, so at least a tick and at most a slice plus a tick of rounding."""
    lat = _latencies(cfg_1x2, Linux24(**FAST), sleeper_priority=19)
    assert TICK <= min(lat[2:]) and statistics.median(lat) <= SLICE + TICK


def test_linux24_goodness_formula(cfg_1x2):
    """goodness() by hand: counter + 20 - nice, +15 on the CPU the task last ran on, +1 in the same address space,
    0 once the counter is used up."""
    sched = Linux24(**FAST)
    k = Kernel(smtlab.Machine(cfg_1x2), sched, tick_cycles=TICK, time_slice_cycles=SLICE, switch_cycles=SWITCH)
    t = k.spawn(Task("t", [Compute(1000)], source="gen:alu,count=0", priority=3))
    k.run()
    rec = k.record(t)
    sched.counter[t] = 4
    assert sched.goodness(t, rec.last_cpu, None) == 4 + 20 - 3 + 15
    assert sched.goodness(t, 1 - rec.last_cpu, rec.asid) == 4 + 20 - 3 + 1
    sched.counter[t] = 0
    assert sched.goodness(t, rec.last_cpu, rec.asid) == 0


def _run_order(cfg, programs: list[tuple[str, object]], **params: object) -> list[str]:
    """Spawns the programs in order on CPU 0 of ``cfg`` (one address space, no tick inside the run, so every counter
    stays full and every goodness equal) under Linux24; the names in the order each reached its ``Compute(1000)``."""
    order: list[str] = []
    k = Kernel(smtlab.Machine(cfg), Linux24(**FAST, **params), tick_cycles=10**9, time_slice_cycles=10**9,
               switch_cycles=SWITCH)
    for name, steps in programs:
        def program(steps=steps, name=name):
            for step in steps:
                if isinstance(step, Compute) and step.instructions == 1000:
                    order.append(name)
                yield step
        k.spawn(Task(name, program, source="gen:alu,count=0", affinity=[0], asid=1))
    k.run()
    return order


def test_linux24_runs_the_task_woken_last_first_among_equals(cfg_1x2):
    """2.4.19's add_to_runqueue() puts a woken task at the head of the run list and schedule() takes the first of the
    best goodness, so of three equal tasks woken in the order a, b, c, c runs first. The scene: a, b, c each block
    on their own channel; the waker sleeps until they have, then sends to a, b, c in that order and exits. Equal
    counters and one address space: preemption_goodness is 0, nobody preempts the waker, and when it exits the CPU
    takes c, then b, then a (a FIFO order would give a, b, c)."""
    def scene() -> list[tuple[str, object]]:
        chans = {n: Channel(n) for n in "abc"}
        programs = [("waker", [Sleep(cycles=200_000)] + [Send(chans[n]) for n in "abc"])]
        return programs + [(n, [Block(chans[n]), Compute(1000)]) for n in "abc"]

    assert _run_order(cfg_1x2, scene()) == ["c", "b", "a"]
    # run_list_head=False: woken tasks join the tail, so the same wake-ups run first come, first served.
    assert _run_order(cfg_1x2, scene(), run_list_head=False) == ["a", "b", "c"]


def test_linux24_a_yielding_task_goes_to_the_tail(cfg_1x2):
    """sched_yield() moves the caller to the tail of the run list (move_last_runqueue). Spawned x1, x2, y (each fork
    puts the child at the head): y runs first, yields, and so runs after x2 and x1; the forks alone give y, x2, x1."""
    programs = [("x1", [Compute(1000)]), ("x2", [Compute(1000)]), ("y", [Compute(500), Yield(), Compute(1000)])]
    assert _run_order(cfg_1x2, programs) == ["x2", "x1", "y"]


def test_linux25_sleeper_gets_the_bonus_and_preempts(cfg_1x2):
    """MAX_SLEEP_AVG scaled to 4 sleeps: after its first wakeup the sleeper's sleep_avg is S = MAX/4, bonus
    floor(10/4) - 5 = -3, prio 3; the hog has sleep_avg 0, bonus -5, prio 5. 3 < 5: the sleeper preempts at every
    wakeup (its sleep_avg only grows, by S per wake less a tick per tick it runs), so every latency is the switch
    cost. Both start at sleep_avg 0 (a launcher with none)."""
    sched = Linux25HT(max_sleep_avg_ms=4 * S / 3e6, launcher_sleep_avg_pct=0, **FAST)
    lat = _latencies(cfg_1x2, sched)
    assert max(lat) == SWITCH


def test_linux25_without_wakeup_preemption_the_sleeper_waits(cfg_1x2):
    """Same scene, fixed priorities only (equal): the sleeper waits for the hog's slice to end."""
    sched = Linux25HT(wakeup_preempt=False, max_sleep_avg_ms=4 * S / 3e6, launcher_sleep_avg_pct=0, **FAST)
    lat = _latencies(cfg_1x2, sched)
    assert SLICE / 2 <= statistics.median(lat) <= SLICE + TICK


def test_linux25_effective_prio_range(cfg_1x2):
    """effective_prio(): priority - (floor(10 sleep_avg / MAX) - 5): +5 with no sleep, -5 at MAX_SLEEP_AVG."""
    sched = Linux25HT(**FAST)
    k = Kernel(smtlab.Machine(cfg_1x2), sched, tick_cycles=TICK, time_slice_cycles=SLICE, switch_cycles=SWITCH)
    t = Task("t", [Compute(1000)], source="gen:alu,count=0", priority=2)
    k.spawn(t)
    mx = k.ms_to_cycles(2000.0)
    sched.sleep_avg[t] = 0
    assert sched.prio(t) == 2 + 5
    sched.sleep_avg[t] = mx
    assert sched.prio(t) == 2 - 5
    sched.sleep_avg[t] = mx // 2
    assert sched.prio(t) == 2


def test_linux25_started_tasks_inherit_from_a_launcher_at_the_cap(cfg_1x2):
    """A task spawned from outside is the child of the launching shell: CHILD_PENALTY 95 % of the launcher's
    sleep_avg, which is at MAX_SLEEP_AVG by default (bonus floor(10 x 0.95) - 5 = +4, prio -4), at half of it with
    launcher_sleep_avg_pct 50 (47.5 %: bonus floor(4.75) - 5 = -1), at 0 with 0 (bonus -5). A child forked by a task
    inherits 95 % of that task's. The values are read at the spawn, before any task has run or slept."""
    for pct, prio in ((100, -4), (50, 1), (0, 5)):
        sched = Linux25HT(launcher_sleep_avg_pct=pct, **FAST)
        k = Kernel(smtlab.Machine(cfg_1x2), sched, tick_cycles=TICK, time_slice_cycles=SLICE, switch_cycles=SWITCH)
        t = k.spawn(Task("t", [Compute(1000)], source="gen:alu,count=0"))
        mx = k.ms_to_cycles(2000.0)
        assert sched.sleep_avg[t] == (mx * pct // 100) * 95 // 100
        assert sched.prio(t) == prio


def test_linux25_forked_child_inherits_95_percent_of_its_parent(cfg_1x2):
    """wake_up_forked_process: a child forked by a running task (Spawn) starts at CHILD_PENALTY 95 % of its
    parent's sleep_avg at the fork, whatever the parent's is then (read as the child is enqueued)."""
    seen = {}

    class Watch(Linux25HT):
        def enqueue(self, task, reason):
            if reason == "fork" and task.parent is not None:
                seen["parent"] = self.sleep_avg[task.parent]
            return super().enqueue(task, reason)

    for pct in (100, 40):
        sched = Watch(launcher_sleep_avg_pct=pct, **FAST)
        k = Kernel(smtlab.Machine(cfg_1x2), sched, tick_cycles=TICK, time_slice_cycles=SLICE, switch_cycles=SWITCH)
        child = Task("child", [Compute(1000)], source="gen:alu,count=0")
        k.spawn(Task("parent", [Compute(50_000), Spawn(child), Compute(1000)], source="gen:alu,count=0"))
        k.run()
        assert seen["parent"] > 0 and sched.sleep_avg[child] == seen["parent"] * 95 // 100


def test_linux25_launcher_share_above_the_cap_is_refused():
    with pytest.raises(ValueError, match="launcher_sleep_avg_pct is a share of MAX_SLEEP_AVG, at most 100, not 101"):
        Linux25HT(launcher_sleep_avg_pct=101)


def test_linux25_settle_sends_sleepers_to_the_cap_and_hogs_to_zero(cfg_1x2):
    """settle_sleep_avg(): the estimator's long-run drift (+ time slept, - time run) judged from the time so far. The
    hog of the scene never sleeps, so it drifts to 0 (bonus -5, prio 5); the sleeper sleeps S = 3 ticks per 1000
    instructions of work, far more than it runs, so it drifts to the cap (bonus +5, prio -5). An exited task is left
    alone (forgotten at the next purge)."""
    sched = Linux25HT(**FAST)
    k = Kernel(smtlab.Machine(cfg_1x2), sched, tick_cycles=TICK, time_slice_cycles=SLICE, switch_cycles=SWITCH)
    hog = k.spawn(Task("hog", [Compute(10**12)], source="gen:alu,count=0", affinity=[0], daemon=True))
    sleeper = k.spawn(Task("sleeper", [Sleep(cycles=S), Compute(1000)] * WAKES, source="gen:alu,count=0,seed=3",
                           affinity=[0]))
    done = k.spawn(Task("done", [Compute(100)], source="gen:alu,count=0", affinity=[1]))
    k.run(until=10 * S)
    before = sched.sleep_avg[done]
    assert sched.settle_sleep_avg() == 1
    mx = k.ms_to_cycles(2000.0)
    assert sched.sleep_avg[hog] == 0 and sched.prio(hog) == 5
    assert sched.sleep_avg[sleeper] == mx and sched.prio(sleeper) == -5
    assert sched.sleep_avg[done] == before


def test_linux24_walk_counts_what_schedule_would_walk():
    """Linux24.walk_counts, on paper. One logical CPU, N tasks spawned before the run, each computing and exiting, no
    tick inside the run: every pick walks the whole run list (the waiting tasks; the CPU's own task has exited), so
    the picks walk N, N-1, ..., 1 entries, and a last one, when the last task exits, walks none: N + 1 walks,
    N (N + 1) / 2 entries. Every counter stays full, so nothing is recalculated."""
    n = 5
    cfg = smtlab.load_config(None, {"system.cores": 1, "core.threads": 1})
    sched = Linux24(**FAST)
    k = Kernel(smtlab.Machine(cfg), sched, tick_cycles=10**9, time_slice_cycles=10**9, switch_cycles=SWITCH)
    for i in range(n):
        k.spawn(Task(f"x{i}", [Compute(1000)], source="gen:alu,count=0", asid=1))
    k.run()
    assert sched.walk_counts() == {"walks": n + 1, "walked": n * (n + 1) // 2, "recalculations": 0,
                                   "recalculated": 0}


def test_linux24_walk_counts_the_recalculations():
    """Two CPU hogs on one logical CPU with 10-tick slices: A runs ticks 1-10, B ticks 11-20; at tick 20 both
    counters are 0, so schedule() recalculates (visiting both tasks) and walks the list again; A runs ticks 21-30,
    B 31-40, and the second recalculation comes at tick 40. Stopped at tick 45: two passes, four tasks visited.
    The walks: the first pick sees both tasks waiting (2 entries); every later one the running task, whose counter
    ran out, and the waiting one (2 entries), at ticks 10, 20 (twice), 30 and 40 (twice): 7 walks of 2."""
    cfg = smtlab.load_config(None, {"system.cores": 1, "core.threads": 1})
    sched = Linux24(**FAST)
    k = Kernel(smtlab.Machine(cfg), sched, tick_cycles=TICK, time_slice_cycles=SLICE, switch_cycles=SWITCH)
    for name in "AB":
        k.spawn(Task(name, [Compute(10**12)], source="gen:alu,count=0", asid=1, daemon=True))
    k.run(until=45 * TICK)
    counts = sched.walk_counts()
    assert counts == {"walks": 7, "walked": 14, "recalculations": 2, "recalculated": 4}
