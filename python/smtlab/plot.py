"""Common sweep figures with matplotlib: a metric against an axis (one line per policy), a heat map over two axes, and
CPI stacks (stacked bars per run and thread).

Every helper takes the table of :mod:`smtlab.sweep` (or the long CPI-stack frame), returns a
:class:`matplotlib.figure.Figure` and draws into ``ax`` when one is given. Figures are built without pyplot, so they
work under any backend (Agg in tests and on clusters) and show inline in notebooks.
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
        raise KeyError(f"smtlab.plot: no column {', '.join(repr(c) for c in missing)} (have: {', '.join(df.columns)})")


def metric_vs_axis(
    df: Any, metric: str, axis: str, by: str | None = None, *, agg: str = "mean", ax: Any = None,
    marker: str = "o", title: str | None = None,
) -> Any:
    """``metric`` (a column such as ``"stp"``) against ``axis`` (e.g. ``"core.rob.entries"``), one line per value of
    ``by`` (e.g. ``"core.fetch_policy"``); rows sharing (by, axis) are combined with ``agg`` (mean over workloads and
    seeds by default; ``"gmean"`` for the geometric mean)."""
    import numpy as np

    cols = [axis, metric] + ([by] if by else [])
    _need(df, *cols)
    data = _ok(df)[cols].dropna(subset=[axis, metric])
    fig, ax = _figure(ax, (6.0, 4.0))
    groups = data.groupby(by, sort=True) if by else [(None, data)]
    for label, g in groups:
        series = g.groupby(axis, sort=True)[metric]
        y = series.apply(lambda s: float(np.exp(np.log(s).mean()))) if agg == "gmean" else series.agg(agg)
        ax.plot([str(x) for x in y.index] if y.index.dtype == object else y.index, y.values, marker=marker,
                label=str(label) if by else metric)
    ax.set_xlabel(axis)
    ax.set_ylabel(metric if agg == "mean" else f"{metric} ({agg})")
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
    _need(df, metric, x, y)
    grid = _ok(df).pivot_table(index=y, columns=x, values=metric, aggfunc=agg).sort_index().sort_index(axis=1)
    fig, ax = _figure(ax, (1.2 + 0.9 * max(3, grid.shape[1]), 1.2 + 0.6 * max(3, grid.shape[0])))
    im = ax.imshow(grid.values, cmap=cmap, aspect="auto", origin="lower")
    xnames = [str(c) for c in grid.columns]
    tilt = len(xnames) * max(len(n) for n in xnames) > 30
    ax.set_xticks(range(grid.shape[1]), xnames, rotation=30 if tilt else 0, ha="right" if tilt else "center")
    ax.set_yticks(range(grid.shape[0]), [str(r) for r in grid.index])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    fig.colorbar(im, ax=ax, label=f"{metric} ({agg})")
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
    label = [label] if isinstance(label, str) else list(label)
    _need(cpi, *label, "component", "cpi")
    wide = cpi.pivot_table(index=label, columns="component", values="cpi", aggfunc="mean", sort=True).fillna(0.0)
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


__all__ = ["CPI_ORDER", "cpi_stacks", "heatmap", "metric_vs_axis"]
