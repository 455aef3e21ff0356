"""Common sweep figures with matplotlib: a metric against an axis (one line per policy), a heat map over two axes, and
CPI stacks (stacked bars per run and thread).

Every helper takes the table of :mod:`smtlab.sweep` (or the long CPI-stack frame), returns a
:class:`matplotlib.figure.Figure` and draws into ``ax`` when one is given. Figures are built without pyplot, so they
work under any backend (Agg in tests and on clusters) and show inline in notebooks. A table that is not a DataFrame
is a TypeError; one with nothing to draw (no rows, every run failed or NaN, an all-zero CPI), an unknown ``agg``, a
geometric mean over values that are not positive, or two arguments naming the same column is a ValueError naming it.
"""

from __future__ import annotations

from typing import Any, Sequence

from ._core import CPI_CAUSES

#: CPI-stack components in the order bars stack them (bottom first): the model's own list of causes, in its order;
#: unknown components go on top.
CPI_ORDER: tuple[str, ...] = tuple(CPI_CAUSES)


def _figure(ax: Any, figsize: tuple[float, float]) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _ok(df: Any) -> Any:
    return df[df["status"] == "ok"] if "status" in df.columns else df


def _need(df: Any, *cols: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise KeyError(f"smtlab.plot: no column {', '.join(repr(c) for c in missing)} "
                       f"(have: {', '.join(map(str, df.columns))})")


def _frame(df: Any, fn: str, name: str = "df") -> None:
    """TypeError unless ``df`` is a pandas DataFrame."""
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{fn}: {name} must be a pandas DataFrame, not {type(df).__name__}")


def _distinct(fn: str, **columns: str | None) -> None:
    """ValueError when two of the named arguments (``metric="stp", axis="stp"``) name the same column."""
    seen: dict[str, str] = {}
    for arg, col in columns.items():
        if col is None:
            continue
        if col in seen:
            raise ValueError(f"{fn}: {seen[col]} and {arg} are the same column {col!r}; they must differ")
        seen[col] = arg


#: Values of ``agg``: pandas' reductions by name, and "gmean" (geometric mean, of positive values only).
AGGS: tuple[str, ...] = ("count", "first", "gmean", "last", "max", "mean", "median", "min", "std", "sum", "var")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _agg_name(agg: Any) -> str:
    return agg if isinstance(agg, str) else getattr(agg, "__name__", str(agg))


def _gmean(values: Any) -> float:
    import numpy as np

    return float(np.exp(np.log(values).mean()))


def _rows(df: Any, fn: str, metric: str, cols: list[str], agg: Any, *, ok_only: bool = True) -> Any:
    """The (ok) rows of ``df`` with a value in every column of ``cols``, checked for ``agg``; a ValueError when none."""
    import pandas as pd

    if not (callable(agg) or agg in AGGS):
        raise ValueError(f"{fn}: unknown agg {agg!r} (known: {', '.join(AGGS)}, or a function)")
    data = (_ok(df) if ok_only else df)[cols].dropna(subset=cols)
    if data.empty:
        noun = "run" if ok_only else "row"
        what = "the table has no rows" if df.empty else f"{_count(len(df), noun)}, all failed or NaN"
        raise ValueError(f"{fn}: no rows with a value of {metric!r} to plot ({what})")
    if agg == "gmean" or agg in ("mean", "median", "std", "var", "sum"):
        values = pd.to_numeric(data[metric], errors="coerce")
        if values.isna().any():
            bad = data[metric][values.isna()].iloc[0]
            raise ValueError(f"{fn}: column {metric!r} holds a value that is not a number ({bad!r}); "
                             f"agg={agg!r} needs numbers")
        if agg == "gmean" and (values <= 0).any():
            n = int((values <= 0).sum())
            raise ValueError(f"{fn}: agg='gmean' needs positive values of {metric!r}, but {n} row(s) are zero or "
                             f"negative (e.g. {float(values[values <= 0].iloc[0])})")
    return data


def metric_vs_axis(
    df: Any, metric: str, axis: str, by: str | None = None, *, agg: str = "mean", ax: Any = None,
    marker: str = "o", title: str | None = None,
) -> Any:
    """``metric`` (a column such as ``"stp"``) against ``axis`` (e.g. ``"core.rob.entries"``), one line per value of
    ``by`` (e.g. ``"core.fetch_policy"``); rows sharing (by, axis) are combined with ``agg`` (mean over workloads and
    seeds by default; ``"gmean"`` for the geometric mean)."""
    fn = "metric_vs_axis"
    _frame(df, fn)
    _distinct(fn, metric=metric, axis=axis, by=by)
    cols = [axis, metric] + ([by] if by else [])
    _need(df, *cols)
    data = _rows(df, fn, metric, cols, agg)
    fig, ax = _figure(ax, (6.0, 4.0))
    groups = data.groupby(by, sort=True) if by else [(None, data)]
    lines = []
    for label, g in groups:
        series = g.groupby(axis, sort=True)[metric]
        lines.append((label, series.apply(_gmean) if agg == "gmean" else series.agg(agg)))
    if all(y.isna().all() for _, y in lines):
        raise ValueError(f"{fn}: agg={_agg_name(agg)!r} of {metric!r} gives no value at any point "
                         f"({_count(len(data), 'row')})")
    for label, y in lines:
        ax.plot([str(x) for x in y.index] if y.index.dtype == object else y.index, y.values, marker=marker,
                label=str(label) if by else metric)
    ax.set_xlabel(axis)
    ax.set_ylabel(metric if agg == "mean" else f"{metric} ({_agg_name(agg)})")
    if by:
        ax.legend(title=by)
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title)
    return fig


def heatmap(
    df: Any, metric: str, x: str, y: str, *, agg: str = "mean", ax: Any = None, annotate: bool = True,
    cmap: str = "viridis", fmt: str = "{:.2f}", title: str | None = None,
) -> Any:
    """``metric`` over two axes as a colour grid (``x`` columns, ``y`` rows), ``agg`` over the other dimensions."""
    fn = "heatmap"
    _frame(df, fn)
    _distinct(fn, metric=metric, x=x, y=y)
    _need(df, metric, x, y)
    data = _rows(df, fn, metric, [x, y, metric], agg)
    grid = data.pivot_table(index=y, columns=x, values=metric, aggfunc=_gmean if agg == "gmean" else agg)
    grid = grid.sort_index().sort_index(axis=1)
    if grid.empty or grid.isna().all().all():
        raise ValueError(f"{fn}: agg={_agg_name(agg)!r} of {metric!r} gives no value in any cell "
                         f"({_count(len(data), 'row')})")
    fig, ax = _figure(ax, (1.2 + 0.9 * max(3, grid.shape[1]), 1.2 + 0.6 * max(3, grid.shape[0])))
    im = ax.imshow(grid.values, cmap=cmap, aspect="auto", origin="lower")
    xnames = [str(c) for c in grid.columns]
    tilt = len(xnames) * max(len(n) for n in xnames) > 30
    ax.set_xticks(range(grid.shape[1]), xnames, rotation=30 if tilt else 0, ha="right" if tilt else "center")
    ax.set_yticks(range(grid.shape[0]), [str(r) for r in grid.index])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    fig.colorbar(im, ax=ax, label=f"{metric} ({_agg_name(agg)})")
    if annotate:
        lo, hi = float(grid.min().min()), float(grid.max().max())
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                v = grid.values[i, j]
                if v == v:  # not NaN
                    light = hi > lo and (v - lo) / (hi - lo) < 0.5
                    ax.text(j, i, fmt.format(v), ha="center", va="center", color="white" if light else "black",
                            fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def cpi_stacks(
    cpi: Any, *, label: Sequence[str] | str = ("run", "thread"), components: Sequence[str] | None = None,
    min_share: float = 0.01, ax: Any = None, title: str | None = None,
) -> Any:
    """Stacked bars of CPI components, one bar per (``label`` columns) group of the long CPI frame
    (``SweepResult.cpi_stacks`` or :func:`smtlab.sweep.load_cpi_stacks`: run, thread, trace, component, cpi, axes).
    Components below ``min_share`` of every bar are folded into ``other``."""
    fn = "cpi_stacks"
    _frame(cpi, fn, "cpi")
    label = [label] if isinstance(label, str) else list(label)
    if not label or len(set(label)) != len(label) or {"component", "cpi"} & set(label):
        raise ValueError(f"{fn}: label must name distinct columns other than 'component' and 'cpi', got {label}")
    _need(cpi, *label, "component", "cpi")
    data = _rows(cpi, fn, "cpi", [*label, "component", "cpi"], "mean", ok_only=False)
    if not (data["cpi"].astype(float) != 0.0).any():
        raise ValueError(f"{fn}: every CPI value is zero ({_count(len(data), 'row')}): nothing to stack")
    wide = data.pivot_table(index=label, columns="component", values="cpi", aggfunc="mean", sort=True).fillna(0.0)
    if components is None:
        totals = wide.sum(axis=1).replace(0.0, 1.0)
        keep = [c for c in wide.columns if (wide[c] / totals).max() >= min_share]
        rest = [c for c in wide.columns if c not in keep]
        if rest and float(wide[rest].to_numpy().sum()) > 0.0:
            wide["other"] = wide[rest].sum(axis=1)
            keep.append("other")
        order = {c: i for i, c in enumerate(CPI_ORDER)}
        components = sorted(keep, key=lambda c: (order.get(c, len(order)), c))
    else:
        _need(wide, *components)
    fig, ax = _figure(ax, (max(5.0, 0.6 * len(wide) + 3.0), 4.5))
    names = [" / ".join(str(v) for v in (k if isinstance(k, tuple) else (k,))) for k in wide.index]
    bottom = [0.0] * len(wide)
    import matplotlib

    cmap = matplotlib.colormaps["tab20"]
    for i, comp in enumerate(components):
        values = wide[comp].tolist()
        ax.bar(range(len(wide)), values, bottom=bottom, label=comp, color=cmap(i % 20))
        bottom = [b + v for b, v in zip(bottom, values)]
    tilt = len(wide) * max(len(n) for n in names) > 40
    ax.set_xticks(range(len(wide)), names, rotation=30 if tilt else 0, ha="right" if tilt else "center")
    ax.set_xlabel(" / ".join(label))
    ax.set_ylabel("cycles per instruction")
    ax.legend(fontsize=7, ncols=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if title:
        ax.set_title(title)
    return fig


__all__ = ["AGGS", "CPI_ORDER", "cpi_stacks", "heatmap", "metric_vs_axis"]
