"""The study's one fidelity figure: the mean absolute difference, in percentage points, between the
model's and the published HT speed-up over every published row the study runs, so that a reader sees at once whether
a change made the study truer.

Rows: every row of a section table that has both a published and a model speed-up (LMbench latencies, AIM9 rates,
chat / dbench / tbench per parameter value, sysbench per thread count). The geometric-mean rows of the multithreaded
tables are left out: they are computed from the other rows, and counting them would weigh those twice. A published
row the study has no model for (most of AIM9's 59 tests) cannot be compared; it is counted in ``published_rows`` so
that the coverage is printed beside the figure. Quick mode runs fewer rows, so its figure is not comparable with a
default run's."""

from __future__ import annotations

import math
from typing import Any, Mapping

import pandas as pd

from .common import read_reference

#: Column pairs (published, model) a section table may carry.
_COLUMNS = (("pub speed-up %", "model speed-up %"), ("pub_speedup_pct", "model_speedup_pct"))


def _is_geomean(row: pd.Series) -> bool:
    return any(isinstance(v, str) and v == "geomean" for v in row.values)


def row_pairs(table: pd.DataFrame) -> list[tuple[str, float, float]]:
    """(row label, published %, model %) for every row of ``table`` with both speed-ups finite, geomean rows left
    out. A table without speed-up columns gives no rows."""
    cols = next(((p, m) for p, m in _COLUMNS if p in table.columns and m in table.columns), None)
    if cols is None:
        return []
    out = []
    for idx, row in table.iterrows():
        if _is_geomean(row):
            continue
        pub, model = float(row[cols[0]]), float(row[cols[1]])
        if math.isfinite(pub) and math.isfinite(model):
            label = " ".join(str(v) for v in row.values[:2]) if table.index.name is None else f"{idx}"
            out.append((label, pub, model))
    return out


def published_row_count() -> int:
    """How many rows with a published HT speed-up the reference tables hold (data/reference/; geomeans and the idle
    sysbench point, which has no speed-up, not counted)."""
    n = len(read_reference("ht_linux_lmbench_2419.csv")) + len(read_reference("ht_linux_aim9_2419.csv"))
    mt = read_reference("ht_linux_multithreaded.csv")
    n += int((mt.param_name.astype(str) != "geomean").sum())
    sb = read_reference("smt_energy_sysbench.csv")
    n += int((sb.threads > 0).sum())
    return n


def fidelity(tables: Mapping[str, pd.DataFrame], published_rows: int | None = None) -> dict[str, Any]:
    """The fidelity figure over ``tables`` (section key -> table): ``mad_pp`` (mean |model - published| in
    percentage points, NaN when no row compares), ``rows`` compared, ``published_rows`` in the reference tables, and
    per section its own mean and row count."""
    per: dict[str, dict[str, float]] = {}
    diffs: list[float] = []
    for key, table in tables.items():
        pairs = row_pairs(table)
        if not pairs:
            continue
        d = [abs(m - p) for _, p, m in pairs]
        per[key] = {"mad_pp": sum(d) / len(d), "rows": len(d)}
        diffs += d
    return {"mad_pp": sum(diffs) / len(diffs) if diffs else float("nan"), "rows": len(diffs),
            "published_rows": published_row_count() if published_rows is None else published_rows,
            "by_section": per}


def fidelity_line(f: Mapping[str, Any]) -> str:
    """The figure as the one sentence study.md opens with."""
    if not f["rows"]:
        return "Fidelity: no row has both a published and a model speed-up."
    parts = ", ".join(f"{k} {v['mad_pp']:.1f} ({v['rows']})" for k, v in f["by_section"].items())
    return (f"**Fidelity: {f['mad_pp']:.1f} percentage points** mean absolute difference between model and published "
            f"HT speed-up over {f['rows']} rows ({f['published_rows']} published rows hold a speed-up; the others "
            f"have no model run). By section (pp, rows): {parts}. Lower is truer.")
