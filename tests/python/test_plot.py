"""smtlab.plot: each helper returns a figure with what it promises (lines per policy, a cell per axis pair, one bar
per run and thread whose height is the CPI), from small hand-made tables."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from smtlab import plot  # noqa: E402


@pytest.fixture
def table():
    rows = []
    for policy, bonus in (("round_robin", 0.0), ("icount", 0.1)):
        for rob in (64, 126):
            for wl, base in (("a", 1.0), ("b", 1.4)):
                rows.append({"core.fetch_policy": policy, "core.rob.entries": rob, "workload": wl,
                             "stp": base + bonus + rob / 1000, "status": "ok"})
    rows.append({"core.fetch_policy": "icount", "core.rob.entries": 64, "workload": "c", "stp": None,
                 "status": "failed"})
    return pd.DataFrame(rows)


@pytest.fixture
def cpi():
    rows = []
    for run, (base, dram) in enumerate(((0.5, 2.0), (0.4, 0.1))):
        for thread in (0, 1):
            for comp, v in (("base", base), ("mem_dram", dram * (thread + 1)), ("pause", 0.0)):
                rows.append({"run": run, "thread": thread, "component": comp, "cpi": v})
    return pd.DataFrame(rows)


def test_metric_vs_axis_draws_one_line_per_policy_with_means(table):
    fig = plot.metric_vs_axis(table, "stp", "core.rob.entries", by="core.fetch_policy")
    assert isinstance(fig, Figure)
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    assert set(lines) == {"round_robin", "icount"}
    # mean over workloads a and b: (1.0 + 1.4) / 2 + bonus + rob / 1000; the failed row is left out
    assert list(lines["icount"].get_xdata()) == [64, 126]
    assert list(lines["icount"].get_ydata()) == pytest.approx([1.2 + 0.1 + 0.064, 1.2 + 0.1 + 0.126])
    fig.canvas.draw()  # renders under Agg


def test_heatmap_has_one_cell_per_axis_pair(table):
    fig = plot.heatmap(table, "stp", "core.fetch_policy", "core.rob.entries")
    im = fig.axes[0].get_images()[0]
    grid = im.get_array()
    assert grid.shape == (2, 2)
    # columns sorted: icount, round_robin; rows: 64, 126
    assert grid[0, 0] == pytest.approx(1.2 + 0.1 + 0.064) and grid[1, 1] == pytest.approx(1.2 + 0.126)
    assert len(fig.axes[0].texts) == 4


def test_cpi_stacks_bar_heights_add_up_to_the_cpi(cpi):
    fig = plot.cpi_stacks(cpi)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["0 / 0", "0 / 1", "1 / 0", "1 / 1"]
    # pause is 0 everywhere and folded away; each bar = base + mem_dram
    tops = [0.0] * 4
    for patch in ax.patches:
        i = round(patch.get_x() + patch.get_width() / 2)
        tops[i] = max(tops[i], patch.get_y() + patch.get_height())
    assert tops == pytest.approx([2.5, 4.5, 0.5, 0.6])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["base", "mem_dram"]


def test_unknown_column_is_a_clear_error(table):
    with pytest.raises(KeyError, match="'ipc'"):
        plot.metric_vs_axis(table, "ipc", "core.rob.entries")
