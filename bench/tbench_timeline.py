#!/usr/bin/env python3
"""tbench's throughput over time: how long the start-up convoy lasts, and how steady the run is after it.

Runs the study's tbench (fileserver.build_tbench, real kernel paths and user programs when their caches are there)
under one scheduler, in 1 ms steps, for ``--ms`` simulated ms. The warm-up ends when every client has read a reply
(the criterion of fileserver.run); from then on it prints the throughput of every ``--slice`` ms and the mean over
the rest of the run. docs/study.md ("tbench") used it to choose fileserver.MAX_WARM_MS and MAX_WINDOW_MS.

Usage (imports the smtlab module: run from the tree with its venv; a 120-client run with HT on takes minutes):

    PYTHONPATH=python .venv/bin/python bench/tbench_timeline.py CLIENTS {on,off} {linux24,linux25ht,...}
        [--ms 300] [--slice 10] [--seed 0]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from smtlab.os import SCHEDULERS  # noqa: E402
from smtlab.workloads import fileserver, kpaths, user_streams  # noqa: E402
from smtlab.workloads.base import make_kernel  # noqa: E402


def timeline(clients: int, ht: bool, scheduler: str, total_ms: float, slice_ms: float, seed: int) -> dict:
    """The warm-up's length (None if the run ended inside it) and the MB/s of each whole slice after it."""
    k = make_kernel(ht, scheduler, seed=seed)
    stats: dict = {}
    for task in fileserver.build_tbench(k, clients, stats, seed):
        k.spawn(task)
    done = stats["done"]
    step, end, width = k.ms_to_cycles(1.0), k.ms_to_cycles(total_ms), k.ms_to_cycles(slice_ms)
    warm_ms, slices, start = None, [], None
    while k.now + step <= end:
        k.run(until=k.now + step)
        if start is None:
            if all(d > 0 for d in done):
                warm_ms, start = k.now / k.cycles_per_us / 1000.0, (k.now, stats["bytes"])
                last = start
        elif k.now - last[0] >= width:
            slices.append(round((stats["bytes"] - last[1]) / ((k.now - last[0]) / (k.freq_ghz * 1e9)) / 1e6, 1))
            last = (k.now, stats["bytes"])
    mean = None
    if start is not None and k.now > start[0]:
        mean = (stats["bytes"] - start[1]) / ((k.now - start[0]) / (k.freq_ghz * 1e9)) / 1e6
    k.machine.close()
    return {"warm_ms": warm_ms, "slices_mb_s": slices, "mean_mb_s": mean}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clients", type=int)
    ap.add_argument("ht", choices=("on", "off"))
    ap.add_argument("scheduler", choices=sorted(SCHEDULERS))
    ap.add_argument("--ms", type=float, default=300.0, help="simulated ms in all (default 300)")
    ap.add_argument("--slice", type=float, default=10.0, help="slice length in simulated ms (default 10)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.clients < 1 or a.ms <= 0 or a.slice <= 0:
        ap.error("clients, --ms and --slice must be positive")
    for fallback in (kpaths.enable_real_paths(), user_streams.enable_user_streams()):
        if fallback is not None:
            print(fallback, file=sys.stderr)
    t = time.time()
    out = timeline(a.clients, a.ht == "on", a.scheduler, a.ms, a.slice, a.seed)
    print(json.dumps({"clients": a.clients, "ht": a.ht, "scheduler": a.scheduler, **out,
                      "host_seconds": round(time.time() - t, 1)}))
    if out["warm_ms"] is None:
        print(f"the run ended inside the warm-up (not every client had read a reply in {a.ms:g} ms)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
