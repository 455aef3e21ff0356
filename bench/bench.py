#!/usr/bin/env python3
"""Simulation speed of smtlab: simulated instructions per host second on generators and real programs.

Runs `smtlab run -c CONFIG SPECS --max-instructions N --json FILE` for one and two hardware threads of a compute mix,
a memory-bound pointer chase and each real program of bench/programs.py (traced once with `smtlab trace record`),
reads `host_seconds`, `simulated_instructions` and `cycles` from the JSON, and prints a table; the rows are also
written as JSON (and optionally CSV), each under a temporary name renamed when complete. `--callgrind` counts host
instructions per simulated instruction under valgrind instead, a figure that does not depend on the machine's load.
`--against BASELINE` runs another smtlab program on every row too (in turn with this one when timing) and prints the
change. Standard library only, so it runs with any Python 3.9+. See bench/README.md.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import contextlib
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import programs  # noqa: E402  (bench/programs.py, beside this script)

# (name, thread specs) of the generator rows. Two threads are one core with Hyper-Threading on. The two-thread mix
# runs the same seed twice, as it always has, so the figures stay comparable with earlier ones.
GENERATORS = [
    ("mix", ["gen:mix"]),
    ("mix", ["gen:mix", "gen:mix"]),
    ("chase64m", ["gen:chase,footprint=64m"]),
    ("chase64m", ["gen:chase,footprint=64m", "gen:chase,footprint=64m"]),
]

# Targets in millions of simulated instructions per host second (aggregate over the threads of a run): the project's
# requirement, 88 and 86 % of what commit a443747 ran gen:mix at on the machine they were set on (3.4 / 2.9 M/s);
# bench/README.md compares today's hosts with that machine.
TARGET_MIPS = {1: 3.0, 2: 2.5}
TIMING_WIDTH = 107  # a timing row up to its target verdict (the longest, ">= 2.5 BELOW"): --against's columns follow

REPO = Path(__file__).resolve().parent.parent
JSON_KEYS = ("host_seconds", "instructions", "cycles", "logical_cpus")


class BenchError(Exception):
    pass


def parse_count(text: str, allow_zero: bool = False) -> int:
    """Accepts 5000000, 5M, 5m, 500k, 2G (and 0 with `allow_zero`)."""
    scale = {"k": 10**3, "m": 10**6, "g": 10**9}
    try:
        if text and text[-1].lower() in scale:
            value = int(float(text[:-1]) * scale[text[-1].lower()])
        else:
            value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a count: {text!r} (examples: 5000000, 5M, 500k)") from None
    if value < 0 or (value == 0 and not allow_zero):
        raise argparse.ArgumentTypeError(f"not a {'non-negative' if allow_zero else 'positive'} count: {text!r}")
    return value


def parse_count_or_zero(text: str) -> int:
    """A count that may be 0 (a warm-up of none, say)."""
    return parse_count(text, allow_zero=True)


# The simulation modes a row can be timed in (docs/sampling.md): `smtlab run` options for each. "functional" is a
# sampled run with one window per run (the period is the run's length), so nearly every instruction is warmed only.
MODES = ("detailed", "functional", "sampled")


def mode_options(mode: str, max_instructions: int) -> list[str]:
    if mode == "functional":
        return ["--sample", "--sample-period", str(max_instructions)]
    if mode == "sampled":
        return ["--sample"]
    if mode == "baselines":  # detailed, each trace also alone: the result holds `multiprogram` (docs/metrics.md)
        return ["--baselines"]
    return []


def run_command(binary: Path, config: str, specs: list[str], max_instructions: int, json_path: Path,
                warmup: int = 0, overrides: tuple[str, ...] | list[str] = (), mode: str = "detailed") -> list[str]:
    """The `smtlab run` command line; each of `overrides` (KEY=VALUE) becomes one `--set`, applied over the preset."""
    cmd = [str(binary), "run", "-q", "-c", config, *specs, "--max-instructions", str(max_instructions),
           "--json", str(json_path), *mode_options(mode, max_instructions)]
    for override in overrides:
        cmd += ["--set", override]
    return cmd + (["--warmup", str(warmup)] if warmup else [])


def run_json(binary: Path, config: str, specs: list[str], max_instructions: int, json_path: Path,
             warmup: int = 0, overrides: tuple[str, ...] | list[str] = (), mode: str = "detailed") -> dict:
    """Runs smtlab once and returns its JSON result (the keys this script reads are checked)."""
    cmd = run_command(binary, config, specs, max_instructions, json_path, warmup, overrides, mode)
    json_path.unlink(missing_ok=True)  # a result left from an earlier run must not pass for this one
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
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
    if len(data["logical_cpus"]) < len(specs):
        raise BenchError(f"{json_path}: {len(data['logical_cpus'])} logical CPUs for {len(specs)} traces")
    # CPU time of the whole process (start-up included), which, unlike wall time, leaves out the time spent waiting
    # for a CPU on a loaded machine.
    data["process_cpu_seconds"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return data


def speed(data: dict) -> dict:
    """The speed figures of one run. Everything retired counts (a thread that reached N early keeps running to keep
    its sibling company, and that is simulation work too), so `simulated_instructions` when the program reports it."""
    host_seconds = float(data["host_seconds"])
    simulated = int(data.get("simulated_instructions", data["instructions"]))
    cpu_seconds = float(data.get("process_cpu_seconds", 0.0))
    cpus = data.get("logical_cpus") or [{}]
    return {
        "ipc0": cpus[0].get("ipc"),
        "instructions": simulated,
        "cycles": int(data["cycles"]),
        "host_seconds": host_seconds,
        "mips": simulated / host_seconds / 1e6 if host_seconds > 0 else float("inf"),
        "cpu_seconds": cpu_seconds,
        "mips_cpu": simulated / cpu_seconds / 1e6 if cpu_seconds > 0 else None,
    }


CALLGRIND_TOTAL = re.compile(r"(?:Collected|I\s+refs)\s*:\s*([\d,]+)")


def compare(base: dict, new: dict) -> dict:
    """How the best run of the program under test compares with the best run of the baseline on one row: the change
    in speed (percent, positive = faster) and whether both simulated the same thing (same cycles and instructions, the
    figures a change that only makes the simulator faster must keep)."""
    change = (new["mips"] / base["mips"] - 1.0) * 100.0 if base["mips"] > 0 else float("inf")
    same = base["cycles"] == new["cycles"] and base["instructions"] == new["instructions"]
    return {"baseline_mips": base["mips"], "change_percent": change, "same_statistics": same}


def callgrind_cost(program: Path, config: str, specs: list[str], max_instructions: int, json_path: Path,
                   overrides: list[str]) -> tuple[float, int, int]:
    """Host instructions per simulated instruction of one row under callgrind (the marginal cost between runs of N/5
    and N instructions per thread), with the long run's simulated instructions and cycles."""
    counts, cycles = [], 0
    for n in (max(max_instructions // 5, 1), max_instructions):
        cmd = run_command(program, config, specs, n, json_path, overrides=overrides)
        host = callgrind_count(cmd)
        data = json.loads(json_path.read_text())
        counts.append((host, int(data.get("simulated_instructions", data["instructions"]))))
        cycles = int(data["cycles"])
    return marginal_cost(counts[0], counts[1]), counts[1][1], cycles


def callgrind_count(cmd: list[str]) -> int:
    """Host instructions executed by `cmd`, counted by valgrind's callgrind (independent of the machine's load)."""
    full = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd]
    proc = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    match = CALLGRIND_TOTAL.search(proc.stderr)
    if proc.returncode != 0 or not match:
        raise BenchError(f"`{' '.join(full)}` exited with {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return int(match.group(1).replace(",", ""))


def marginal_cost(short: tuple[int, int], long: tuple[int, int]) -> float:
    """Host instructions per simulated instruction from two runs (host count, simulated count) of different length:
    the difference cancels what every run pays once (start-up, config, opening traces, writing the JSON)."""
    (host_short, sim_short), (host_long, sim_long) = short, long
    if sim_long <= sim_short:
        raise BenchError(f"callgrind: the long run simulated {sim_long} instructions, not more than the short "
                         f"run's {sim_short}")
    return (host_long - host_short) / (sim_long - sim_short)


def parse_override(text: str) -> str:
    """A `--set` argument: KEY=VALUE with a non-empty key (smtlab itself checks that the key exists and the value)."""
    key, sep, _ = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"not KEY=VALUE: {text!r} (example: --set core.wrong_path=true)")
    return text


def _load_fileio():
    """smtlab's own atomic writer (python/smtlab/fileio.py), loaded by its path: bench.py times any smtlab binary, an
    old build's too, and imports nothing of the package (whose compiled module may be another build's or missing);
    fileio.py needs only the standard library. One rule for every output smtlab writes: a temporary file beside the
    target, renamed when complete; only a regular file is replaced, and it keeps its permission bits; a symbolic link
    is written where it points."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "python" / "smtlab" / "fileio.py"
    spec = importlib.util.spec_from_file_location("_smtlab_fileio_for_bench", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_fileio = _load_fileio()


def check_destination(path: Path, what: str = "output") -> None:
    """BenchError naming `path` and the reason when `write_atomically` could not write it (smtlab.fileio's rule,
    except that missing folders are created): call it before a long run."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent  # write_atomically creates the missing folders below it
    try:
        if existing != folder:  # the folder will be made: only what lies above it can be checked now
            if not existing.is_dir():
                raise ValueError(f"cannot write {what} '{path}': '{existing}' is not a directory")
            if not os.access(existing, os.W_OK | os.X_OK):
                raise ValueError(f"cannot write {what} '{path}': directory '{existing}' is not writable")
            if len(os.fsencode(path.name)) > 255:
                raise ValueError(f"cannot write {what} '{path}': the file name is {len(os.fsencode(path.name))} "
                                 "bytes long, over the limit of 255")
        else:
            _fileio.check_output_path(path, what)
    except ValueError as e:
        raise BenchError(str(e)) from None


def write_atomically(path: Path, text: str, what: str = "output") -> None:
    """Writes `text` to `path` through a temporary file in the same folder, renamed when complete (smtlab.fileio),
    making missing folders first. BenchError for a destination that cannot be written."""
    path = Path(path)
    check_destination(path, what)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with _fileio.atomic_path(path, what) as tmp:
            with open(tmp, "w", newline="") as out:  # csv's own line ends are kept as written
                out.write(text)
    except ValueError as e:
        raise BenchError(str(e)) from None


@contextlib.contextmanager
def sigterm_as_exit():
    """Turns SIGTERM into SystemExit(143) while the block runs, so that `with` blocks (temporary folders) and
    subprocess.run (which kills its child) clean up as on Ctrl-C. Does nothing outside the main thread."""
    def handler(signum, frame):
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def host_info() -> dict:
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host": platform.node(), "cpus": os.cpu_count(),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def workloads(args, binary: Path, log) -> list[tuple[str, list[str]]]:
    """The rows to run: the generators, then one- and two-copy rows of each real program traced here."""
    rows = list(GENERATORS)
    if not args.no_programs:
        cache = args.trace_dir or programs.default_cache(binary)
        names = None if args.only is None else [args.only]
        for name, (a, b) in programs.ensure_traces(binary, cache, log=log, names=names).items():
            rows += [(name, [str(a)]), (name, [str(a), str(b)])]
    return [w for w in rows if args.only in (None, w[0])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", nargs="?", type=Path, default=REPO / "build" / "smtlab",
                        help="the smtlab program (default: build/smtlab)")
    parser.add_argument("-n", "--max-instructions", type=parse_count, default=5_000_000, metavar="N",
                        help="passed to `smtlab run --max-instructions` (default 5M; instructions per thread)")
    parser.add_argument("-c", "--config", default="netburst", metavar="PRESETS",
                        help="machine preset(s), comma-separated (default netburst; e.g. netburst,broadwell)")
    parser.add_argument("-r", "--repeat", type=int, default=3, metavar="R",
                        help="run each workload R times and keep the fastest (default 3)")
    parser.add_argument("--only", metavar="NAME", help="run only the workloads of this name (mix, chase64m, or a "
                                                       "program: " + ", ".join(p.name for p in programs.PROGRAMS) + ")")
    parser.add_argument("--no-programs", action="store_true", help="generators only; do not trace real programs")
    parser.add_argument("--trace-dir", type=Path, help="cache of the real programs' traces (default: $SMTLAB_BENCH_"
                                                       "TRACES, else bench-traces/ beside the smtlab program)")
    parser.add_argument("--json", default=str(REPO / "bench" / "results.json"), metavar="FILE",
                        help="write the rows and the run's host facts as JSON (default bench/results.json)")
    parser.add_argument("--csv", nargs="?", const=str(REPO / "bench" / "results.csv"), metavar="FILE",
                        help="also write the rows as CSV (default file: bench/results.csv)")
    parser.add_argument("--check", action="store_true", help="exit with status 1 if a row is below its target")
    parser.add_argument("--modes", default=",".join(MODES), metavar="MODES",
                        help="simulation modes to time, comma-separated, of " + ", ".join(MODES) + " (default all); "
                             "functional and sampled get a second table of their speed against detailed's "
                             "(docs/sampling.md); not with --against or --callgrind, which time detailed only")
    parser.add_argument("--set", dest="overrides", action="append", type=parse_override, default=[],
                        metavar="KEY=VALUE", help="override a config key over every preset, as `smtlab run --set` "
                                                  "(repeatable; e.g. --set core.wrong_path=true)")
    parser.add_argument("--against", type=Path, metavar="BASELINE",
                        help="another smtlab program (an older commit's build, say): each row runs the two in turn, "
                             "R times each, and prints the baseline's speed, the change and whether both simulated "
                             "the same cycles and instructions")
    parser.add_argument("--callgrind", action="store_true",
                        help="instead of timing, count host instructions per simulated instruction under valgrind "
                             "(two runs per row, of N/5 and N instructions per thread; use a small N such as 1M)")
    args = parser.parse_args(argv)

    binary = args.binary
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        print(f"bench: {binary} is not an executable; run `make build` or pass the smtlab path", file=sys.stderr)
        return 2
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    unknown = [m for m in args.modes.split(",") if m and m not in MODES]
    if unknown:
        parser.error(f"--modes: unknown mode(s) {', '.join(unknown)} (known: {', '.join(MODES)})")
    baseline = args.against
    if baseline is not None:
        if not (baseline.is_file() and os.access(baseline, os.X_OK)):
            print(f"bench: --against {baseline} is not an executable", file=sys.stderr)
            return 2
    if args.callgrind and not shutil.which("valgrind"):
        print("bench: --callgrind needs valgrind (Debian: valgrind)", file=sys.stderr)
        return 2
    configs = [c for c in args.config.split(",") if c]
    known = sorted({w[0] for w in GENERATORS} | {p.name for p in programs.PROGRAMS})
    if args.only is not None and args.only not in known:
        parser.error(f"--only {args.only}: no such workload (known: {', '.join(known)})")
    if args.no_programs and args.only in {p.name for p in programs.PROGRAMS}:
        parser.error(f"--only {args.only} is a real program but --no-programs runs the generators only "
                     f"({', '.join(sorted({w[0] for w in GENERATORS}))}): drop one of the two")
    try:  # a bad destination is reported now, not after the whole bench has run
        check_destination(Path(args.json), "--json")
        if args.csv:
            check_destination(Path(args.csv), "--csv")
    except BenchError as err:
        print(f"bench: {err}", file=sys.stderr)
        return 2
    with sigterm_as_exit():
        return _bench(args, binary, baseline, configs)


def mode_row(detailed: dict, mode: str, results: list[dict]) -> dict:
    """A row of the modes table: the fastest of `results` (sampled runs' JSON) against the detailed row's speed, and
    the first CPU's sampled IPC with its interval against the detailed run's IPC of that CPU."""
    best = max(results, key=lambda d: speed(d)["mips"])
    fast = speed(best)
    cpu = best["logical_cpus"][0]
    sampling = best.get("sampling", {})
    detailed_ipc = detailed.get("ipc0")
    return {"config": detailed["config"], "workload": detailed["workload"], "threads": detailed["threads"],
            "mode": mode, "mips": fast["mips"], "host_seconds": fast["host_seconds"],
            "speedup": fast["mips"] / detailed["mips"] if detailed.get("mips") else None,
            "ipc": cpu.get("ipc"), "ipc_ci95": cpu.get("ipc_ci95"), "detailed_ipc": detailed_ipc,
            "windows": sampling.get("windows"),
            "detailed_fraction": (sampling["detailed_instructions"] / max(1, sampling["detailed_instructions"] +
                                                                           sampling["functional_instructions"]))
            if sampling else None}


def print_mode_table(rows: list[dict], mode_rows: list[dict]) -> None:
    """The functional and sampled modes against the detailed one, row by row."""
    print()
    header = (f"{'config':<10} {'workload':<10} {'threads':>7} {'mode':<10} {'M instr/s':>10} {'x detailed':>10} "
              f"{'in detail':>9}  {'IPC cpu 0':>9} {'+- 95%':>7} {'detailed':>8}")
    print(header)
    print("-" * len(header))
    for r in mode_rows:
        ipc = "n/a" if r["ipc"] is None else f"{r['ipc']:.3f}"
        ci = "n/a" if r["ipc_ci95"] is None else f"{r['ipc_ci95']:.3f}"
        det = "n/a" if r["detailed_ipc"] is None else f"{r['detailed_ipc']:.3f}"
        frac = "n/a" if r["detailed_fraction"] is None else f"{100 * r['detailed_fraction']:.1f} %"
        up = "n/a" if r["speedup"] is None else f"{r['speedup']:.1f}"
        print(f"{r['config']:<10} {r['workload']:<10} {r['threads']:>7} {r['mode']:<10} {r['mips']:>10.2f} {up:>10} "
              f"{frac:>9}  {ipc:>9} {ci:>7} {det:>8}", flush=True)


def _bench(args, binary: Path, baseline: Path | None, configs: list[str]) -> int:
    """Runs the rows and writes the files (main, after the arguments are checked)."""

    def log(line: str) -> None:
        print(line, flush=True)

    rows_to_run = workloads(args, binary, log)
    info = host_info()
    mode = "callgrind" if args.callgrind else f"best of {args.repeat}"
    sets = "".join(f" --set {o}" for o in args.overrides)
    against = "" if baseline is None else f" against {baseline}" + ("" if args.callgrind else " (runs alternate)")
    print(f"smtlab speed: {binary}{against}{sets}, --max-instructions {args.max_instructions} per thread, {mode}; "
          f"load average {' '.join(map(str, info['load_average']))} on {info['cpus']} CPUs")
    if args.callgrind:
        header = f"{'config':<10} {'workload':<10} {'threads':>7} {'sim. instr':>13} {'host instr / sim. instr':>24}"
        if baseline is not None:
            header += f"  {'baseline':>8} {'change':>7}"
    else:
        header = (f"{'config':<10} {'workload':<10} {'threads':>7} {'instructions':>13} {'cycles':>13} "
                  f"{'IPC':>6} {'host s':>8} {'M instr/s':>10} {'M/CPU-s':>8}  target")
        header = f"{header:<{TIMING_WIDTH}}" if baseline is not None else header
        if baseline is not None:
            header += f"  {'base M/s':>8} {'change':>7}  same statistics"
    print(header)
    print("-" * len(header))
    rows = []
    mode_rows = []
    below = 0
    modes = [m for m in args.modes.split(",") if m] if baseline is None and not args.callgrind else ["detailed"]
    with tempfile.TemporaryDirectory(prefix="smtlab-bench-") as tmp:
        for config in configs:
            for name, specs in rows_to_run:
                threads = len(specs)
                json_path = Path(tmp) / "run.json"
                row = {"config": config, "workload": name, "threads": threads, "specs": " ".join(specs),
                       "overrides": " ".join(args.overrides), "max_instructions": args.max_instructions}
                try:
                    if args.callgrind:
                        cost, simulated, cycles = callgrind_cost(binary, config, specs, args.max_instructions,
                                                                 json_path, args.overrides)
                        row.update({"instructions": simulated, "host_instructions_per_instruction": cost})
                        line = f"{config:<10} {name:<10} {threads:>7} {simulated:>13,} {cost:>24.0f}"
                        if baseline is not None:
                            # Fewer host instructions is faster: the change is the baseline's cost over this one's.
                            base_cost, base_simulated, base_cycles = callgrind_cost(
                                baseline, config, specs, args.max_instructions, json_path, args.overrides)
                            change = (base_cost / cost - 1.0) * 100.0 if cost > 0 else float("inf")
                            row.update({"baseline_host_instructions_per_instruction": base_cost,
                                        "change_percent": change,
                                        "same_statistics": (base_simulated, base_cycles) == (simulated, cycles)})
                            line += f"  {base_cost:>8.0f} {change:>+6.1f}%"
                        print(line, flush=True)
                        rows.append(row)
                        continue
                    # With a baseline the two programs take turns, so that a host that speeds up or slows down
                    # during the bench (it does: README, "Speed") moves both alike.
                    runs, base_runs = [], []
                    for _ in range(args.repeat):
                        if baseline is not None:
                            base_runs.append(speed(run_json(baseline, config, specs, args.max_instructions, json_path,
                                                            overrides=args.overrides)))
                        runs.append(speed(run_json(binary, config, specs, args.max_instructions, json_path,
                                                   overrides=args.overrides)))
                except (BenchError, OSError, ValueError, KeyError) as err:
                    print(f"bench: {err}", file=sys.stderr)
                    return 1
                best = max(runs, key=lambda r: r["mips"])
                target = TARGET_MIPS.get(threads)
                met = target is None or best["mips"] >= target
                below += not met
                verdict = "" if target is None else f">= {target:g} " + ("ok" if met else "BELOW")
                ipc = best["instructions"] / best["cycles"] if best["cycles"] else 0.0
                row["ipc0"] = best.get("ipc0")
                best_cpu = max((r["mips_cpu"] or 0.0) for r in runs)
                line = (f"{config:<10} {name:<10} {threads:>7} {best['instructions']:>13,} {best['cycles']:>13,} "
                        f"{ipc:>6.3f} {best['host_seconds']:>8.3f} {best['mips']:>10.2f} {best_cpu:>8.2f}  {verdict}")
                if baseline is not None:
                    versus = compare(max(base_runs, key=lambda r: r["mips"]), best)
                    row.update(versus)
                    row["baseline_all_mips"] = [round(r["mips"], 4) for r in base_runs]
                    line = (f"{line:<{TIMING_WIDTH}}  {versus['baseline_mips']:>8.2f} {versus['change_percent']:>+6.1f}%  "
                            f"{'yes' if versus['same_statistics'] else 'NO'}")
                print(line, flush=True)
                row.update(best)
                row.update({"all_mips": [round(r["mips"], 4) for r in runs], "best_mips_cpu": best_cpu,
                            "target_mips": target})
                rows.append(row)
                for mode in modes:
                    if mode == "detailed":
                        continue
                    try:
                        results = [run_json(binary, config, specs, args.max_instructions, json_path,
                                            overrides=args.overrides, mode=mode) for _ in range(args.repeat)]
                    except (BenchError, OSError, ValueError, KeyError) as err:
                        print(f"bench: {err}", file=sys.stderr)
                        return 1
                    mode_rows.append(mode_row(row, mode, results))
    if mode_rows:
        print_mode_table(rows, mode_rows)

    info["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(f"load average after: {' '.join(map(str, info['load_average_after']))}")
    if not rows:
        program = args.only in {p.name for p in programs.PROGRAMS}
        why = f": --only {args.only} is a real program whose traces are not available here" if program else ""
        print(f"bench: no rows were run{why}", file=sys.stderr)
        return 1
    document = {"binary": str(binary), "baseline": None if baseline is None else str(baseline), "mode": mode,
                "overrides": args.overrides, **info, "rows": rows, "mode_rows": mode_rows}
    try:
        write_atomically(Path(args.json), json.dumps(document, indent=1) + "\n", "--json")
        print(f"wrote {args.json}")
        if args.csv:
            out = io.StringIO()
            fields = ["date", "host", *dict.fromkeys(k for r in rows for k in r if k != "all_mips")]
            writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore")
            writer.writeheader()
            for row in rows:
                writer.writerow({"date": info["date"], "host": info["host"], **row})
            write_atomically(Path(args.csv), out.getvalue(), "--csv")
            print(f"wrote {args.csv}")
    except (BenchError, OSError) as err:
        print(f"bench: {err}", file=sys.stderr)
        return 1
    return 1 if args.check and below else 0


if __name__ == "__main__":
    sys.exit(main())
