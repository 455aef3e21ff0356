#!/usr/bin/env python3
"""Compares `kpath:` recordings path by path: how long each recorded kernel path is in each cache.

A recording depends on the guest's timing (docs/tracing.md, "Two recordings"), so two caches hold other instances of
the same paths. This prints, for every path, the median and the 90th percentile of its instances' kernel
instructions in each cache and how far the medians lie apart (largest over smallest, minus one), the paths that
differ most first. docs/tracing.md compares the probe with and without its wait before TCP receives with it.

    python3 bench/kpath_compare.py CACHE_A CACHE_B [CACHE_C ...] [--path PREFIX] [--top N] [--csv FILE]

Each CACHE is a folder with the `kpaths.json` a recording writes (`$SMTLAB_KPATH_CACHE`, default build/kpath).
Standard library only (and bench.py's atomic write); reads the manifests, not the traces.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import write_atomically  # noqa: E402  (bench/bench.py, beside this script)


class CompareError(Exception):
    pass


def percentile(values: list[int], q: float) -> float:
    """The q-quantile (0..1) of sorted `values` by the nearest-rank rule: the smallest value with at least q of them
    at or below it."""
    rank = max(1, math.ceil(q * len(values)))
    return float(values[rank - 1])


def load(cache: Path) -> dict[str, list[int]]:
    """Kernel instructions of every instance, per path, from cache/kpaths.json."""
    manifest = cache / "kpaths.json"
    try:
        data = json.loads(manifest.read_text())
    except FileNotFoundError:
        raise CompareError(f"{manifest}: no such file (is {cache} a kpath: cache?)") from None
    except (OSError, json.JSONDecodeError) as e:
        raise CompareError(f"{manifest}: cannot read it: {e}") from None
    paths = data.get("paths") if isinstance(data, dict) else None
    if not isinstance(paths, dict):
        raise CompareError(f"{manifest}: no 'paths' object")
    out: dict[str, list[int]] = {}
    for name, entry in paths.items():
        try:
            out[name] = sorted(int(i[2]) for i in entry["instances"])
        except (KeyError, TypeError, IndexError, ValueError):
            raise CompareError(f"{manifest}: path '{name}': 'instances' must be a list of "
                               f"[offset, records, kernel instructions]") from None
    return out


def compare(caches: list[dict[str, list[int]]], prefix: str = "") -> list[dict]:
    """One row per path present in every cache with at least one instance in each: medians, 90th percentiles and
    the spread of the medians; sorted by spread, largest first, then by name."""
    names = sorted(set.intersection(*(set(c) for c in caches)))
    rows = []
    for name in names:
        if not name.startswith(prefix) or any(not c[name] for c in caches):
            continue
        medians = [float(statistics.median(c[name])) for c in caches]
        p90 = [percentile(c[name], 0.9) for c in caches]
        low = min(medians)
        spread = (max(medians) / low - 1.0) if low > 0 else math.inf
        rows.append({"path": name, "instances": [len(c[name]) for c in caches], "medians": medians, "p90": p90,
                     "spread": spread})
    rows.sort(key=lambda r: (-r["spread"], r["path"]))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("caches", nargs="+", type=Path, help="kpath: cache folders (two or more)")
    parser.add_argument("--path", default="", help="only paths whose name starts with this")
    parser.add_argument("--top", type=int, default=25, help="print this many paths (default 25; 0: all)")
    parser.add_argument("--csv", type=Path, help="also write every row to this CSV file")
    args = parser.parse_args(argv)
    if len(args.caches) < 2:
        parser.error("give at least two caches to compare")
    if args.top < 0:
        parser.error("--top must be 0 or more")
    try:
        rows = compare([load(c) for c in args.caches], args.path)
    except CompareError as e:
        print(f"kpath_compare: {e}", file=sys.stderr)
        return 2
    if not rows:
        print(f"kpath_compare: no path{' starting with ' + repr(args.path) if args.path else ''} has instances in "
              f"every cache", file=sys.stderr)
        return 1
    labels = [c.name or str(c) for c in args.caches]
    print("median (90th percentile) kernel instructions per instance; spread = largest median / smallest - 1")
    print(f"{'path':<22}" + "".join(f"{label[:20]:>22}" for label in labels) + f"{'spread':>9}")
    for r in rows[: args.top or len(rows)]:
        cells = "".join(f"{f'{m:,.0f} ({p:,.0f})':>22}" for m, p in zip(r["medians"], r["p90"]))
        print(f"{r['path']:<22}{cells}{100 * r['spread']:>8.1f}%")
    if args.csv:
        out = io.StringIO(newline="")
        w = csv.writer(out)
        w.writerow(["path", *(f"{label} {what}" for label in labels for what in ("instances", "median", "p90")),
                    "spread"])
        for r in rows:
            w.writerow([r["path"], *(x for k in range(len(labels))
                                     for x in (r["instances"][k], r["medians"][k], r["p90"][k])), r["spread"]])
        write_atomically(args.csv, out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
