#!/usr/bin/env python3
"""Simulation speed of smtlab: simulated instructions per host second on fixed workloads.

Runs `smtlab run -c netburst ... --max-instructions N --json FILE` for one and two hardware threads of a compute mix
and of a memory-bound pointer chase, reads `host_seconds`, `instructions` and `cycles` from the JSON, and prints a
table (optionally also a CSV). Standard library only, so it runs with any Python 3.8+. See bench/README.md.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (name, thread specs); one row per entry. Two threads are one core with Hyper-Threading on.
WORKLOADS = [
    ("mix", ["gen:mix"]),
    ("mix", ["gen:mix", "gen:mix"]),
    ("chase64m", ["gen:chase,footprint=64m"]),
    ("chase64m", ["gen:chase,footprint=64m", "gen:chase,footprint=64m"]),
]

# Targets in millions of simulated instructions per host second (aggregate over the threads of a run).
TARGET_MIPS = {1: 3.0, 2: 2.5}

REPO = Path(__file__).resolve().parent.parent
JSON_KEYS = ("host_seconds", "instructions", "cycles")


class BenchError(Exception):
    pass


def parse_count(text: str) -> int:
    """Accepts 5000000, 5M, 5m, 500k, 2G."""
    scale = {"k": 10**3, "m": 10**6, "g": 10**9}
    try:
        if text and text[-1].lower() in scale:
            return int(float(text[:-1]) * scale[text[-1].lower()])
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a count: {text!r} (examples: 5000000, 5M, 500k)") from None


def run_once(binary: Path, config: str, specs: list[str], max_instructions: int, json_path: Path) -> dict:
    cmd = [str(binary), "run", "-c", config, *specs, "--max-instructions", str(max_instructions),
           "--json", str(json_path)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        output = proc.stderr.strip() or proc.stdout.strip() or "(no output)"
        raise BenchError(f"`{' '.join(cmd)}` exited with {proc.returncode}:\n{output}")
    try:
        data = json.loads(json_path.read_text())
    except (OSError, ValueError) as err:
        raise BenchError(f"could not read the JSON result {json_path} of `{' '.join(cmd)}`: {err}") from None
    missing = [key for key in JSON_KEYS if key not in data]
    if missing:
        raise BenchError(f"{json_path}: top-level key(s) {', '.join(missing)} missing; written by `{' '.join(cmd)}`")
    host_seconds = float(data["host_seconds"])
    instructions = int(data.get("simulated_instructions", data["instructions"]))
    return {
        "instructions": instructions,
        "cycles": int(data["cycles"]),
        "host_seconds": host_seconds,
        "process_seconds": wall,
        "mips": instructions / host_seconds / 1e6 if host_seconds > 0 else float("inf"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", nargs="?", type=Path, default=REPO / "build" / "smtlab",
                        help="the smtlab program (default: build/smtlab)")
    parser.add_argument("-n", "--max-instructions", type=parse_count, default=5_000_000, metavar="N",
                        help="passed to `smtlab run --max-instructions` (default 5M; instructions per thread)")
    parser.add_argument("-c", "--config", default="netburst", help="machine preset (default netburst)")
    parser.add_argument("-r", "--repeat", type=int, default=1, metavar="R",
                        help="run each workload R times and keep the fastest (default 1)")
    parser.add_argument("--only", metavar="NAME", help="run only the workloads of this name (mix, chase64m)")
    parser.add_argument("--csv", nargs="?", const=str(REPO / "bench" / "results.csv"), metavar="FILE",
                        help="also write the rows as CSV (default file: bench/results.csv)")
    parser.add_argument("--check", action="store_true", help="exit with status 1 if a row is below its target")
    args = parser.parse_args(argv)

    binary = args.binary
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        print(f"bench: {binary} is not an executable; run `make build` or pass the smtlab path", file=sys.stderr)
        return 2
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    workloads = [w for w in WORKLOADS if args.only in (None, w[0])]
    if not workloads:
        parser.error(f"--only {args.only}: no such workload (known: {', '.join(sorted({w[0] for w in WORKLOADS}))})")

    rows = []
    header = (f"{'workload':<10} {'threads':>7} {'instructions':>13} {'cycles':>13} {'host s':>8} {'M instr/s':>10}"
              "  target")
    print(f"smtlab speed: {binary}, -c {args.config}, --max-instructions {args.max_instructions}, "
          f"best of {args.repeat}")
    print(header)
    print("-" * len(header))
    below = 0
    with tempfile.TemporaryDirectory(prefix="smtlab-bench-") as tmp:
        for name, specs in workloads:
            threads = len(specs)
            try:
                json_path = Path(tmp) / f"{name}-{threads}.json"
                runs = [run_once(binary, args.config, specs, args.max_instructions, json_path)
                        for _ in range(args.repeat)]
            except BenchError as err:
                print(f"bench: {err}", file=sys.stderr)
                return 1
            best = max(runs, key=lambda r: r["mips"])
            target = TARGET_MIPS.get(threads)
            met = target is None or best["mips"] >= target
            below += not met
            verdict = "" if target is None else f">= {target:g} " + ("ok" if met else "BELOW")
            print(f"{name:<10} {threads:>7} {best['instructions']:>13,} {best['cycles']:>13,} "
                  f"{best['host_seconds']:>8.3f} {best['mips']:>10.2f}  {verdict}")
            rows.append({"workload": name, "threads": threads, "specs": " ".join(specs), "config": args.config,
                         "max_instructions": args.max_instructions, **best, "target_mips": target or ""})

    if args.csv:
        path = Path(args.csv)
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with path.open("w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=["date", "host", *rows[0].keys()])
            writer.writeheader()
            for row in rows:
                writer.writerow({"date": stamp, "host": platform.node(), **row})
        print(f"wrote {path}")
    return 1 if args.check and below else 0


if __name__ == "__main__":
    sys.exit(main())
