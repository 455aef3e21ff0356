#!/usr/bin/env python3
"""Accuracy and speed of sampled runs against full detail, on the bench's recorded programs.

For every preset and workload (each program alone, and pairs of different programs on one core), runs `smtlab run -c
PRESET -n N SPECS` in detail and with `--sample` (its defaults unless --sample-args), and prints one markdown row per
logical CPU: the detailed IPC, the sampled IPC with its 95 % interval, the error, whether the detailed figure lies
inside the interval, and the host seconds of both; a pair also gets a row for the core's throughput. The summary says
the share of rows inside their interval, the mean absolute error and the effective speed-up. The table in
docs/sampling.md is this script's output. Traces restart when they end (as `smtlab run -n` does), so N may exceed a
trace's length. Writes the rows as JSON (--json, under a temporary name renamed when complete). See bench/README.md.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (bench/bench.py: the run helpers and count parsing)
import programs  # noqa: E402


def workloads(trace_dir: Path, names: list[str], pairs: bool) -> list[tuple[str, list[str]]]:
    """Each program alone (its a-trace), then each pair of different programs (a-trace of each)."""
    found = []
    for name in names:
        a, _ = programs.trace_files(trace_dir, name)
        if not a.exists():
            raise bench.BenchError(f"{a}: no trace (cmake --build build --target bench_traces)")
        found.append((name, str(a)))
    rows = [(name, [spec]) for name, spec in found]
    if pairs:
        rows += [(f"{x[0]}+{y[0]}", [x[1], y[1]]) for x, y in itertools.combinations(found, 2)]
    return rows


def measure(binary: Path, preset: str, specs: list[str], n: int, sample_args: list[str], tmp: Path) -> list[dict]:
    """The rows of one workload: per CPU and, for a pair, the core."""
    out = tmp / "run.json"
    detailed = bench.run_json(binary, preset, specs, n, out)
    sampled = run_sampled(binary, preset, specs, n, out, sample_args)
    rows = []
    for i, spec in enumerate(specs):
        d = detailed["logical_cpus"][i]["ipc"]
        c = sampled["logical_cpus"][i]
        rows.append(row(preset, specs, f"cpu {i}", d, c["ipc"], c["ipc_ci95"], detailed, sampled))
    if len(specs) > 1:
        d = sum(detailed["logical_cpus"][i]["ipc"] for i in range(len(specs)))
        core = sampled["cores"][0]
        rows.append(row(preset, specs, "core", d, core["throughput"], core["throughput_ci95"], detailed, sampled))
    return rows


def run_sampled(binary: Path, preset: str, specs: list[str], n: int, out: Path, sample_args: list[str]) -> dict:
    cmd = bench.run_command(binary, preset, specs, n, out, mode="sampled") + sample_args
    out.unlink(missing_ok=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise bench.BenchError(f"`{' '.join(cmd)}` exited with {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(out.read_text())


def row(preset, specs, what, detailed_ipc, ipc, ci, detailed, sampled) -> dict:
    error = (ipc - detailed_ipc) / detailed_ipc if ipc is not None and detailed_ipc else None
    inside = ipc is not None and ci is not None and abs(ipc - detailed_ipc) <= ci
    name = "+".join(Path(s).name.split(".")[0] for s in specs)
    s = sampled["sampling"]
    return {"preset": preset, "workload": name, "what": what, "detailed_ipc": detailed_ipc, "sampled_ipc": ipc,
            "ci95": ci, "error": error, "inside": inside, "detailed_seconds": detailed["host_seconds"],
            "sampled_seconds": sampled["host_seconds"], "windows": s["windows"],
            "detailed_share": s["detailed_instructions"] / max(1, s["detailed_instructions"] +
                                                                s["functional_instructions"])}


def markdown(rows: list[dict]) -> str:
    lines = ["| preset | workload | | detailed IPC | sampled IPC | +- (95 %) | error | inside | windows | in detail "
             "| host s detailed / sampled |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['preset']} | {r['workload']} | {r['what']} | {r['detailed_ipc']:.3f} | "
                     f"{r['sampled_ipc']:.3f} | {r['ci95']:.3f} | {100 * r['error']:+.1f} % | "
                     f"{'yes' if r['inside'] else 'NO'} | {r['windows']} | {100 * r['detailed_share']:.1f} % | "
                     f"{r['detailed_seconds']:.0f} / {r['sampled_seconds']:.1f} |")
    inside = sum(r["inside"] for r in rows)
    mae = sum(abs(r["error"]) for r in rows) / len(rows)
    workloads_seen = {(r["preset"], r["workload"]): r for r in rows}
    det = sum(r["detailed_seconds"] for r in workloads_seen.values())
    sam = sum(r["sampled_seconds"] for r in workloads_seen.values())
    lines.append("")
    lines.append(f"{inside} of {len(rows)} rows inside their interval ({100 * inside / len(rows):.0f} %); mean "
                 f"absolute error {100 * mae:.2f} %; host seconds {det:.0f} detailed against {sam:.1f} sampled "
                 f"({det / sam:.1f}x)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", nargs="?", type=Path, default=bench.REPO / "build" / "smtlab")
    parser.add_argument("-n", "--max-instructions", type=bench.parse_count, default=200_000_000, metavar="N",
                        help="instructions per thread (default 200M)")
    parser.add_argument("-c", "--config", default="netburst,broadwell", metavar="PRESETS")
    parser.add_argument("--programs", default=",".join(p.name for p in programs.PROGRAMS), metavar="NAMES")
    parser.add_argument("--no-pairs", action="store_true", help="each program alone only")
    parser.add_argument("--trace-dir", type=Path, help="the bench traces (default: bench-traces/ beside the program)")
    parser.add_argument("--sample-args", default="", help="extra `smtlab run` options for the sampled runs, quoted")
    parser.add_argument("--json", type=Path, default=bench.REPO / "bench" / "sampling_accuracy.json", metavar="FILE")
    args = parser.parse_args(argv)
    trace_dir = args.trace_dir or programs.default_cache(args.binary)
    rows = []
    try:
        todo = workloads(trace_dir, [p for p in args.programs.split(",") if p], not args.no_pairs)
        with tempfile.TemporaryDirectory(prefix="smtlab-accuracy-") as tmp:
            for preset in args.config.split(","):
                for name, specs in todo:
                    new = measure(args.binary, preset, specs, args.max_instructions, args.sample_args.split(),
                                  Path(tmp))
                    for r in new:
                        print(f"{preset} {r['workload']} {r['what']}: detailed {r['detailed_ipc']:.3f}, sampled "
                              f"{r['sampled_ipc']:.3f} +- {r['ci95']:.3f} ({100 * r['error']:+.1f} %), "
                              f"{r['detailed_seconds']:.0f} s / {r['sampled_seconds']:.1f} s", flush=True)
                    rows += new
    except (bench.BenchError, OSError, ValueError, KeyError) as err:
        print(f"sampling_accuracy: {err}", file=sys.stderr)
        return 1
    if not rows:
        print("sampling_accuracy: no rows", file=sys.stderr)
        return 1
    print()
    print(markdown(rows))
    tmp_path = args.json.with_name(f".{args.json.name}.tmp{os.getpid()}")
    tmp_path.write_text(json.dumps({"max_instructions": args.max_instructions, "rows": rows}, indent=1) + "\n")
    tmp_path.replace(args.json)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
