"""bench/policy_study.py's grouping and checks, fed numbers worked out by hand: each check passes where the papers'
direction holds and is a miss, with its numbers, where it does not; MLP-aware fetch is always a miss (not modelled).
The study itself runs minutes (bench/README.md); its arithmetic is tested here."""

from __future__ import annotations

import math

import pytest

from bench_scripts import load as load_bench_script

ps = load_bench_script("policy_study")


def _row(pair, group, fetch, alloc, stp, hmean=None, fairness=1.0):
    hmean = stp / 2 if hmean is None else hmean
    return {"config": "netburst", "pair": pair, "group": group, "fetch": fetch, "allocation": alloc, "stp": stp,
            "antt": 1 / hmean, "hmean": hmean, "fairness": fairness}


def test_a_program_is_mem_by_its_loads_beyond_the_l2():
    data = {"logical_cpus": [{"instructions": 10_000, "loads_by_level": {"l1": 900, "l2": 80, "llc": 15, "dram": 5}}]}
    assert ps.mpki_beyond_l2(data) == pytest.approx(1000 * 20 / 10_000)  # 2.0: the LLC and DRAM loads only


def test_pairs_and_groups():
    kinds = {"a": "ILP", "b": "ILP", "m": "MEM"}
    pairs = ps.pairs_of(["a", "b", "m"], kinds)
    assert pairs == [("a", "b"), ("a", "m"), ("b", "m"), ("m", "m")]  # a MEM program also beside a copy of itself
    assert [ps.group_of(x, y, kinds) for x, y in pairs] == ["ILP+ILP", "ILP+MEM", "ILP+MEM", "MEM+MEM"]


def _rows(stall_stp=1.5, dcra_hmean=0.84, hill_stp=1.62, fairness=0.9, mlp_stp=1.55):
    rows = []
    for pair, group in (("a + m", "ILP+MEM"), ("m + m", "MEM+MEM")):
        rows += [_row(pair, group, "icount", "static", 1.4, hmean=0.8, fairness=fairness),
                 _row(pair, group, "stall", "static", stall_stp),
                 _row(pair, group, "flush", "static", 1.45),
                 _row(pair, group, "mlp", "static", mlp_stp),
                 _row(pair, group, "icount", "dcra", 1.6, hmean=dcra_hmean),
                 _row(pair, group, "icount", "hill_climbing", hill_stp)]
    return rows


def test_the_papers_directions_pass_on_numbers_that_follow_them():
    checks = ps.check_rows(_rows(), 0.1)
    assert checks["stall_flush_beat_icount"]["pass"]  # 1.5 and 1.45 above 1.4
    assert checks["dcra_hmean_at_least_static"]["pass"]  # 0.84 / 0.8 = +5 %, inside 0..16 %
    assert "+5.0 %" in checks["dcra_hmean_at_least_static"]["why"]
    assert checks["hill_climbing_at_least_dcra"]["pass"]  # 1.62 >= 1.6
    assert checks["no_starvation"]["pass"]
    assert checks["mlp_aware"]["pass"]  # 1.55 at least stall's 1.5 and flush's 1.45 in both groups
    assert "ILP+MEM: STP stall 1.500, flush 1.450, mlp 1.550" in checks["mlp_aware"]["why"]


def test_each_check_misses_where_its_direction_fails():
    assert not ps.check_rows(_rows(stall_stp=1.3), 0.1)["stall_flush_beat_icount"]["pass"]
    assert not ps.check_rows(_rows(dcra_hmean=0.79), 0.1)["dcra_hmean_at_least_static"]["pass"]  # below static
    assert not ps.check_rows(_rows(dcra_hmean=0.95), 0.1)["dcra_hmean_at_least_static"]["pass"]  # +18.75 %: too much
    assert not ps.check_rows(_rows(hill_stp=1.55), 0.1)["hill_climbing_at_least_dcra"]["pass"]
    assert not ps.check_rows(_rows(mlp_stp=1.48), 0.1)["mlp_aware"]["pass"]  # above flush's 1.45, below stall's 1.5
    starved = ps.check_rows(_rows(fairness=0.05), 0.1)["no_starvation"]
    assert not starved["pass"] and "a + m icount/static fairness 0.050" in starved["why"]


def test_a_group_without_pairs_is_a_miss_not_a_pass():
    rows = [r for r in _rows() if r["group"] != "ILP+MEM"]
    checks = ps.check_rows(rows, 0.1)
    assert not checks["stall_flush_beat_icount"]["pass"] and "nan" in checks["stall_flush_beat_icount"]["why"]
    assert not checks["dcra_hmean_at_least_static"]["pass"]
    assert not checks["mlp_aware"]["pass"] and "ILP+MEM: no pairs" in checks["mlp_aware"]["why"]


def test_the_summary_averages_per_group_and_policy():
    table = ps.summary(_rows())
    row = next(r for r in table if r["group"] == "ILP+MEM" and r["fetch"] == "icount" and r["allocation"] == "static")
    assert row["pairs"] == 1 and row["stp"] == pytest.approx(1.4) and row["antt"] == pytest.approx(1 / 0.8)
    assert math.isnan(ps.mean([]))
