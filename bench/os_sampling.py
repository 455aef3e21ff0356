#!/usr/bin/env python3
"""Sampled Compute steps in the OS layer against the detailed kernel, on the bench's recorded programs.

Runs one task per program (each computing N instructions of its trace, restarting it as needed) on a machine under a
scheduler, once in detail and once with ``Kernel(sample=True)``, and prints each task's finish cycle in both runs,
the difference, and the host seconds of both. docs/sampling.md ("The OS layer") quotes its output.

    PYTHONPATH=python .venv/bin/python bench/os_sampling.py -n 4M -c netburst
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (count parsing)
import programs  # noqa: E402

import smtlab  # noqa: E402
from smtlab.os import Compute, Kernel, Task, make_scheduler  # noqa: E402


def run(preset: str, specs: list[str], n: int, sample: bool, scheduler: str, hz: float, slice_ms: float):
    k = Kernel(smtlab.Machine(smtlab.load_config(preset)), make_scheduler(scheduler), hz=hz, time_slice_ms=slice_ms,
               sample=sample)
    tasks = [k.spawn(Task(Path(s).stem, [Compute(n, loop=True)], source=s)) for s in specs]
    t0 = time.perf_counter()
    k.run()
    return [t.stats.finished for t in tasks], time.perf_counter() - t0, k.sampling()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--instructions", type=bench.parse_count, default=4_000_000, metavar="N")
    parser.add_argument("-c", "--config", default="netburst", metavar="PRESET")
    parser.add_argument("--scheduler", default="linux24")
    parser.add_argument("--hz", type=float, default=1000.0)
    parser.add_argument("--slice-ms", type=float, default=2.0)
    parser.add_argument("--trace-dir", type=Path, default=bench.REPO / "build" / "bench-traces")
    args = parser.parse_args()
    # Each program's a-trace, and the first program's b-trace: one more task than programs, so that tasks wait.
    traces = [programs.trace_files(args.trace_dir, p.name)[0] for p in programs.PROGRAMS]
    traces.append(programs.trace_files(args.trace_dir, programs.PROGRAMS[0].name)[1])
    for trace in traces:
        if not trace.exists():
            print(f"{trace}: no trace (cmake --build build --target bench_traces)", file=sys.stderr)
            return 1
    specs = [str(t) for t in traces]
    detailed, host_d, _ = run(args.config, specs, args.instructions, False, args.scheduler, args.hz, args.slice_ms)
    sampled, host_s, info = run(args.config, specs, args.instructions, True, args.scheduler, args.hz, args.slice_ms)
    print(f"{args.config}, {args.scheduler}, {args.hz:g} Hz, {args.slice_ms:g} ms slices, {args.instructions} "
          f"instructions per task")
    print("| task | finished (detailed) | finished (sampled) | difference |")
    print("|---|---|---|---|")
    for spec, d, s in zip(specs, detailed, sampled):
        print(f"| {Path(spec).name} | {d} | {s} | {100 * (s / d - 1):+.1f} % |")
    print(f"host seconds: detailed {host_d:.1f}, sampled {host_s:.1f} ({host_d / host_s:.1f}x); sampling: {info}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
