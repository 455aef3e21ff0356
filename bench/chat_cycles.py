#!/usr/bin/env python3
"""The cycles of chat's run: how long one round of the benchmark's four phases lasts, for chat.STEADY_MS_PER_ROOM.

Runs a chat point as the study's steady windows do (4 ms warm-up extended until every receiver and server task has
run, 2.5.32's sleep_avg settled, ht_linux._mt_job with steady=True) with a window of ``--ms`` simulated ms in 1 ms
steps, and prints where the client senders' passes began (chat.pass_starts), the cycle lengths between them and the
whole cycles the window held (chat.whole_cycles). Real kernel paths and user programs when their caches are there, as
in the study.

Usage (imports the smtlab module: run from the tree with its venv; 20 rooms over 200 ms take about 5 minutes):

    PYTHONPATH=python .venv/bin/python bench/chat_cycles.py ROOMS [--ms 200] [--ht] [--scheduler linux25ht]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from smtlab.workloads import chat  # noqa: E402

WARM_MS = 4.0  # the default study's chat warm-up (smtlab.study.ht_linux.study_windows)


def cycles(rooms: int, window_ms: float, ht: bool, scheduler: str) -> dict:
    """chat.run's result for one point with a counted window of ``window_ms``."""
    return chat.run(rooms, ht, scheduler, WARM_MS, window_ms, stagger_ms=WARM_MS / 2,
                    max_ms=WARM_MS + window_ms + chat.STEADY_MARGIN_MS, settle=True, count_cycles=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rooms", type=int)
    ap.add_argument("--ms", type=float, default=200.0, help="window length in simulated ms (default 200)")
    ap.add_argument("--ht", action="store_true", help="HT on (default off)")
    ap.add_argument("--scheduler", default="linux25ht")
    a = ap.parse_args()
    r = cycles(a.rooms, a.ms, a.ht, a.scheduler)
    starts = r["pass_starts_ms"]
    lengths = [b - s for s, b in zip(starts, starts[1:])]
    print(f"chat {a.rooms} rooms, HT {'on' if a.ht else 'off'}, {a.scheduler}: warm-up {r['warm_ms']:.1f} ms, "
          f"window {r['window_ms']:.1f} ms")
    print(f"senders' passes began at (ms into the window): {', '.join(f'{s:g}' for s in starts) or 'none'}")
    if lengths:
        mean = sum(lengths) / len(lengths)
        print(f"cycle lengths: {', '.join(f'{c:g}' for c in lengths)} ms; mean {mean:.1f} ms = {mean / a.rooms:.2f} "
              f"ms per room")
    print(f"whole cycles in the window: {r['whole_cycles']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
