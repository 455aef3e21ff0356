#!/usr/bin/env python3
"""Hyper-Threading gain of each bench program: two copies on one core against one copy, per preset.

For every program (the real programs of bench/programs.py and gen:mix) and preset it runs three simulations of
N instructions per thread, on one core:

- copy a alone, copy b alone (each on thread 0, its sibling idle);
- copies a and b together on the two hardware threads of the core.

The copies are the same program half a trace window apart (programs.py: `b` starts KEEP/2 instructions after `a`;
for gen:mix, seeds 1 and 2), so the two threads are not in lock-step. Figures (docs in bench/README.md):

- one-copy IPC = (N_a + N_b) / (cycles_a + cycles_b): one copy running both windows one after the other;
- two-copy IPC = instructions retired by both threads / cycles of the pair run (a thread that has its N early keeps
  running until its sibling has its N, so both compete to the end);
- HT gain = two-copy IPC / one-copy IPC - 1: what running two copies at once adds to the core's throughput;
- weighted speedup = IPC_a,pair / IPC_a,alone + IPC_b,pair / IPC_b,alone, each over that copy's first N
  instructions (2 = both as fast as alone, 1 = no gain).

Prints a table and writes JSON (temporary name, renamed when complete). Standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import programs  # noqa: E402
from bench import (BenchError, check_destination, host_info, parse_count, parse_count_or_zero,  # noqa: E402
                   parse_override, run_json, sigterm_as_exit, write_atomically)

REPO = Path(__file__).resolve().parent.parent
GENERATOR_COPIES = {"mix": ("gen:mix,seed=1", "gen:mix,seed=2")}


@dataclass(frozen=True)
class Window:
    """Instructions retired over cycles: one thread's measured window, or a whole run."""

    instructions: int
    cycles: int

    @property
    def ipc(self) -> float:
        if self.instructions <= 0 or self.cycles <= 0:
            raise ValueError(f"ht_gain: empty window ({self.instructions} instructions in {self.cycles} cycles)")
        return self.instructions / self.cycles


@dataclass(frozen=True)
class HtGain:
    ipc_alone_a: float
    ipc_alone_b: float
    ipc_one_copy: float
    ipc_pair_a: float
    ipc_pair_b: float
    ipc_two_copies: float
    gain_percent: float
    weighted_speedup: float


def ht_gain(alone_a: Window, alone_b: Window, pair_a: Window, pair_b: Window, pair_total: Window) -> HtGain:
    """The figures of one program (module docstring): `alone_*` and `pair_*` are each copy's measured window alone
    and in the pair run, `pair_total` everything the pair run retired over its cycles."""
    one_copy = Window(alone_a.instructions + alone_b.instructions, alone_a.cycles + alone_b.cycles).ipc
    two_copies = pair_total.ipc
    return HtGain(
        ipc_alone_a=alone_a.ipc,
        ipc_alone_b=alone_b.ipc,
        ipc_one_copy=one_copy,
        ipc_pair_a=pair_a.ipc,
        ipc_pair_b=pair_b.ipc,
        ipc_two_copies=two_copies,
        gain_percent=100.0 * (two_copies / one_copy - 1.0),
        weighted_speedup=pair_a.ipc / alone_a.ipc + pair_b.ipc / alone_b.ipc,
    )


def cpu_window(data: dict, cpu: int) -> Window:
    """A logical CPU's measured window from `smtlab run --json`: its first N instructions and the cycles it took."""
    stats = data["logical_cpus"][cpu]
    return Window(int(stats["instructions"]), int(stats["cycles"]))


def run_total(data: dict) -> Window:
    return Window(int(data.get("simulated_instructions", data["instructions"])), int(data["cycles"]))


def measure(binary: Path, config: str, a: str, b: str, n: int, warmup: int, tmp: Path,
            overrides: tuple[str, ...] | list[str] = ()) -> tuple[HtGain, dict]:
    """The three runs of one program on one preset (with `overrides` as --set); returns the figures and the raw
    windows."""
    # CPUs 0 and 1 are the two hardware threads of core 0 (siblings are adjacent); other cores of the preset idle.
    json_path = tmp / "run.json"
    alone_a = run_json(binary, config, [a], n, json_path, warmup, overrides)
    alone_b = run_json(binary, config, [b], n, json_path, warmup, overrides)
    pair = run_json(binary, config, [a, b], n, json_path, warmup, overrides)
    windows = {"alone_a": cpu_window(alone_a, 0), "alone_b": cpu_window(alone_b, 0), "pair_a": cpu_window(pair, 0),
               "pair_b": cpu_window(pair, 1), "pair_total": run_total(pair)}
    return ht_gain(**windows), {k: asdict(v) for k, v in windows.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", nargs="?", type=Path, default=REPO / "build" / "smtlab",
                        help="the smtlab program (default: build/smtlab)")
    parser.add_argument("-n", "--max-instructions", type=parse_count, default=10_000_000, metavar="N",
                        help="instructions per thread measured in every run (default 10M)")
    parser.add_argument("--warmup", type=parse_count_or_zero, default=0, metavar="W",
                        help="simulate W instructions per thread before measuring (default 0: none)")
    parser.add_argument("-c", "--config", default="netburst,broadwell", metavar="PRESETS",
                        help="preset(s), comma-separated (default netburst,broadwell)")
    parser.add_argument("--only", metavar="NAME", help="only this program (mix or a real program)")
    parser.add_argument("--no-programs", action="store_true", help="gen:mix only; do not trace real programs")
    parser.add_argument("--trace-dir", type=Path, help="cache of the real programs' traces (as bench.py)")
    parser.add_argument("--set", dest="overrides", action="append", type=parse_override, default=[],
                        metavar="KEY=VALUE", help="override a config key over every preset, as `smtlab run --set` "
                                                  "(repeatable; e.g. --set core.wrong_path=true)")
    parser.add_argument("--json", default=str(REPO / "bench" / "ht_gain.json"), metavar="FILE",
                        help="write the table as JSON (default bench/ht_gain.json)")
    args = parser.parse_args(argv)

    binary = args.binary
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        print(f"ht_gain: {binary} is not an executable; run `make build` or pass the smtlab path", file=sys.stderr)
        return 2
    known = [*GENERATOR_COPIES, *(p.name for p in programs.PROGRAMS)]
    if args.only is not None and args.only not in known:
        parser.error(f"--only {args.only}: no such program (known: {', '.join(known)})")
    if args.no_programs and args.only not in (None, *GENERATOR_COPIES):
        parser.error(f"--only {args.only} is a real program but --no-programs runs {', '.join(GENERATOR_COPIES)} "
                     "only: drop one of the two")
    try:  # a bad destination is reported now, not after every simulation has run
        check_destination(Path(args.json), "--json")
    except BenchError as err:
        print(f"ht_gain: {err}", file=sys.stderr)
        return 2
    with sigterm_as_exit():
        return _run(args, binary)


def _run(args, binary: Path) -> int:
    """Traces, runs and writes the table (main, after the arguments are checked)."""
    copies = {name: pair for name, pair in GENERATOR_COPIES.items()}
    if not args.no_programs:
        cache = args.trace_dir or programs.default_cache(binary)
        names = None if args.only is None else [args.only]
        for name, (a, b) in programs.ensure_traces(binary, cache, log=lambda s: print(s, flush=True),
                                                   names=names).items():
            copies[name] = (str(a), str(b))
    copies = {k: v for k, v in copies.items() if args.only in (None, k)}

    info = host_info()
    print(f"HT gain: {binary}{''.join(f' --set {o}' for o in args.overrides)}, {args.max_instructions} "
          "instructions per thread"
          + (f" after {args.warmup} of warm-up" if args.warmup else "") + "; two copies on one core vs one copy")
    header = (f"{'config':<10} {'program':<9} {'IPC a':>6} {'IPC b':>6} {'IPC 1 copy':>10} {'IPC 2 copies':>12} "
              f"{'HT gain':>8} {'wt. speedup':>11}")
    print(header)
    print("-" * len(header))
    rows = []
    with tempfile.TemporaryDirectory(prefix="smtlab-htgain-") as tmp:
        for config in [c for c in args.config.split(",") if c]:
            for name, (a, b) in copies.items():
                try:
                    gain, windows = measure(binary, config, a, b, args.max_instructions, args.warmup or 0, Path(tmp),
                                            args.overrides)
                except (BenchError, OSError, ValueError, KeyError) as err:
                    print(f"ht_gain: {config} {name}: {err}", file=sys.stderr)
                    return 1
                print(f"{config:<10} {name:<9} {gain.ipc_alone_a:>6.3f} {gain.ipc_alone_b:>6.3f} "
                      f"{gain.ipc_one_copy:>10.3f} {gain.ipc_two_copies:>12.3f} {gain.gain_percent:>+7.1f}% "
                      f"{gain.weighted_speedup:>11.3f}", flush=True)
                rows.append({"config": config, "program": name, "copy_a": a, "copy_b": b, **asdict(gain),
                             "windows": windows})
    if not rows:
        program = args.only in {p.name for p in programs.PROGRAMS}
        why = f": --only {args.only} is a real program whose traces are not available here" if program else ""
        print(f"ht_gain: nothing was run{why}", file=sys.stderr)
        return 1
    document = {"binary": str(binary), "max_instructions": args.max_instructions, "warmup": args.warmup or 0,
                "overrides": args.overrides,
                **info, "rows": rows}
    try:
        write_atomically(Path(args.json), json.dumps(document, indent=1) + "\n", "--json")
    except (BenchError, OSError) as err:
        print(f"ht_gain: {err}", file=sys.stderr)
        return 1
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
