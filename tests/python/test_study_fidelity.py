"""The study's fidelity figure: mean |model - published| speed-up in percentage points over every row
that has both, computed here on tables whose answer is worked out by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from smtlab.study.fidelity import fidelity, fidelity_line, published_row_count, row_pairs


def test_mean_absolute_difference_by_hand():
    lm = pd.DataFrame({"kernel function": ["a", "b", "c"], "pub speed-up %": [0.0, -1.3, -4.0],
                       "model speed-up %": [0.0, -8.5, 0.2]})
    # chat: the geomean row is derived from the others and is left out; so is a row with no model number.
    chat = pd.DataFrame({"kernel": ["2.4.19"] * 4, "rooms": [20, 30, 40, "geomean"],
                         "pub speed-up %": [24.0, 22.0, 22.0, 24.0], "model speed-up %": [60.0, 32.0, math.nan, 50.0]})
    energy = pd.DataFrame({"threads": [0, 1, 4], "pub_speedup_pct": [math.nan, -0.3, 52.4],
                           "model_speedup_pct": [math.nan, 0.0, 40.4]}).set_index("threads")
    two_package = pd.DataFrame({"experiment": ["cpu_pair"], "Linux24 ms": [5.0]})  # nothing published: no rows
    f = fidelity({"lmbench": lm, "chat": chat, "sysbench_energy": energy, "two_package": two_package},
                 published_rows=99)
    # |0-0| + |-8.5+1.3| + |0.2+4| = 0 + 7.2 + 4.2 = 11.4 over 3; chat |60-24| + |32-22| = 46 over 2;
    # energy |0+0.3| + |40.4-52.4| = 0.3 + 12 = 12.3 over 2. All: (11.4 + 46 + 12.3) / 7 = 69.7 / 7.
    assert f["rows"] == 7
    assert f["mad_pp"] == pytest.approx(69.7 / 7)
    assert f["by_section"]["lmbench"] == {"mad_pp": pytest.approx(3.8), "rows": 3}
    assert f["by_section"]["chat"]["mad_pp"] == pytest.approx(23.0)
    assert f["by_section"]["sysbench_energy"]["mad_pp"] == pytest.approx(6.15)
    assert "two_package" not in f["by_section"]
    assert f["published_rows"] == 99
    assert "9.96 percentage points" not in fidelity_line(f) and "10.0 percentage points" in fidelity_line(f)


def test_no_comparable_row_is_not_a_number():
    f = fidelity({"two_package": pd.DataFrame({"x": [1]})}, published_rows=0)
    assert f["rows"] == 0 and math.isnan(f["mad_pp"])
    assert "no row" in fidelity_line(f)


def test_row_pairs_skip_geomean_and_nan():
    t = pd.DataFrame({"kernel": ["k", "k"], "clients": [20, "geomean"], "pub speed-up %": [29.0, 18.0],
                      "model speed-up %": [70.0, 66.0]})
    assert [(p, m) for _, p, m in row_pairs(t)] == [(29.0, 70.0)]


def test_published_row_count_from_the_reference_tables():
    # LMbench 14 rows + AIM9 59 rows + chat 4 / dbench 5 / tbench 5 per kernel x 2 kernels (28) + sysbench 1..6 (6)
    assert published_row_count() == 14 + 59 + 28 + 6
