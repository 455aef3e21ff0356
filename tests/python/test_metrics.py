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
