#!/usr/bin/env python3
"""How the adaptive warm-ups' criteria progress: the table behind base.STALL_MS (docs/study.md, "Stalled warm-ups").

For each point it runs the study's tbench or chat start-up (real kernel paths and user programs when their caches are
there, as the study does) in 0.25 ms steps, with the warm-up's own criterion and progress measure (fileserver.run,
chat.run) and no stall rule, and prints when the criterion was met and the longest time its progress stood still
(base.progress_gaps). STALL_MS must lie above 1.5 x the longest gap of the points served in turn (Linux25HT) and
below 2.4.19's 10 ms tick less the workloads' 1 ms step; tests/python/test_study_stalled_warmups.py measures the
longest of them again.

Usage (imports the smtlab module: run from the tree with its venv; about 3 minutes on 2 cores):

    PYTHONPATH=python .venv/bin/python bench/progress_gaps.py [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from smtlab.workloads import chat, fileserver  # noqa: E402
from smtlab.workloads.base import make_kernel, progress_gaps, started  # noqa: E402

STEP_MS = 0.25
#: (workload, clients or rooms, HT, scheduler, bound in simulated ms): the table's rows.
POINTS = [("tbench", 120, False, "linux25ht", 50.0), ("tbench", 120, True, "linux25ht", 50.0),
          ("chat", 50, False, "linux25ht", 60.0), ("tbench", 120, False, "linux24", 50.0),
          ("tbench", 20, True, "linux24", 30.0), ("chat", 50, False, "linux24", 60.0)]


def tbench_gaps(clients: int, ht: bool, scheduler: str, bound_ms: float, seed: int = 0) -> dict[str, Any]:
    """tbench's warm-up from the start: every client has read a reply; progress is a task's first dispatch or a
    client's first reply (fileserver.run)."""
    k = make_kernel(ht, scheduler, seed=seed)
    stats: dict[str, Any] = {}
    tasks = list(fileserver.build_tbench(k, clients, stats, seed))
    for t in tasks:
        k.spawn(t)
    done, zero = stats["done"], [0] * clients
    try:
        return progress_gaps(k, lambda: fileserver._every_client_done(done, zero),
                             lambda: (started(k, tasks), fileserver._clients_done(done, zero)),
                             k.ms_to_cycles(bound_ms), k.ms_to_cycles(STEP_MS))
    finally:
        k.machine.close()


def chat_gaps(rooms: int, ht: bool, scheduler: str, bound_ms: float, seed: int = 0) -> dict[str, Any]:
    """chat's warm-up from the start: every receiver and server task has run once (chat.run; the senders spread over
    the study's 2 ms of stagger, half its 4 ms warm-up)."""
    k = make_kernel(ht, scheduler, seed=seed)
    built = chat.build(rooms)
    chat.spawn(k, built, 2.0)
    try:
        return progress_gaps(k, lambda: chat._sockets_reached(k, built), lambda: chat._sockets_count(k, built),
                             k.ms_to_cycles(bound_ms), k.ms_to_cycles(STEP_MS))
    finally:
        k.machine.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    a = ap.parse_args()
    rows = []
    for workload, n, ht, scheduler, bound in POINTS:
        measure = tbench_gaps if workload == "tbench" else chat_gaps
        g = measure(n, ht, scheduler, bound)
        unit = "clients" if workload == "tbench" else "rooms"
        met = f"{g['met_ms']:.2f} ms" if g["met_ms"] is not None else f"never ({bound:g} ms)"
        print(f"| {workload} {n} {unit}, HT {'on' if ht else 'off'}, {scheduler} | {met} | "
              f"longest {g['longest_ms']:.2f} ms ({g['longest_from_ms']:.2f} -> {g['longest_to_ms']:.2f} ms) |",
              flush=True)
        rows.append({"workload": workload, "param": n, "ht": ht, "scheduler": scheduler, **g})
    if a.json:
        tmp = Path(a.json + ".tmp")
        tmp.write_text(json.dumps(rows, indent=1))
        tmp.replace(a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
