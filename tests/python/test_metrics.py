"""Multiprogram metrics, with values worked out by hand."""

from __future__ import annotations

import pytest

from smtlab import metrics


def test_two_threads_at_full_and_half_speed():
    alone, shared = [2.0, 1.0], [2.0, 0.5]  # IPCs: the first unaffected, the second at half speed
    assert metrics.speedups(shared, alone) == [1.0, 0.5]
    assert metrics.weighted_speedup(shared, alone) == pytest.approx(1.5)
    assert metrics.antt(shared, alone) == pytest.approx((1 + 2) / 2)
    assert metrics.hmean_speedup(shared, alone) == pytest.approx(2 / (1 + 2))
    assert metrics.fairness(shared, alone) == pytest.approx(0.5)


def test_times_are_inverted():
    # Execution times: 100 alone, 150 shared -> speedup 2/3 each.
    assert metrics.weighted_speedup([150, 150], [100, 100], times=True) == pytest.approx(4 / 3)


def test_bad_input():
    with pytest.raises(ValueError, match="2 shared values but 1"):
        metrics.weighted_speedup([1, 2], [1])
    with pytest.raises(ValueError, match="non-positive"):
        metrics.antt([0.0], [1.0])
    with pytest.raises(ValueError, match="no programs"):
        metrics.fairness([], [])


def test_run_traces_baselines_agree_with_these_functions():
    """`run_traces(..., baselines=True)` computes the metrics in C++ from each thread's IPC beside its sibling and
    alone; this module's functions, a separate implementation, must give the same figures from the same IPCs."""
    import smtlab

    cfg = smtlab.load_config("netburst")
    r = smtlab.run_traces(cfg, ["gen:mix", "gen:chase,footprint=4m"], 20000, baselines=True)
    mp = r["multiprogram"]
    shared = [t["ipc"] for t in mp["threads"]]
    alone = [t["ipc_alone"] for t in mp["threads"]]
    assert shared == [cpu["ipc"] for cpu in r["logical_cpus"][:2]]
    assert mp["stp"] == pytest.approx(metrics.weighted_speedup(shared, alone), rel=1e-12)
    assert mp["antt"] == pytest.approx(metrics.antt(shared, alone), rel=1e-12)
    assert mp["hmean"] == pytest.approx(metrics.hmean_speedup(shared, alone), rel=1e-12)
    assert mp["fairness"] == pytest.approx(metrics.fairness(shared, alone), rel=1e-12)
    assert "multiprogram" not in smtlab.run_traces(cfg, ["gen:mix", "gen:mix"], 2000)
    with pytest.raises(smtlab.UsageError, match="two or more traces"):
        smtlab.run_traces(cfg, ["gen:mix"], 2000, baselines=True)
