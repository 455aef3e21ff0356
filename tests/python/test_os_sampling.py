"""Sampled Compute steps in the OS layer (Kernel(sample=...)): functional gaps between detailed windows must keep the
tasks' instruction counts exact, agree with the detailed run they stand for, and never reach across a context switch,
a halt or a timed event. Expected values: exact counts (each task retires what its steps ask), the detailed run of the
same kernel (what sampling estimates), and the kernel's own timeline (switches, ticks)."""

from __future__ import annotations

import pytest

import smtlab
from smtlab import UsageError
from smtlab.os import Block, Channel, Compute, Kernel, Linux24, Send, Task

# Scaled down with the run: a window of 10 k cycles after 20 k of warm-up, one per 200 k cycles.
SAMPLE = {"period": 200_000, "window": 10_000, "warmup": 20_000}
TICK = 100_000


def run(cfg, specs, n, sample, **kw):
    kw.setdefault("tick_cycles", TICK)
    kw.setdefault("time_slice_cycles", 4 * TICK)
    k = Kernel(smtlab.Machine(cfg), Linux24(), sample=sample, switch_cycles=500, **kw)
    tasks = [k.spawn(Task(f"t{i}", [Compute(n)], source=s)) for i, s in enumerate(specs)]
    k.run()
    return k, tasks


def test_two_siblings_sampled_agree_with_detail_and_keep_exact_counts(cfg_1x2):
    """Two tasks on the two threads of one core, 1.2 M instructions each: the sampled run retires exactly what each
    step asks, runs most of it functionally, and finishes each task within 5 % of the cycle the detailed run does.
    gen:mix's rate is steady over the run, so a window per 200 k cycles measures it well; 5 % is the error the
    machine-level sampler keeps on pairs (docs/sampling.md), widened for this run's 6-11 windows per task."""
    specs = ["gen:mix,count=0,seed=3", "gen:mix,count=0,seed=4"]
    n = 1_200_000
    kd, detailed = run(cfg_1x2, specs, n, None)
    ks, sampled = run(cfg_1x2, specs, n, SAMPLE)
    assert [t.stats.instructions for t in sampled] == [n, n]
    assert [ks.record(t).sources[t.source].retired for t in sampled] == [n, n]
    info = ks.sampling()
    assert info["windows"] >= 6 and info["gaps"] >= 6
    assert info["functional_instructions"] >= n  # more than half of the 2n ran functionally
    for d, s in zip(detailed, sampled):
        assert abs(s.stats.finished / d.stats.finished - 1) <= 0.05, (d.stats.finished, s.stats.finished)
    assert kd.sampling() is None


def test_no_gap_reaches_across_a_switch_or_a_tick(cfg_1x2):
    """Three tasks on two CPUs with a slice of one tick: every tick may preempt. No gap may contain a tick, a
    switch or a task's arrival or departure (a segment's start or end), and the tasks still retire exactly their
    counts. The check fails if a gap ran past the next timed event or over a change of what runs where."""
    specs = [f"gen:mix,count=0,seed={s}" for s in (5, 6, 7)]
    n = 900_000
    k, tasks = run(cfg_1x2, specs, n, SAMPLE, time_slice_cycles=TICK)
    assert [t.stats.instructions for t in tasks] == [n, n, n]
    assert sum(t.stats.preemptions for t in tasks) >= 3
    info = k.sampling()
    assert info["gaps"] >= 3
    gaps = k.sampler.gaps
    start = min(g[0] for g in gaps) // TICK * TICK
    ticks = range(start, max(g[1] for g in gaps) + TICK, TICK)
    edges = sorted({c for (_, _, s, e, _) in k.segments for c in (s, e)})
    for a, b in gaps:
        assert b > a
        assert not any(a < t < b for t in ticks), (a, b)
        assert not any(a < c < b for c in edges), (a, b)
    # Each change of what runs where starts a new warm-up: at least one per switch.
    assert info["warmups"] >= sum(t.stats.dispatches for t in tasks)


def test_same_seed_same_sampled_run(cfg_1x2):
    specs = ["gen:mix,count=0,seed=1", "gen:mix,count=0,seed=2"]
    a = [t.stats.finished for t in run(cfg_1x2, specs, 600_000, SAMPLE)[1]]
    b = [t.stats.finished for t in run(cfg_1x2, specs, 600_000, SAMPLE)[1]]
    assert a == b


def test_steps_whose_end_cannot_be_foreseen_run_in_detail(cfg_1x2):
    """Compute(sample=False) and a step that waits for a channel's message keep everything in detail: no gap."""
    k = Kernel(smtlab.Machine(cfg_1x2), Linux24(), sample=SAMPLE, tick_cycles=TICK)
    ch = Channel("c")
    a = k.spawn(Task("a", [Compute(500_000, sample=False), Send(ch)], source="gen:mix,count=0,seed=1"))
    b = k.spawn(Task("b", [Block(ch), Compute(100_000, sample=False)], source="gen:mix,count=0,seed=2"))
    k.run()
    assert a.stats.instructions == 500_000 and b.stats.instructions == 100_000
    assert k.sampling()["gaps"] == 0 and k.sampling()["functional_instructions"] == 0


def test_a_looping_step_on_a_finite_source_restarts_in_detail(cfg_1x2):
    """A finite source (50 k instructions) looped for 600 k: every gap stops before the source's end, so each
    restart happens in detail and the count stays exact."""
    spec = "gen:mix,count=50000,seed=9"
    k = Kernel(smtlab.Machine(cfg_1x2), Linux24(), sample=SAMPLE, tick_cycles=TICK)
    t = k.spawn(Task("t", [Compute(600_000, loop=True)], source=spec))
    k.run()
    assert t.stats.instructions == 600_000
    src = k.record(t).sources[spec]
    assert src.restarts == 11
    assert k.sampling()["gaps"] >= 1


@pytest.mark.parametrize("sample, message", [
    ("yes", "sample must be True, False, None or a dict"),
    ({"window": 0}, "sample['window'] must be a positive int"),
    ({"period": 1.5}, "sample['period'] must be a positive int"),
    ({"windows": 10}, "sample has no key 'windows'"),
    ({"period": 50_000}, "at least twice window + warmup"),
])
def test_bad_sample_options_are_refused_naming_the_key(cfg_1x2, sample, message):
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("+", r"\+")):
        Kernel(smtlab.Machine(cfg_1x2), Linux24(), sample=sample)


def test_compute_sample_must_be_a_bool():
    with pytest.raises(TypeError, match="Compute: sample must be a bool"):
        Compute(10, sample=1)
