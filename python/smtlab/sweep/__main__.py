"""`python -m smtlab.sweep FILE.toml` (what `smtlab sweep` runs): a sweep file on local processes or a Dask cluster."""

from __future__ import annotations

import argparse
import sys

import smtlab

from ..workers import Stopped, stop_on_signals
from .execute import WORKERS_PER_CPU, check_workers, run_sweep
from .file import load_sweep_file
from .spec import MAX_RUNS, SweepError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="smtlab sweep",
        description="Run a parameter sweep described in a TOML file (docs/sweeps.md). Finished runs in the output "
        "folder are skipped, so rerunning the same command resumes an interrupted sweep.",
    )
    ap.add_argument("file", help="sweep file (TOML)")
    ap.add_argument("-o", "--output", help="result folder (default: the file's `output`, else ./<name>-results)")
    ap.add_argument("--workers", type=int, help="local worker processes (default: all cores; never more than the "
                    f"runs to do; more than {WORKERS_PER_CPU} per CPU of the host is refused)")
    ap.add_argument("--scheduler", metavar="ADDRESS", help="run on a Dask cluster: scheduler address (tcp://host:8786)")
    ap.add_argument("--format", choices=("parquet", "csv"), help="table format (default: the file's, else parquet)")
    ap.add_argument("--dry-run", action="store_true", help="validate the sweep and print how many runs it has")
    ap.add_argument("--no-retry-failed", action="store_true", help="keep runs stored as failed instead of rerunning")
    ap.add_argument("--max-runs", type=int, default=MAX_RUNS, metavar="N", help="refuse a sweep of more than N runs "
                    f"(points x workloads x seeds), counted before anything is built (default {MAX_RUNS:,})")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    try:
        check_workers(args.workers, "--workers")
    except SweepError as e:
        ap.error(str(e))
    if args.max_runs < 1:
        ap.error(f"--max-runs must be at least 1, got {args.max_runs}")

    try:
        sweep, options = load_sweep_file(args.file, max_runs=args.max_runs)
        if args.dry_run:
            runs, baselines = sweep.expand()
            print(f"{sweep.name}: {len(sweep.points)} points x {len(sweep.workloads)} workloads x "
                  f"{len(sweep.seeds)} seeds = {len(runs)} runs, {len(baselines)} single-thread baselines; OK")
            return 0
        out = args.output or options["output"] or f"{sweep.name}-results"
        with stop_on_signals():
            result = run_sweep(sweep, out, workers=args.workers, scheduler=args.scheduler, progress=not args.quiet,
                               retry_failed=not args.no_retry_failed, fmt=args.format or options["format"])
    except smtlab.Error as e:
        print(f"smtlab sweep: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("smtlab sweep: interrupted; finished runs are stored, rerun to resume", file=sys.stderr)
        return 130
    except Stopped as e:
        print(f"smtlab sweep: {e}; finished runs are stored, rerun to resume", file=sys.stderr)
        return e.exit_status
    table = result.table
    failed = table[table["status"] != "ok"]
    fmt = args.format or options["format"]
    ok = len(table) - len(failed)
    print(f"{sweep.name}: {len(table)} runs, {ok} ok, {len(failed)} failed -> {out}/results.{fmt}")
    for _, row in failed.iterrows():
        print(f"  failed: run {row['run']} ({row['workload']}): {row['error']}", file=sys.stderr)
    return 1 if len(failed) else 0


if __name__ == "__main__":
    sys.exit(main())
