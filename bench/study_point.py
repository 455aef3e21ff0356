"""Times one point of the study's multithreaded sections, as the default study runs it: ``python bench/study_point.py
WORKLOAD N [--ht on|off] [--scheduler S] [--warm MS] [--window MS] [--set KEY=VALUE]... [--no-real] [--json FILE]``
(with smtlab importable: the project's venv, or PYTHONPATH=python after ``make build``). A benchmark, never a test.

WORKLOAD is chat (N rooms), dbench or tbench (N clients). The point runs with the study's default warm-up and window
(smtlab.study.ht_linux) and its real streams: recorded Linux kernel paths (``kpath:``) and recorded user programs,
unless ``--no-real`` or they cannot be had (a line says why). ``--set`` changes a config key over the netburst preset,
as ``smtlab run --set`` does (``--set core.wrong_path=false``): what a mechanism costs in host time on the study's
own workload, which ticks nearly every cycle, unlike the bench programs (bench/README.md, "Where a study point's
time goes"). Prints the host seconds of the whole point (set-up, warm-up and window), the window's instructions and
their rate over those host seconds (a figure to compare between runs of one point, not the simulator's speed: the
warm-up's instructions are simulated too but not counted), the point's throughput, CPI and the warm-up and window it
used; ``--json`` writes them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import BenchError, check_destination, parse_override, write_atomically  # noqa: E402

WORKLOADS = ("chat", "dbench", "tbench")
#: Keys the point sets itself: HT on or off is --ht, and the study's machine has one package.
RESERVED_KEYS = ("core.threads", "system.packages")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", choices=WORKLOADS)
    parser.add_argument("n", type=int, help="rooms (chat) or clients (dbench, tbench)")
    parser.add_argument("--ht", choices=("on", "off"), default="on")
    parser.add_argument("--scheduler", default="linux25ht", help="linux24 (2.4.19), linux25ht (2.5.32), ...")
    parser.add_argument("--warm", type=float, default=None, help="warm-up in simulated ms (default: the study's)")
    parser.add_argument("--window", type=float, default=None, help="window in simulated ms (default: the study's)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], type=parse_override,
                        metavar="KEY=VALUE", help="a config key over the netburst preset (repeatable)")
    parser.add_argument("--no-real", action="store_true", help="estimated kernel paths and user work instead")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error(f"N must be at least 1, not {args.n}")
    for name, value in (("--warm", args.warm), ("--window", args.window)):
        if value is not None and not value > 0:
            parser.error(f"{name} must be a positive number of ms, not {value}")
    for text in args.overrides:
        key = text.partition("=")[0].strip()
        if key in RESERVED_KEYS:
            parser.error(f"--set {key}: the point sets it (use --ht; the study's machine has one package)")
    return args


def run_point(args: argparse.Namespace) -> dict:
    """Runs the point; returns the printed figures."""
    from smtlab import load_config
    from smtlab.study.ht_linux import study_windows
    from smtlab.workloads import chat, fileserver, user_streams
    from smtlab.workloads.kpaths import REAL_PATHS_ENV, enable_real_paths

    overrides = {k.strip(): v for k, _, v in (o.partition("=") for o in args.overrides)}
    load_config("netburst", overrides)  # a bad key or value is a ConfigError now, not after the set-up
    real = []
    if args.no_real:  # as the study's --no-kpath and --no-user-programs: whatever the environment says
        os.environ[REAL_PATHS_ENV] = "0"
        os.environ[user_streams.USER_STREAMS_ENV] = "0"
    else:
        for what, why in (("kernel paths", enable_real_paths()), ("user programs", user_streams.enable_user_streams())):
            if why is not None:
                print(f"study_point: {why}", file=sys.stderr)
            else:
                real.append(what)
    warm, window = study_windows(args.workload, quick=False)
    warm = args.warm if args.warm is not None else warm
    window = args.window if args.window is not None else window
    ht = args.ht == "on"
    t0 = time.perf_counter()
    if args.workload == "chat":
        r = chat.run(args.n, ht, args.scheduler, warm, window, stagger_ms=warm / 2, overrides=overrides)
    else:
        r = fileserver.run(args.workload, args.n, ht, args.scheduler, warm, window, overrides=overrides)
    host = time.perf_counter() - t0
    return {"workload": args.workload, "n": args.n, "ht": ht, "scheduler": args.scheduler, "overrides": overrides,
            "real": real, "host_seconds": host, "instructions": r["instructions"],
            "window_m_instructions_per_host_second": r["instructions"] / host / 1e6, "throughput": r["throughput"],
            "cpi": r["cpi"], "warm_ms": r["warm_ms"], "window_ms": r["window_ms"],
            "warm_end": r.get("warm_end", "fixed"), "window_end": r.get("window_end", "fixed")}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.json:
            check_destination(Path(args.json), "--json")
        res = run_point(args)
    except BenchError as e:
        print(f"study_point: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - a ConfigError, a missing trace: one line, not a traceback
        print(f"study_point: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    sets = " ".join(f"--set {k}={v}" for k, v in res["overrides"].items())
    print(f"{res['workload']} {res['n']} HT {'on' if res['ht'] else 'off'} {res['scheduler']} {sets}".rstrip())
    print(f"  real streams: {', '.join(res['real']) or 'none'}")
    print(f"  {res['warm_ms']:g} ms warm-up ({res['warm_end']}) + {res['window_ms']:g} ms window "
          f"({res['window_end']}): {res['host_seconds']:.2f} host s, "
          f"{res['instructions']:,} window instructions, {res['window_m_instructions_per_host_second']:.2f} M per "
          "host s")
    print(f"  throughput {res['throughput']:.4g}, CPI {res['cpi']:.3f}")
    if args.json:
        try:
            write_atomically(Path(args.json), json.dumps(res, indent=1) + "\n", "--json")
        except BenchError as e:
            print(f"study_point: {e}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
